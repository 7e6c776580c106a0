"""Lattice keeps DESIGN.md's contract through real ADK Runners."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Lattice, ReturnGuardError, current_call, on
from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool, tool_context
from tests.support import Recorder, assert_balanced, run_app

refunds: list[float] = []


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund part of a charge."""
    refunds.append(amount)
    return {"status": "refunded", "charge_id": charge_id, "amount": amount}


def _refund_agent(amount: float = 12.345) -> LlmAgent:
    refunds.clear()
    script = [
        ScriptedResponse.call("issue_refund", charge_id="c1", amount=amount),
        ScriptedResponse.text("Done."),
    ]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[issue_refund])


def _deny(name: str) -> Any:
    return on("before_tool", name=name)(lambda **_: {"status": "denied", "by": name})


async def test_tiers_run_policy_then_cache_then_handlers() -> None:
    """Whatever the keyword order, policy decides before cache, and cache before handlers."""
    lattice = Lattice(handlers=[_deny("custom")], cache=[_deny("cache")], policy=[_deny("policy")])
    assert lattice.chain("before_tool") == ("policy", "cache", "custom")
    turn = await run_app(_refund_agent(), lattice)
    assert turn.tool_responses[0]["by"] == "policy"
    assert refunds == []


async def test_in_place_rewrite_reaches_later_handlers_and_the_tool() -> None:
    """Arguments edited in place are seen by later handlers and by the tool itself."""
    seen: list[float] = []

    @on("before_tool")
    def round_amount(*, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        tool_args["amount"] = round(tool_args["amount"], 2)

    @on("before_tool")
    def look(*, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        seen.append(tool_args["amount"])

    await run_app(_refund_agent(12.345), Lattice(policy=[round_amount], handlers=[look]))
    assert seen == [12.35]
    assert refunds == [12.35]


async def test_observers_see_every_hook_in_adk_order(recorder: Recorder) -> None:
    """A model -> tool -> model turn gives observers every hook, in ADK's order."""
    await run_app(_refund_agent(), Lattice(telemetry=[recorder]))
    assert recorder.hooks() == [
        "on_user_message",
        "before_run",
        "before_agent",
        "before_model",
        "after_model",
        "on_event",
        "before_tool",
        "after_tool",
        "on_event",
        "before_model",
        "after_model",
        "on_event",
        "after_agent",
        "after_run",
    ]


async def test_outcome_records_who_acted_and_timings(recorder: Recorder) -> None:
    """The before_tool outcome names the winner, the ids, and one timed step per handler."""
    lattice = Lattice(policy=[_deny("guard")], telemetry=[recorder])
    await run_app(_refund_agent(), lattice)
    (outcome,) = recorder.of("before_tool")
    assert (outcome.acted_by, outcome.acted_tier, outcome.kind) == ("guard", "policy", "act")
    assert outcome.denied
    assert outcome.tool == "issue_refund"
    assert outcome.agent == "billing"
    assert outcome.function_call_id
    assert outcome.invocation_id
    assert [s.handler for s in outcome.steps] == ["guard"]
    assert outcome.steps[0].duration >= 0


async def test_before_model_short_circuit_gets_a_synthesized_after_model(
    recorder: Recorder,
) -> None:
    """A response served from before_model skips the model, and observers still get its end."""
    served = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="cached")]))

    @on("before_model")
    def serve(**_: Any) -> LlmResponse:
        return served

    agent = _refund_agent()
    turn = await run_app(agent, Lattice(cache=[serve], telemetry=[recorder]))
    assert agent.model.calls == 0  # type: ignore[union-attr]
    assert turn.texts == ["cached"]
    (after,) = recorder.of("after_model")
    assert after.synthesized
    assert after.reason == "short_circuit"
    assert after.acted_by == "serve"
    assert after.final is served
    assert_balanced(recorder.outcomes)


async def test_blocked_agent_is_closed_for_observers(recorder: Recorder) -> None:
    """A before_agent block skips the agent; observers get a synthesized after_agent."""

    @on("before_agent")
    def inactive(**_: Any) -> types.Content:
        return types.Content(role="model", parts=[types.Part(text="Your account is inactive.")])

    agent = _refund_agent()
    turn = await run_app(agent, Lattice(policy=[inactive], telemetry=[recorder]))
    assert turn.texts == ["Your account is inactive."]
    assert agent.model.calls == 0  # type: ignore[union-attr]
    (after,) = recorder.of("after_agent")
    assert (after.synthesized, after.reason, after.denied) == (True, "blocked", True)
    assert_balanced(recorder.outcomes)


