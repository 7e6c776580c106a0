"""AuditLog(background=True): records written by a worker thread, none lost."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from _telemetry_support import agent, run
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.telemetry import AuditLog, JsonlSink
from adk_lattice.testing import FakeModel, ScriptedResponse


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


async def _turns(audit: AuditLog, n: int) -> None:
    lattice = Lattice(telemetry=[audit])
    for _ in range(n):
        await run(agent("a", ScriptedResponse.text("hi")), lattice)


async def test_background_records_are_all_in_the_file_after_flush(tmp_path: Path) -> None:
    """flush() waits until every queued record is a whole line in the JSON Lines file."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, background=True, flush_interval=30.0)
    await _turns(audit, 3)
    await audit.flush()
    records = _lines(path)
    assert [r["outcome"] for r in records] == ["completed"] * 3
    assert len({r["invocation_id"] for r in records}) == 3
    await audit.close()


async def test_background_close_writes_what_is_queued(tmp_path: Path) -> None:
    """close() writes the records still waiting for the worker before closing the file."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, background=True, flush_interval=30.0)
    await _turns(audit, 2)
    await audit.close()
    assert len(_lines(path)) == 2


async def test_background_records_are_written_on_the_timer(tmp_path: Path) -> None:
    """Without flush or close, the worker writes a batch once its flush interval passes."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, background=True, flush_interval=0.01)
    await _turns(audit, 1)
    written = threading.Event()
    for _ in range(500):
        if _lines(path):
            written.set()
            break
        written.wait(0.01)
    assert written.is_set()
    await audit.close()


async def test_background_writes_on_another_thread(tmp_path: Path) -> None:
    """The sink is called on the worker thread, not on the thread running the turn."""
    threads: list[int] = []
    audit = AuditLog(lambda record: threads.append(threading.get_ident()), background=True)
    await _turns(audit, 1)
    await audit.flush()
    assert threads and threads[0] != threading.get_ident()
    await audit.close()


async def test_full_queue_counts_and_logs_the_record(caplog: pytest.LogCaptureFixture) -> None:
    """A record the full queue turns away is counted in dropped and logged with it attached."""
    release = threading.Event()
    got: list[dict[str, Any]] = []

    def slow(record: dict[str, Any]) -> None:
        release.wait(10)
        got.append(record)

    audit = AuditLog(slow, background=True, max_pending=1, flush_interval=0.0)
    root = LlmAgent(name="a", model=FakeModel([ScriptedResponse.text("hi")], loop=True))
    app = App(name="app", root_agent=root, plugins=[Lattice(telemetry=[audit])])
    runner = Runner(app=app, session_service=InMemorySessionService())
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        for _ in range(4):  # the runner is not closed: nothing drains the queue meanwhile
            session = await runner.session_service.create_session(app_name="app", user_id="u")
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                pass
    release.set()
    await audit.close()
    lost = [r for r in caplog.records if "audit queue" in r.getMessage()]
    assert audit.dropped == len(lost) >= 1
    assert len(got) + audit.dropped == 4
    assert {r.audit["invocation_id"] for r in lost}.isdisjoint(  # type: ignore[attr-defined]
        r["invocation_id"] for r in got
    )


async def test_failing_background_sink_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A sink raising on the worker is counted in sink_errors; the record rides on the log."""

    def broken(record: dict[str, Any]) -> None:
        raise RuntimeError("disk gone")

    audit = AuditLog(broken, background=True)
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        await _turns(audit, 1)
        await audit.flush()
    assert sum(audit.sink_errors.values()) == 1
    (entry,) = [r for r in caplog.records if "audit sink" in r.getMessage()]
    assert entry.audit["outcome"] == "completed"  # type: ignore[attr-defined]
    await audit.close()


def test_background_refuses_an_async_sink() -> None:
    """An async sink with background=True fails at construction, naming the fix."""

    async def sink(record: dict[str, Any]) -> None:
        return None

    with pytest.raises(TypeError, match="background=False"):
        AuditLog(sink, background=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"max_pending": 0}, "max_pending"), ({"flush_interval": -1.0}, "flush_interval")],
)
def test_background_refuses_bad_limits(kwargs: dict[str, Any], message: str) -> None:
    """A queue of no room or a negative interval fails at construction."""
    with pytest.raises(ValueError, match=message):
        AuditLog([], background=True, **kwargs)


def test_write_many_appends_whole_lines_in_order(tmp_path: Path) -> None:
    """JsonlSink.write_many appends each record as one line, in order."""
    sink = JsonlSink(tmp_path / "a.jsonl")
    sink({"n": 0})
    sink.write_many([{"n": 1}, {"n": 2}])
    sink.close()
    assert [r["n"] for r in _lines(tmp_path / "a.jsonl")] == [0, 1, 2]
