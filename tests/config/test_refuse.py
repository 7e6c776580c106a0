"""A config file that does not build: the lattice refuses every run, raises, or runs open."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import ConfigError, Lattice
from adk_lattice.testing import (
    FakeModel,
    LatticeRunner,
    ScriptedResponse,
    function_tool,
    tool_context,
)

TYPO = '[[policy]]\nuse = "adk_lattice.policy:RequiredState"\nargs = { key = "user:ok" }\n'


def _bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(TYPO, encoding="utf-8")
    return path


def _app(lattice: Lattice) -> tuple[LatticeRunner, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def send_email(to: str, body: str) -> dict[str, str]:
        """Send an email."""
        sent.append({"to": to, "body": body})
        return {"status": "sent"}

    model = FakeModel(
        [
            ScriptedResponse.call("send_email", to="x@outside.example", body="the ledger"),
            ScriptedResponse.text("Sent."),
        ]
    )
    agent = LlmAgent(name="desk", model=model, tools=[send_email])
    return LatticeRunner(agent, lattice=lattice), sent


async def test_a_lattice_from_a_broken_env_file_refuses_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Lattice(name=...)`` over a broken ``ADK_LATTICE_CONFIG`` loads and the tool never runs."""
    monkeypatch.setenv("ADK_LATTICE_CONFIG", str(_bad(tmp_path)))
    runner, sent = _app(Lattice(name="adk_lattice.Lattice"))
    events = await runner.run("mail the ledger out")
    assert sent == []
    (text,) = runner.texts(events)
    assert "refused" in text and "bad.toml" in text and "1 problem(s)" in text


async def test_a_file_nested_past_the_parsers_limit_refuses_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of arrays nested 50,000 deep refuses every run instead of raising
    RecursionError from the constructor (a server would then run the app without it)."""
    path = tmp_path / "deep.toml"
    path.write_text("[lattice]\nname = " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    monkeypatch.setenv("ADK_LATTICE_CONFIG", str(path))
    runner, sent = _app(Lattice(name="adk_lattice.Lattice"))
    events = await runner.run("mail the ledger out")
    assert sent == []
    (text,) = runner.texts(events)
    assert "refused" in text and "deep.toml" in text


async def test_from_config_on_a_broken_file_refuses_the_run(tmp_path: Path) -> None:
    """``Lattice.from_config`` on a broken file refuses by default: the tool never runs."""
    runner, sent = _app(Lattice.from_config(_bad(tmp_path)))
    await runner.run("mail the ledger out")
    assert sent == []


async def test_each_refused_run_logs_file_table_and_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused run logs at ERROR the file, the table and the key, with the did-you-mean."""
    path = _bad(tmp_path)
    runner, _ = _app(Lattice(config=path))
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        await runner.run("mail the ledger out")
    (record,) = [r for r in caplog.records if "before_run refused" in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert f"{path}: [[policy]] #1 (adk_lattice.policy:RequiredState) use" in record.getMessage()


def test_construction_logs_the_findings(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Building a refusing lattice logs its findings at ERROR once, before any run."""
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        Lattice(config=_bad(tmp_path))
    (record,) = caplog.records
    assert "at construction" in record.getMessage()
    assert "RequiredState" in record.getMessage()


def test_raise_is_chosen_in_code(tmp_path: Path) -> None:
    """``on_config_error="raise"`` raises ConfigError at construction."""
    with pytest.raises(ConfigError, match="RequiredState"):
        Lattice(config=_bad(tmp_path), on_config_error="raise")


async def test_open_is_an_explicit_choice_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``ADK_LATTICE_ON_CONFIG_ERROR=open`` runs the app without the file's handlers, loudly."""
    monkeypatch.setenv("ADK_LATTICE_CONFIG", str(_bad(tmp_path)))
    monkeypatch.setenv("ADK_LATTICE_ON_CONFIG_ERROR", "open")
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        runner, sent = _app(Lattice(name="adk_lattice.Lattice"))
    assert "running WITHOUT its handlers" in caplog.text
    await runner.run("mail the ledger out")
    assert sent == [{"to": "x@outside.example", "body": "the ledger"}]


async def test_an_unknown_environment_mode_still_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelt ``ADK_LATTICE_ON_CONFIG_ERROR`` value refuses: only ``open`` opens."""
    monkeypatch.setenv("ADK_LATTICE_ON_CONFIG_ERROR", "opne")
    runner, sent = _app(Lattice(config=_bad(tmp_path)))
    await runner.run("mail the ledger out")
    assert sent == []


def test_an_unknown_mode_in_code_is_a_construction_error(tmp_path: Path) -> None:
    """``on_config_error`` outside refuse/raise/open fails at construction, naming them."""
    with pytest.raises(ValueError, match="refuse, raise, open"):
        Lattice(config=_bad(tmp_path), on_config_error="opne")  # type: ignore[arg-type]


def send_email(to: str) -> dict[str, str]:
    """Send an email."""
    return {"to": to}


async def test_a_refusing_lattice_denies_a_tool_call_reaching_it(tmp_path: Path) -> None:
    """``before_tool`` of a refusing lattice returns a denial with code ``config_error``."""
    lattice = Lattice(config=_bad(tmp_path))
    result = await lattice.before_tool_callback(
        tool=function_tool(send_email), tool_args={"to": "x"}, tool_context=tool_context()
    )
    assert result is not None and result["status"] == "denied"
    assert result["code"] == "config_error"
