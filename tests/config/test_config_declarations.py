"""A config file's declarations are checked against the app like those written in code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import ConfigError, Lattice
from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse

RULES = """
[[policy]]
use = "adk_lattice.policy:ToolGuard"
args = {{ rules = {{ {tool} = {{ agents = ["desk"] }} }} }}

[[policy]]
use = "adk_lattice.policy:CallLimits"
args = {{ per_tool = {{ {tool} = 3 }} }}
"""


def _file(tmp_path: Path, tool: str, lattice: str = "") -> Path:
    path = tmp_path / "lattice.toml"
    path.write_text(lattice + RULES.format(tool=tool), encoding="utf-8")
    return path


def _app(lattice: Lattice) -> tuple[LatticeRunner, list[str]]:
    sent: list[str] = []

    def send_email(to: str, body: str) -> dict[str, str]:
        """Send an email."""
        sent.append(to)
        return {"status": "sent"}

    model = FakeModel(
        [
            ScriptedResponse.call("send_email", to="x@outside.example", body="the ledger"),
            ScriptedResponse.text("Sent."),
        ]
    )
    agent = LlmAgent(name="desk", model=model, tools=[send_email])
    return LatticeRunner(agent, lattice=lattice), sent


async def test_a_misspelt_tool_in_a_toml_file_refuses_the_run(tmp_path: Path) -> None:
    """``send_mial`` in the file refuses the run: nothing is sent, and the reply names each
    handler and ``send_email``."""
    runner, sent = _app(Lattice.from_config(_file(tmp_path, "send_mial")))
    texts = runner.texts(await runner.run("mail the ledger out"))
    assert sent == []
    assert "ToolGuard: names the tool 'send_mial'" in texts[0]
    assert "CallLimits: names the tool 'send_mial'" in texts[0]
    assert "nearest real name is 'send_email'" in texts[0]


async def test_the_right_tool_in_a_toml_file_runs(tmp_path: Path) -> None:
    """The same file with the real name lets the call through."""
    runner, sent = _app(Lattice.from_config(_file(tmp_path, "send_email")))
    await runner.run("mail the ledger out")
    assert sent == ["x@outside.example"]


async def test_dynamic_tools_in_the_lattice_table_are_accepted(tmp_path: Path) -> None:
    """``[lattice] dynamic_tools`` names tools that appear only at run time: not refused."""
    path = _file(tmp_path, "added_later", '[lattice]\ndynamic_tools = ["added_later"]\n')
    runner, sent = _app(Lattice.from_config(path))
    await runner.run("mail the ledger out")
    assert sent == ["x@outside.example"]


@pytest.mark.parametrize("value", ['"added_later"', "[1]"])
def test_dynamic_tools_must_be_a_list_of_names(tmp_path: Path, value: Any) -> None:
    """A ``dynamic_tools`` that is not a list of names is a finding naming the key."""
    path = _file(tmp_path, "send_email", f"[lattice]\ndynamic_tools = {value}\n")
    with pytest.raises(ConfigError, match=r"\[lattice\] dynamic_tools.*a list of tool names"):
        Lattice.from_config(path, on_config_error="raise")