async def test_failing_policy_denies_the_tool_and_the_run_goes_on() -> None:
    """A policy handler that raises fails closed: the tool does not run, the turn completes."""

    @on("before_tool")
    def broken(**_: Any) -> None:
        raise RuntimeError("approval service down")

    lattice = Lattice(policy=[broken])
    turn = await run_app(_refund_agent(), lattice)
    assert refunds == []
    assert turn.tool_responses[0]["status"] == "denied"
    assert turn.texts[-1] == "Done."
    assert lattice.stats[("error", "before_tool", "broken")] == 1


async def test_failing_cache_handler_is_skipped() -> None:
    """A cache handler that raises fails open: the tool still runs."""

    @on("before_tool")
    def broken(**_: Any) -> None:
        raise RuntimeError("store down")

    await run_app(_refund_agent(), Lattice(cache=[broken]))
    assert refunds == [12.345]


async def test_on_error_raise_aborts_the_run() -> None:
    """A handler configured to raise aborts the run the way ADK reports plugin errors."""

    @on("before_tool", on_error="raise")
    def broken(**_: Any) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="adk_lattice"):
        await run_app(_refund_agent(), Lattice(handlers=[broken]))


async def test_strict_mode_surfaces_a_bad_return() -> None:
    """With strict=True an empty-dict return aborts the run with ReturnGuardError as cause."""
    empty = on("before_tool")(lambda **_: {})
    with pytest.raises(RuntimeError) as info:
        await run_app(_refund_agent(), Lattice(handlers=[empty], strict=True))
    assert isinstance(info.value.__cause__, ReturnGuardError)


async def test_default_mode_skips_a_custom_handlers_bad_return() -> None:
    """Without strict, a custom handler's empty dict is skipped and counted; the tool runs."""
    empty = on("before_tool", name="empty")(lambda **_: {})
    lattice = Lattice(handlers=[empty])
    await run_app(_refund_agent(), lattice)
    assert refunds == [12.345]
    assert lattice.stats[("rejected", "before_tool", "empty")] == 1


async def test_denial_is_marked_for_after_tool_handlers() -> None:
    """after_tool handlers see, through current_call(), that before_tool was a denial."""
    seen: list[tuple[bool, str | None]] = []

    @on("after_tool")
    def shape(**_: Any) -> None:
        call = current_call()
        assert call is not None
        seen.append((call.denied, call.short_circuited_by))

    await run_app(_refund_agent(), Lattice(policy=[_deny("guard")], handlers=[shape]))
    assert seen == [(True, "guard")]


async def test_cache_short_circuit_is_not_a_denial() -> None:
    """A before_tool value from the cache tier short-circuits without being marked a denial."""
    seen: list[bool] = []
    shape = on("after_tool")(lambda **_: seen.append(current_call().denied))  # type: ignore[union-attr]
    await run_app(_refund_agent(), Lattice(cache=[_deny("hit")], handlers=[shape]))
    assert seen == [False]


async def test_failing_observer_is_counted_and_the_run_goes_on() -> None:
    """An observer that raises is counted and skipped; the turn completes."""

    class Broken:
        def observe(self, outcome: Any) -> None:
            raise ValueError("exporter bug")

    lattice = Lattice(telemetry=[Broken()])
    turn = await run_app(_refund_agent(), lattice)
    assert turn.texts[-1] == "Done."
    assert lattice.stats[("observer_error", "after_run", "Broken")] == 1


async def test_async_observers_are_awaited(recorder: Recorder) -> None:
    """An observer whose observe is async is awaited for every outcome."""
    seen: list[str] = []

    class Slow:
        async def observe(self, outcome: Any) -> None:
            seen.append(outcome.hook)

    await run_app(_refund_agent(), Lattice(telemetry=[Slow(), recorder]))
    assert seen == recorder.hooks()


async def test_name_alone_works_on_a_runner() -> None:
    """Lattice(name=...) alone registers and runs, as adk web --extra_plugins builds it."""
    lattice = Lattice(name="adk_lattice.Lattice")
    turn = await run_app(_refund_agent(), lattice)
    assert turn.texts[-1] == "Done."
    assert lattice.open_invocations == 0


