"""Shadow mode: a handler runs on copies and reports what it would have done, acting on nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from adk_lattice import Lattice, configure, on
from adk_lattice.policy import RedactPII, ToolGuard
from adk_lattice.telemetry import AuditLog, Telemetry
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app

REFUND_RULE = {"schema": {"type": "object", "properties": {"amount": {"maximum": 100}}}}


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund part of a charge."""
    return {"status": "refunded", "charge_id": charge_id, "amount": amount}


def refund_agent(*turns: ScriptedResponse) -> LlmAgent:
    call = ScriptedResponse.call("issue_refund", charge_id="c1", amount=500.0)
    model = FakeModel([call, *turns] if turns else [call, ScriptedResponse.text("done")])
    return LlmAgent(name="billing", model=model, tools=[issue_refund])


def tool_results(events: list[Any]) -> list[Mapping[str, Any]]:
    return [
        p.function_response.response
        for e in events
        for p in (e.content.parts if e.content and e.content.parts else [])
        if p.function_response is not None and p.function_response.response is not None
    ]


def audit_into(records: list[Mapping[str, Any]]) -> AuditLog:
    return AuditLog(records.append)


async def test_a_shadow_denial_lets_the_call_through() -> None:
    """A shadow ToolGuard that would deny leaves the tool to run and its result to the model."""
    guard = configure(ToolGuard({"issue_refund": REFUND_RULE}), mode="shadow")
    turn = await run_app(refund_agent(), Lattice(policy=[guard], telemetry=()))
    assert tool_results(turn.events) == [{"status": "refunded", "charge_id": "c1", "amount": 500.0}]


async def test_the_audit_record_says_what_a_shadow_policy_would_have_done() -> None:
    """The audit record lists ``would_deny`` with mode shadow, and the run is not blocked."""
    records: list[Mapping[str, Any]] = []
    guard = configure(ToolGuard({"issue_refund": REFUND_RULE}), mode="shadow")
    await run_app(refund_agent(), Lattice(policy=[guard], telemetry=[audit_into(records)]))
    (record,) = records
    assert record["outcome"] == "completed"
    assert record["policy_actions"] == [
        {
            "hook": "before_tool",
            "handler": "ToolGuard",
            "decision": "would_deny",
            "reason": "schema",
            "agent": "billing",
            "tool": "issue_refund",
            "mode": "shadow",
        }
    ]
    assert record["tool_calls"][0]["decision"] == "allow"


async def test_a_shadow_redaction_leaves_the_answer_untouched() -> None:
    """A shadow RedactPII reports ``would_redact`` and the user gets the answer as written."""
    records: list[Mapping[str, Any]] = []
    model = FakeModel([ScriptedResponse.text("Write to jane.doe@example.com for help.")])
    agent = LlmAgent(name="support", model=model)
    redact = configure(RedactPII(), mode="shadow")
    turn = await run_app(agent, Lattice(policy=[redact], telemetry=[audit_into(records)]))
    assert turn.texts[-1] == "Write to jane.doe@example.com for help."
    decisions = [a["decision"] for a in records[0]["policy_actions"]]
    assert decisions == ["would_redact"]


async def test_in_place_edits_of_a_shadow_handler_reach_neither_the_tool_nor_later_handlers() -> (
    None
):
    """A shadow handler rewriting arguments in place edits a copy: the tool gets the original."""
    seen: list[float] = []

    @on("before_tool", mode="shadow")
    def halve(*, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        tool_args["amount"] = tool_args["amount"] / 2

    @on("before_tool")
    def watch(*, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        seen.append(tool_args["amount"])

    turn = await run_app(refund_agent(), Lattice(policy=[halve], handlers=[watch], telemetry=()))
    assert seen == [500.0]
    assert tool_results(turn.events)[0]["amount"] == 500.0


async def test_state_a_shadow_handler_writes_is_not_kept() -> None:
    """State written by a shadow handler lands on a copy, never in the session."""

    @on("before_model", mode="shadow")
    def mark(*, callback_context: Any, llm_request: Any) -> None:
        callback_context.state["shadow_was_here"] = True

    turn = await run_app(refund_agent(), Lattice(handlers=[mark], telemetry=()))
    session = await turn.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=turn.session_id
    )
    assert session is not None
    assert "shadow_was_here" not in session.state
    assert all("shadow_was_here" not in (e.actions.state_delta or {}) for e in session.events)


async def test_a_shadow_short_circuit_does_not_replace_the_model_call() -> None:
    """A shadow handler's returned response is not handed to ADK: the model still answers."""

    @on("before_model", mode="shadow")
    def serve(*, callback_context: Any, llm_request: Any) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="stub")]))

    model = FakeModel([ScriptedResponse.text("from the model")])
    recorder = Recorder()
    turn = await run_app(
        LlmAgent(name="a", model=model), Lattice(handlers=[serve], telemetry=[recorder])
    )
    assert turn.texts[-1] == "from the model"
    assert model.calls == 1
    (before,) = recorder.of("before_model")
    assert before.value is None
    assert [r.step.status for r in before.shadow] == ["act"]


