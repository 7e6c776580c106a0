"""AuditLog on real Runners: exactly one record per invocation, whatever ended it."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _telemetry_support import (
    PII,
    BlockAgent,
    DenyRefunds,
    Redact,
    ServeFromCache,
    agent,
    broken,
    lookup,
    multi_agent_app,
    parallel,
    refund,
    run,
    run_cancelled,
)
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import AuditLog, JsonlSink, LoggingSink
from adk_lattice.testing import ScriptedResponse


def _audit(*sinks: Any, **kwargs: Any) -> tuple[AuditLog, list[dict[str, Any]]]:
    records: list[dict[str, Any]] = []
    return AuditLog([records.append, *sinks], **kwargs), records


async def test_completed_multi_agent_run_writes_one_record_per_invocation() -> None:
    """A run with an AgentTool writes two records: the nested invocation's and the outer one."""
    audit, records = _audit()
    await run(multi_agent_app(), Lattice(policy=[DenyRefunds()], telemetry=[audit]))
    assert [r["agents"] for r in records] == [["helper"], ["coordinator", "refunds"]]
    assert [r["outcome"] for r in records] == ["completed", "completed"]
    assert len({r["invocation_id"] for r in records}) == 2


async def test_record_lists_tool_calls_with_decisions() -> None:
    """Each tool call is listed with its decision, denial reason, status and duration."""
    audit, records = _audit()
    await run(multi_agent_app(), Lattice(policy=[DenyRefunds()], telemetry=[audit]))
    tools = {t["name"]: t for t in records[-1]["tool_calls"]}
    assert set(tools) == {"lookup", "refund", "helper", "transfer_to_agent"}
    assert (tools["refund"]["decision"], tools["refund"]["reason"]) == ("deny", "role")
    assert tools["refund"]["status"] == "skipped"
    assert (tools["lookup"]["decision"], tools["lookup"]["status"]) == ("allow", "ok")
    assert all(t["duration"] >= 0 for t in tools.values())


async def test_record_counts_model_calls_and_tokens() -> None:
    """Model calls, input and output tokens come from the delivered responses' usage."""
    audit, records = _audit()
    root = agent(
        "root",
        ScriptedResponse(
            function_calls=[("lookup", {"charge_id": "c"})], input_tokens=10, output_tokens=3
        ),
        ScriptedResponse.text("done", input_tokens=20, output_tokens=4),
        tools=[lookup],
    )
    await run(root, Lattice(telemetry=[audit]))
    assert records[0]["model_calls"] == {
        "count": 2,
        "served": 0,
        "cache_hits": 0,
        "input_tokens": 30,
        "output_tokens": 7,
    }


async def test_record_counts_cache_hits_without_tokens() -> None:
    """A response served from the cache counts as a cache hit and spends no tokens."""
    audit, records = _audit()
    root = agent("root", ScriptedResponse.text("unused", input_tokens=99))
    await run(root, Lattice(cache=[ServeFromCache("root")], telemetry=[audit]))
    assert records[0]["model_calls"]["cache_hits"] == 1
    assert records[0]["model_calls"]["input_tokens"] == 0


@pytest.mark.parametrize("redactor", [Redact, RedactPII])
async def test_record_lists_policy_actions(redactor: Callable[[], Any]) -> None:
    """Policy denials and redactions are listed as policy actions, allows are not."""
    audit, records = _audit()
    root = agent(
        "root",
        parallel("lookup", "refund"),
        ScriptedResponse.text(f"to {PII}"),
        tools=[lookup, refund],
    )
    policy = redactor()
    await run(root, Lattice(policy=[DenyRefunds(), policy], telemetry=[audit]))
    actions = [
        (a["hook"], a["handler"], a["decision"], a["reason"]) for a in records[0]["policy_actions"]
    ]
    assert actions == [
        ("before_tool", "DenyRefunds", "deny", "role"),
        ("after_model", policy.name, "redact", "email"),
    ]


async def test_blocked_agent_writes_one_blocked_record() -> None:
    """A before_agent block ends in one record with outcome blocked."""
    audit, records = _audit()
    await run(
        agent("root", ScriptedResponse.text("x")),
        Lattice(policy=[BlockAgent("root")], telemetry=[audit]),
    )
    assert [(r["outcome"], r["agents"]) for r in records] == [("blocked", ["root"])]
    assert records[0]["policy_actions"][0]["decision"] == "block"


async def test_model_error_writes_one_error_record() -> None:
    """A model that raises ends in one record with outcome error and the error type."""
    audit, records = _audit()
    root = agent("root", ScriptedResponse(error=ConnectionError("provider down")))
    result = await run(root, Lattice(telemetry=[audit]))
    assert isinstance(result.error, ConnectionError)
    assert [(r["outcome"], r["error_type"]) for r in records] == [("error", "ConnectionError")]