async def test_close_ends_open_invocations_and_closes_handlers(recorder: Recorder) -> None:
    """close() reports open invocations as abandoned and calls each handler's close()."""
    closed: list[str] = []

    class Store:
        def before_tool(self, **_: Any) -> None:
            return None

        async def close(self) -> None:
            closed.append("store")

    lattice = Lattice(cache=[Store()], telemetry=[recorder])
    agent = _refund_agent()
    ctx = type("Ctx", (), {"invocation_id": "inv-1", "agent": agent, "session": None})()
    await lattice.before_run_callback(invocation_context=ctx)  # type: ignore[arg-type]
    assert lattice.open_invocations == 1
    await lattice.close()
    assert lattice.open_invocations == 0
    assert recorder.of("after_run")[-1].reason == "abandoned"
    assert closed == ["store"]


def test_bare_function_is_refused_with_a_hint() -> None:
    """A plain function registered without on() is refused, and the error says what to do."""

    def check(**_: Any) -> None:
        return None

    with pytest.raises(TypeError, match=r"@on\("):
        Lattice(policy=[check])


def test_object_without_hooks_is_refused() -> None:
    """An object with no hook method and no observe() is refused by name."""
    with pytest.raises(TypeError, match="has none of the hook methods"):
        Lattice(handlers=[object()])


def test_telemetry_entries_must_be_observers() -> None:
    """A telemetry-tier entry with hook methods is refused: telemetry only observes."""
    with pytest.raises(TypeError, match="observers"):
        Lattice(telemetry=[_deny("x")])


def test_bad_on_error_is_refused() -> None:
    """An unknown on_error mode is a ValueError at construction."""
    with pytest.raises(ValueError, match="on_error"):
        Lattice(handlers=[on("before_tool", on_error="explode")(lambda **_: None)])  # type: ignore[arg-type]


def test_a_single_handler_instead_of_a_list_is_refused() -> None:
    """Passing one handler where a list is expected gives a clear TypeError."""
    with pytest.raises(TypeError, match="list of handlers"):
        Lattice(policy="RequireState")  # type: ignore[arg-type]


async def test_lattice_timeout_applies_to_async_handlers_without_their_own() -> None:
    """Lattice(timeout=...) bounds an async policy handler, which then fails closed."""

    @on("before_tool")
    async def hung(**_: Any) -> None:
        await asyncio.sleep(30)

    lattice = Lattice(policy=[hung], timeout=0.05)
    turn = await run_app(_refund_agent(), lattice)
    assert refunds == []
    assert turn.tool_responses[0]["status"] == "denied"
    assert lattice.stats[("timeout", "before_tool", "hung")] == 1


async def test_policy_rewrite_on_an_after_hook_is_not_a_denial(recorder: Recorder) -> None:
    """A policy's replacement in after_tool is a rewrite: acted, but not denied."""
    cap = on("after_tool", name="cap")(lambda **_: {"status": "capped"})
    await run_app(_refund_agent(), Lattice(policy=[cap], telemetry=[recorder]))
    (after,) = recorder.of("after_tool")
    assert after.acted_by == "cap"
    assert not after.denied


async def test_a_call_without_an_id_keeps_its_record_to_after_tool(recorder: Recorder) -> None:
    """When ADK gives no function_call_id, after_tool still sees the denial and closes the call."""
    seen: list[bool] = []

    @on("after_tool")
    def shape(**_: Any) -> None:
        seen.append(current_call().denied)  # type: ignore[union-attr]

    lattice = Lattice(policy=[_deny("guard")], handlers=[shape], telemetry=[recorder])
    tool = function_tool(issue_refund)
    ctx = tool_context(function_call_id=None)
    args = {"charge_id": "c1", "amount": 5.0}
    denied = await lattice.before_tool_callback(tool=tool, tool_args=args, tool_context=ctx)
    assert denied is not None
    await lattice.after_tool_callback(tool=tool, tool_args=args, tool_context=ctx, result=denied)
    assert seen == [True]
    inv = recorder.of("after_tool")[0].invocation
    assert inv is not None
    assert inv.open_calls == {}


async def test_policy_returning_the_wrong_type_denies_the_tool(recorder: Recorder) -> None:
    """A policy returning a str from before_tool fails closed: the tool does not run."""
    approve = on("before_tool", name="approve")(lambda **_: "approved")
    lattice = Lattice(policy=[approve], telemetry=[recorder])
    turn = await run_app(_refund_agent(), lattice)
    assert refunds == []
    (response,) = turn.tool_responses
    assert (response["status"], response["code"], response["policy"]) == (
        "denied",
        "bad_return",
        "approve",
    )
    assert turn.texts[-1] == "Done."
    (outcome,) = recorder.of("before_tool")
    assert (outcome.denied, outcome.reason, outcome.kind) == (True, "bad_return", "error")
