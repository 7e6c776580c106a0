"""No model- or user-made value reaches a reason, a log line or an audit record raw."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice, on
from adk_lattice.policy import ToolGuard, ToolRule
from adk_lattice.telemetry import AuditLog
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import Run, run_app

SECRET = "alice.secret@example.com"


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund part of a charge."""
    return {"status": "refunded"}


async def _run(
    call: ScriptedResponse, policy: list[Any], caplog: pytest.LogCaptureFixture, **kw: Any
) -> tuple[Run, list[dict[str, Any]], str]:
    """One turn with ``call``; returns the run, its audit records and the lattice's logs."""
    records: list[dict[str, Any]] = []
    model = FakeModel([call, ScriptedResponse.text("ok")])
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    lattice = Lattice(policy=policy, telemetry=[AuditLog(records.append)], **kw)
    with caplog.at_level(logging.DEBUG, logger="adk_lattice"):
        run = await run_app(agent, [lattice], "refund")
    logs = "\n".join(
        f"{r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if r.name.startswith("adk_lattice")
    )
    return run, records, logs


def _clean(run: Run, records: list[dict[str, Any]], logs: str) -> None:
    assert records, "the run wrote no audit record"
    assert SECRET not in json.dumps(run.responses()[0])
    assert SECRET not in json.dumps(records)
    assert SECRET not in logs


async def test_a_check_error_quoting_the_value_is_not_echoed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A check raising ValueError("invalid literal ... '<value>'") denies by type only."""

    def numeric_charge(args: Any) -> None:
        int(args["charge_id"])

    guard = ToolGuard({"issue_refund": ToolRule(checks=[numeric_charge])})
    call = ScriptedResponse.call("issue_refund", charge_id=SECRET, amount=5.0)
    run, records, logs = await _run(call, [guard], caplog)
    reason = run.responses("issue_refund")[0]["reason"]
    assert reason == "arguments rejected by numeric_charge (ValueError)"
    _clean(run, records, logs)


async def test_a_hygiene_reason_names_no_model_chosen_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """NaN under a key the model invented is denied without naming that key."""
    guard = ToolGuard({"issue_refund": ToolRule()})
    call = ScriptedResponse.call("issue_refund", charge_id="c1", amount=1.0, **{SECRET: math.nan})
    run, records, logs = await _run(call, [guard], caplog)
    assert run.responses("issue_refund")[0]["reason"] == "an argument must be a finite number"
    _clean(run, records, logs)


async def test_a_made_up_tool_name_is_a_placeholder(caplog: pytest.LogCaptureFixture) -> None:
    """A tool name the model made up reaches no denial, log or audit field raw."""
    guard = ToolGuard({}, unknown="deny")
    run, records, logs = await _run(ScriptedResponse.call(SECRET, x=1), [guard], caplog)
    denial = run.responses()[0]
    assert denial["code"] == "unknown_tool"
    assert denial["tool"].startswith("unknown-tool-")
    assert records[0]["tool_calls"][0]["name"] == denial["tool"]
    _clean(run, records, logs)


async def test_a_handler_error_is_logged_by_type_and_stack(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A policy that raises with a value in its message is logged without that message."""

    @on("before_tool")
    def picky(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
        raise ValueError(f"cannot refund {tool_args['charge_id']}")

    call = ScriptedResponse.call("issue_refund", charge_id=SECRET, amount=5.0)
    run, records, logs = await _run(call, [picky], caplog)
    assert run.responses("issue_refund")[0]["code"] == "handler_error"
    assert "ValueError" in logs
    assert "picky" in logs  # the stack still says where
    _clean(run, records, logs)
