"""Relative paths in a config file resolve from the file's folder, not the working folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import ConfigError, Lattice
from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse


def _config(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "conf"
    folder.mkdir()
    path = folder / "lattice.toml"
    path.write_text(text, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return path


async def _one_run(lattice: Lattice) -> None:
    model = FakeModel([ScriptedResponse.text("Hello.")])
    runner = LatticeRunner(LlmAgent(name="desk", model=model), lattice=lattice)
    await runner.run("hi")
    await runner.runner.close()


async def test_an_audit_file_is_written_beside_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sinks = "audit.jsonl"`` writes to the config file's folder, wherever the app runs."""
    path = _config(
        tmp_path,
        '[[telemetry]]\nuse = "adk_lattice.telemetry:AuditLog"\nargs = { sinks = "audit.jsonl" }\n',
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    await _one_run(Lattice.from_config(path, on_config_error="raise"))
    (line,) = (tmp_path / "conf" / "audit.jsonl").read_text().splitlines()
    assert json.loads(line)["outcome"] == "completed"
    assert not (tmp_path / "elsewhere" / "audit.jsonl").exists()


async def test_each_audit_file_of_a_list_and_an_absolute_path_resolve_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a list, a relative sink resolves from the config's folder, an absolute one stays."""
    absolute = tmp_path / "abs.jsonl"
    path = _config(
        tmp_path,
        '[[telemetry]]\nuse = "adk_lattice.telemetry:AuditLog"\n'
        f'args = {{ sinks = ["audit.jsonl", "{absolute.as_posix()}"] }}\n',
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    await _one_run(Lattice.from_config(path, on_config_error="raise"))
    assert len((tmp_path / "conf" / "audit.jsonl").read_text().splitlines()) == 1
    assert len(absolute.read_text().splitlines()) == 1


async def test_a_sqlite_store_path_resolves_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[stores.NAME] path = "cache.db"`` opens the database beside the config file."""
    path = _config(
        tmp_path,
        '[stores.db]\ntype = "sqlite"\npath = "cache.db"\n'
        '[[cache]]\nuse = "adk_lattice.cache:ResponseCache"\nargs = { store = "@stores.db" }\n',
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    await _one_run(Lattice.from_config(path, on_config_error="raise"))
    assert (tmp_path / "conf" / "cache.db").exists()
    assert not (tmp_path / "elsewhere" / "cache.db").exists()


def test_an_audit_file_in_a_missing_folder_fails_when_the_config_loads(tmp_path: Path) -> None:
    """A config naming ``logs/audit.jsonl`` with no logs folder fails at load, naming it."""
    path = _config(
        tmp_path,
        '[[telemetry]]\nuse = "adk_lattice.telemetry:AuditLog"\n'
        'args = { sinks = "logs/audit.jsonl" }\n',
    )
    with pytest.raises(ConfigError, match="does not exist; create it"):
        Lattice.from_config(path, on_config_error="raise")
