"""Audit sinks that fail (read-only directory, full disk, a raising callable): no turn fails,
every failure is counted and logged with the record, and the file keeps only whole lines."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice.telemetry import AuditLog, JsonlSink
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app

S = ScriptedResponse


@contextlib.contextmanager
def _tmpfs(path: Path, options: str) -> Iterator[bool]:
    """Mount a tmpfs on ``path`` (root only); yields False when it cannot be mounted."""
    path.mkdir()
    if os.geteuid() != 0:
        yield False
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    try:
        yield done.returncode == 0
    finally:
        if done.returncode == 0:
            subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.fixture
def readonly_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody can create files in: a read-only tmpfs as root, else mode 0o500."""
    target = tmp_path / "ro"
    with _tmpfs(target, "ro,size=64k") as mounted:
        if not mounted:
            target.chmod(0o500)
            if os.access(target, os.W_OK):
                pytest.skip("cannot make a directory unwritable here")
        yield target
        if not mounted:
            target.chmod(0o700)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path | None]:
    """An 8 KiB tmpfs directory (root only), or None where /dev/full must stand in."""
    target = tmp_path / "tiny"
    with _tmpfs(target, "size=8k") as mounted:
        yield target if mounted else None


def _agent(n: int) -> LlmAgent:
    return LlmAgent(name="root", model=FakeModel([S.text(f"answer {i}") for i in range(n)]))


async def _turns(audit: AuditLog, n: int) -> list[str]:
    agent, lattice = _agent(n), Lattice(telemetry=[audit])
    answers: list[str] = []
    for i in range(n):
        turn = await run_app(agent, lattice, f"question {i}")
        answers.append(turn.texts[-1])
    await audit.close()
    return answers


def _logged(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The records attached to the audit-sink failure entries in the log."""
    return [r.audit for r in caplog.records if r.levelno == logging.ERROR and hasattr(r, "audit")]


async def test_a_read_only_directory_fails_no_turn(
    readonly_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A JSONL path nobody can create: turns answer, each record is counted and logged."""
    kept: list[dict[str, Any]] = []
    audit = AuditLog([readonly_dir / "audit.jsonl", kept.append])
    answers = await _turns(audit, 3)
    assert answers == ["answer 0", "answer 1", "answer 2"]
    assert dict(audit.sink_errors) == {"jsonl:audit.jsonl": 3}
    assert _logged(caplog) == kept  # the lost records are in the log, whole


async def test_a_full_disk_loses_no_record_without_a_trace(
    tiny_fs: Path | None, caplog: pytest.LogCaptureFixture
) -> None:
    """Past a full disk every record is either a whole line in the file or in the log."""
    kept: list[dict[str, Any]] = []
    path = tiny_fs / "audit.jsonl" if tiny_fs is not None else Path("/dev/full")
    audit = AuditLog([path, kept.append])
    answers = await _turns(audit, 30)
    assert len(answers) == 30 and len(kept) == 30
    assert audit.sink_errors[f"jsonl:{path.name}"] >= 1
    written = [] if tiny_fs is None else [json.loads(x) for x in path.read_text().splitlines()]
    assert written + _logged(caplog) == kept


async def test_a_record_after_space_is_freed_is_a_whole_line(tiny_fs: Path | None) -> None:
    """A write cut short by a full disk leaves no fragment: the next record reads whole."""
    if tiny_fs is None:
        pytest.skip("needs a tmpfs (root)")
    filler = tiny_fs / "filler"
    filler.write_bytes(b"x" * 4096)  # one of the two pages
    path = tiny_fs / "audit.jsonl"
    sink = JsonlSink(path)
    with pytest.raises(OSError, match="short write"):
        sink({"invocation_id": "a", "pad": "y" * 6000})
    filler.unlink()
    sink({"invocation_id": "b"})
    sink.close()
    assert [json.loads(x)["invocation_id"] for x in path.read_text().splitlines()] == ["b"]


async def test_a_raising_async_sink_fails_no_turn_and_logs_the_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An async callable sink that raises: the turn answers; the log holds the record."""
    kept: list[dict[str, Any]] = []

    async def broken(record: dict[str, Any]) -> None:
        raise RuntimeError("sink down")

    audit = AuditLog([broken, kept.append])
    assert await _turns(audit, 1) == ["answer 0"]
    assert sum(audit.sink_errors.values()) == 1
    assert _logged(caplog) == kept and kept[0]["outcome"] == "completed"