async def test_a_failing_shadow_policy_is_reported_and_affects_nothing() -> None:
    """A shadow policy that raises counts as an error and would have denied; the run goes on."""

    @on("before_tool", mode="shadow")
    def broken(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
        raise RuntimeError("bug")

    records: list[Mapping[str, Any]] = []
    lattice = Lattice(policy=[broken], telemetry=[audit_into(records)])
    turn = await run_app(refund_agent(), lattice)
    assert tool_results(turn.events)[0]["status"] == "refunded"
    assert lattice.stats[("error", "before_tool", "broken")] == 1
    (action,) = records[0]["policy_actions"]
    assert (action["decision"], action["reason"], action["mode"]) == (
        "would_deny",
        "RuntimeError",
        "shadow",
    )


async def test_metrics_count_shadow_decisions_under_a_mode_attribute() -> None:
    """``adk_lattice.policy.decisions`` counts a shadow denial as would_deny, mode shadow."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    guard = configure(ToolGuard({"issue_refund": REFUND_RULE}), mode="shadow")
    lattice = Lattice(policy=[guard], telemetry=[Telemetry(meter_provider=provider)])
    await run_app(refund_agent(), lattice)
    points = [
        (dict(p.attributes or {}), p.value)
        for rm in (reader.get_metrics_data() or []).resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == "adk_lattice.policy.decisions"
        for p in m.data.data_points
    ]
    assert (
        {
            "adk_lattice.hook": "before_tool",
            "adk_lattice.handler": "ToolGuard",
            "adk_lattice.decision": "would_deny",
            "adk_lattice.mode": "shadow",
        },
        1,
    ) in points


def test_shadow_handlers_are_listed_apart_from_the_deciders() -> None:
    """``chain(hook, "shadow")`` lists shadow handlers; ``chain(hook)`` only the deciders."""
    guard = configure(ToolGuard({}), mode="shadow")
    lattice = Lattice(policy=[guard, ToolGuard({}, name="live")], telemetry=())
    assert lattice.chain("before_tool") == ("live",)
    assert lattice.chain("before_tool", "shadow") == ("ToolGuard",)


def test_an_unknown_mode_fails_at_construction() -> None:
    """A misspelt mode is refused when the lattice is built, naming the choices."""
    with pytest.raises(ValueError, match="mode must be 'enforce' or 'shadow'"):
        Lattice(policy=[configure(ToolGuard({}), mode="shadowed")])


def test_an_observer_cannot_be_put_in_shadow_mode() -> None:
    """Telemetry observers only watch: shadow mode on one is refused with the fix."""
    with pytest.raises(ValueError, match="observers only watch"):
        Lattice(telemetry=[configure(AuditLog(), mode="shadow")])


async def test_a_context_that_cannot_be_isolated_keeps_the_shadow_handler_off_it() -> None:
    """Where its writes could not be redirected, a shadow handler is not run: counted instead."""
    from collections import Counter

    from adk_lattice._handlers import bind
    from adk_lattice._shadow import run_shadow

    ran: list[str] = []

    @on("before_tool", mode="shadow")
    def touch(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
        ran.append("ran")

    hooks, _ = bind(touch, "policy")
    stats: Counter[tuple[str, str, str]] = Counter()
    kwargs = {"tool": None, "tool_args": {}, "tool_context": object()}
    (run,) = await run_shadow(
        (hooks["before_tool"],),
        "before_tool",
        kwargs,
        agent=None,
        tool=None,
        partial=False,
        stats=stats,
    )
    assert ran == []
    assert run.step.status == "error"
    assert stats[("error", "before_tool", "touch")] == 1


def _would_deny(**_: Any) -> dict[str, Any]:
    return {"status": "denied"}


async def test_a_shadow_handler_scoped_to_a_tool_reports_on_that_tool() -> None:
    """A shadow handler scoped to a tool runs on that tool's calls and reports what it would do."""
    guard = on("before_tool", name="refunds", tools={"issue_refund"}, mode="shadow")(_would_deny)
    recorder = Recorder()
    turn = await run_app(refund_agent(), Lattice(policy=[guard], telemetry=[recorder]))
    assert tool_results(turn.events)[0]["status"] == "refunded"
    (before,) = recorder.of("before_tool")
    assert [(r.step.handler, r.value) for r in before.shadow] == [("refunds", {"status": "denied"})]


async def test_a_shadow_handler_scoped_to_an_agent_reports_on_that_agent() -> None:
    """A shadow handler scoped to an agent runs on that agent's hooks and reports on them."""
    guard = on("before_tool", name="billing_only", agents={"billing"}, mode="shadow")(_would_deny)
    recorder = Recorder()
    await run_app(refund_agent(), Lattice(policy=[guard], telemetry=[recorder]))
    (before,) = recorder.of("before_tool")
    assert [r.step.status for r in before.shadow] == ["act"]


async def test_a_shadow_handler_not_asking_for_chunks_never_sees_one() -> None:
    """A shadow after_model handler without partial=True runs on the final answer only."""
    seen: list[bool] = []
    look = on("after_model", name="look", mode="shadow")(
        lambda **kw: seen.append(kw["llm_response"].partial)
    )
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    agent = LlmAgent(name="chat", model=model)
    await run_app(agent, Lattice(handlers=[look], telemetry=()), streaming=True)
    assert len(seen) == 1 and not seen[0]