async def test_tool_error_writes_one_record_with_the_failed_and_cancelled_calls() -> None:
    """A failing tool ends in one error record; its cancelled sibling is listed as cancelled."""
    audit, records = _audit()
    root = agent("root", parallel("broken", "lookup"), tools=[broken, lookup])
    await run(root, Lattice(telemetry=[audit]))
    (record,) = records
    assert (record["outcome"], record["error_type"]) == ("error", "ValueError")
    statuses = {t["name"]: (t["status"], t["error_type"]) for t in record["tool_calls"]}
    assert statuses["broken"] == ("error", "ValueError")
    assert statuses["lookup"][0] in ("ok", "cancelled")


async def test_cancelled_run_writes_one_cancelled_record() -> None:
    """A run cancelled with parallel tools in flight ends in one cancelled record."""
    audit, records = _audit()
    started = asyncio.Event()
    count = 0

    async def slow(charge_id: str) -> dict[str, Any]:
        """A slow tool."""
        nonlocal count
        count += 1
        if count == 2:
            started.set()
        await asyncio.sleep(30)
        return {}

    await run_cancelled(
        agent("root", parallel("slow", "slow"), tools=[slow]), Lattice(telemetry=[audit]), started
    )
    (record,) = records
    assert record["outcome"] == "cancelled"
    assert [t["status"] for t in record["tool_calls"]] == ["cancelled", "cancelled"]


async def test_jsonl_sink_appends_one_line_per_record(tmp_path: Path) -> None:
    """The JSON Lines sink appends one parseable line per invocation, across runs."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(str(path))
    lattice = Lattice(telemetry=[audit])
    for _ in range(2):
        await run(agent("root", ScriptedResponse.text("hi")), lattice)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["completed", "completed"]


async def test_concurrent_runs_write_whole_lines(tmp_path: Path) -> None:
    """Concurrent invocations sharing one file each write one whole line."""
    path = tmp_path / "audit.jsonl"
    lattice = Lattice(telemetry=[AuditLog(path)])
    await asyncio.gather(
        *(run(agent("root", ScriptedResponse.text("hi")), lattice) for _ in range(8))
    )
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len({r["invocation_id"] for r in records}) == 8


def test_jsonl_sink_lines_never_interleave_across_threads(tmp_path: Path) -> None:
    """Records written from many threads at once come out as whole lines."""
    sink = JsonlSink(tmp_path / "audit.jsonl")
    payload = "x" * 5000

    def write(n: int) -> None:
        for i in range(50):
            sink({"thread": n, "i": i, "payload": payload})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sink.close()
    lines = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert len({(r["thread"], r["i"]) for r in map(json.loads, lines)}) == 400


async def test_failing_sink_is_counted_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    """A sink that raises is logged and counted; the run and the other sinks go on."""

    def bad(record: Any) -> None:
        raise OSError("disk full")

    kept: list[dict[str, Any]] = []
    audit = AuditLog([bad, kept.append])
    result = await run(agent("root", ScriptedResponse.text("hi")), Lattice(telemetry=[audit]))
    assert result.error is None
    assert len(kept) == 1
    assert dict(audit.sink_errors) == {
        "test_failing_sink_is_counted_and_never_raises.<locals>.bad": 1
    }
    assert "audit sink" in caplog.text


async def test_async_sink_is_awaited() -> None:
    """An async callable sink receives the record."""
    got: list[dict[str, Any]] = []

    async def sink(record: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        got.append(record)

    await run(agent("root", ScriptedResponse.text("hi")), Lattice(telemetry=[AuditLog(sink)]))
    assert [r["outcome"] for r in got] == ["completed"]


async def test_default_sink_logs_to_adk_lattice_audit(caplog: pytest.LogCaptureFixture) -> None:
    """Without a sink, records go to the adk_lattice.audit logger, the dict attached."""
    caplog.set_level(logging.INFO, logger="adk_lattice.audit")
    await run(agent("root", ScriptedResponse.text("hi")), Lattice(telemetry=[AuditLog()]))
    (entry,) = [r for r in caplog.records if r.name == "adk_lattice.audit"]
    assert json.loads(entry.getMessage().removeprefix("adk_lattice.audit "))["outcome"] == (
        "completed"
    )
    assert entry.audit["agents"] == ["root"]  # type: ignore[attr-defined]


async def test_records_hold_no_content_by_default() -> None:
    """Without capture_content no message text or tool result is in the record."""
    audit, records = _audit()
    root = agent(
        "root", parallel("lookup"), ScriptedResponse.text("the secret plan"), tools=[lookup]
    )
    await run(root, Lattice(telemetry=[audit]), f"I am {PII}")
    text = json.dumps(records)
    assert "the secret plan" not in text
    assert PII not in text
    assert "amount" not in text  # the tool result's field; timings may contain any digits


@pytest.mark.parametrize(
    ("redactor", "delivered"), [(Redact, "Mail [email]"), (RedactPII, "Mail [REDACTED:EMAIL]")]
)
async def test_captured_content_is_after_policy(
    redactor: Callable[[], Any], delivered: str
) -> None:
    """With capture_content the record holds the redacted response, never the raw value."""
    audit, records = _audit(capture_content=True)
    root = agent("root", ScriptedResponse.text(f"Mail {PII}"))
    await run(root, Lattice(policy=[redactor()], telemetry=[audit]), f"I am {PII}")
    assert records[0]["responses"] == [delivered]
    assert PII not in json.dumps(records)


def test_unsupported_sink_is_a_clear_error() -> None:
    """A sink that is not a path, a logger or a callable is refused at construction."""
    with pytest.raises(TypeError, match="audit sink"):
        AuditLog(42)


async def test_abandoned_run_writes_one_abandoned_record() -> None:
    """A run its caller stops reading, then closed with the runner, ends in one abandoned record."""
    audit, records = _audit()
    root = agent("root", parallel("lookup"), ScriptedResponse.text("done"), tools=[lookup])
    app = App(name="app", root_agent=root, plugins=[Lattice(telemetry=[audit])])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u1")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = runner.run_async(user_id="u1", session_id=session.id, new_message=message)
    await anext(events)  # the first event, then the caller walks away
    await runner.close()
    await events.aclose()
    assert [r["outcome"] for r in records] == ["abandoned"]


async def test_evicted_run_that_goes_on_still_has_one_record() -> None:
    """A run evicted as abandoned keeps one record even when ADK later finishes it."""
    audit, records = _audit()
    lattice = Lattice(telemetry=[audit], max_invocations=1)
    entered, release = asyncio.Event(), asyncio.Event()

    async def wait(charge_id: str) -> dict[str, Any]:
        """Wait until released."""
        entered.set()
        await release.wait()
        return {"ok": True}

    first = asyncio.create_task(
        run(agent("slow", parallel("wait"), ScriptedResponse.text("late"), tools=[wait]), lattice)
    )
    await asyncio.wait_for(entered.wait(), 10)
    await run(agent("quick", ScriptedResponse.text("hi")), lattice)  # evicts the slow run
    release.set()
    assert (await first).error is None
    assert sorted((r["agents"][0], r["outcome"]) for r in records) == [
        ("quick", "completed"),
        ("slow", "abandoned"),
    ]
    assert lattice.open_invocations == 0


async def test_captured_tool_result_is_in_the_record() -> None:
    """With capture_content each tool call lists its delivered result."""
    audit, records = _audit(capture_content=True)
    root = agent("root", parallel("lookup"), ScriptedResponse.text("ok"), tools=[lookup])
    await run(root, Lattice(telemetry=[audit]))
    (call,) = records[0]["tool_calls"]
    assert json.loads(call["result"]) == {"charge_id": "c0", "amount": 12.5}


async def test_logged_records_carry_a_fixed_prefix(caplog: pytest.LogCaptureFixture) -> None:
    """A logged record starts with 'adk_lattice.audit ', so it shows in logs without names."""
    caplog.set_level(logging.INFO, logger="adk_lattice.audit")
    await run(agent("root", ScriptedResponse.text("hi")), Lattice(telemetry=[AuditLog()]))
    (entry,) = [r for r in caplog.records if r.name == "adk_lattice.audit"]
    assert entry.getMessage().startswith('adk_lattice.audit {"')


async def test_the_prefix_can_be_turned_off(caplog: pytest.LogCaptureFixture) -> None:
    """LoggingSink(prefix="") logs the bare JSON line."""
    caplog.set_level(logging.INFO, logger="adk_lattice.audit")
    audit = AuditLog(LoggingSink(prefix=""))
    await run(agent("root", ScriptedResponse.text("hi")), Lattice(telemetry=[audit]))
    (entry,) = [r for r in caplog.records if r.name == "adk_lattice.audit"]
    assert json.loads(entry.getMessage())["outcome"] == "completed"


def test_an_audit_file_in_a_missing_folder_fails_at_construction(tmp_path: Path) -> None:
    """AuditLog("logs/audit.jsonl") without a logs folder raises when built, naming it."""
    with pytest.raises(FileNotFoundError, match=r"folder .*logs. does not exist; create it"):
        AuditLog(str(tmp_path / "logs" / "audit.jsonl"))


def test_an_audit_path_that_is_a_folder_fails_at_construction(tmp_path: Path) -> None:
    """A sink path naming a folder raises when built, not at the first audited turn."""
    with pytest.raises(IsADirectoryError, match="is a folder: name a file in it"):
        JsonlSink(tmp_path)
