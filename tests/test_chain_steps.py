"""What observers learn of each handler's step, and what a fail-closed denial says, on Runners."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice, on
from adk_lattice._chain import DENIAL_TEXT
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id}


def _agent() -> LlmAgent:
    script = [
        ScriptedResponse.call("lookup_charge", charge_id="c1"),
        ScriptedResponse.text("Done."),
    ]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])


async def test_an_acting_handlers_step_measures_its_own_time() -> None:
    """The step of the handler whose value won lasts as long as that handler took."""
    recorder = Recorder()

    @on("before_tool", name="slow_answer")
    async def slow_answer(**_: Any) -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"status": "answered"}

    await run_app(_agent(), Lattice(cache=[slow_answer], telemetry=[recorder]))
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert (step.handler, step.tier, step.status, step.error) == (
        "slow_answer",
        "cache",
        "act",
        None,
    )
    assert 0.05 <= step.duration <= outcome.duration


async def test_a_failing_handlers_step_carries_its_error_and_time() -> None:
    """A handler that raised shows as an error step with the exception and the time it took."""
    recorder = Recorder()

    @on("before_tool", name="flaky")
    async def flaky(**_: Any) -> None:
        await asyncio.sleep(0.05)
        raise ConnectionError("backend down")

    await run_app(_agent(), Lattice(handlers=[flaky], telemetry=[recorder]))
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert (step.handler, step.tier, step.status) == ("flaky", "handlers", "error")
    assert isinstance(step.error, ConnectionError)
    assert 0.05 <= step.duration <= outcome.duration


async def test_a_refused_value_is_a_rejected_step_naming_the_problem() -> None:
    """A value the return guard refused shows as a rejected step with the guard's complaint."""
    recorder = Recorder()
    empty = on("before_tool", name="empty")(lambda **_: {})
    turn = await run_app(_agent(), Lattice(handlers=[empty], telemetry=[recorder]))
    assert turn.tool_responses == [{"charge_id": "c1"}]
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert (step.handler, step.tier, step.status) == ("empty", "handlers", "rejected")
    assert step.error == "before_tool returned an empty dict"
    assert 0.0 <= step.duration <= outcome.duration
    assert (outcome.acted_by, outcome.denied) == (None, False)


async def test_a_failing_policy_denies_the_tool_with_a_legible_reason() -> None:
    """A policy that cannot run answers the tool call with a denial saying which and why."""
    broken = on("before_tool", name="limits")(lambda **_: 1 / 0)
    turn = await run_app(_agent(), Lattice(policy=[broken]))
    assert turn.tool_responses == [
        {
            "status": "denied",
            "reason": "the safety check 'limits' could not run, so this call was not allowed",
            "code": "handler_error",
            "policy": "limits",
        }
    ]


async def test_a_failing_agent_policy_answers_as_the_model() -> None:
    """A before_agent policy that cannot run answers with the denial text, as the model."""
    broken = on("before_agent", name="gate")(lambda **_: 1 / 0)
    turn = await run_app(_agent(), Lattice(policy=[broken]))
    answers = [e.content for e in turn.events if e.content and e.content.parts]
    assert [(c.role, c.parts[0].text) for c in answers] == [("model", DENIAL_TEXT)]  # type: ignore[index]


async def test_a_failing_model_policy_answers_with_a_marked_denial() -> None:
    """A before_model policy that cannot run answers as the model, marked with who denied."""
    broken = on("before_model", name="gate")(lambda **_: 1 / 0)
    turn = await run_app(_agent(), Lattice(policy=[broken]))
    (event,) = [e for e in turn.events if e.content and e.content.parts]
    assert event.content is not None and event.content.role == "model"
    assert event.content.parts is not None and event.content.parts[0].text == DENIAL_TEXT
    assert event.custom_metadata == {
        "adk_lattice": {"denied_by": "gate", "reason": "handler_error"}
    }


async def test_a_failing_handler_is_logged_by_type_and_stack_never_its_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler that raised is logged with its error type and its stack as Python prints it
    (each frame indented, nothing trailing), never the error's message."""

    @on("before_tool", name="leaky")
    def leaky(*, tool_args: dict[str, Any], **_: Any) -> None:
        raise ValueError(f"charge {tool_args['charge_id']} declined")

    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        await run_app(_agent(), Lattice(handlers=[leaky]))
    (record,) = [r for r in caplog.records if "leaky" in r.getMessage()]
    message = record.getMessage()
    head, *frames = message.split("\n")
    assert head == (
        "adk_lattice: handlers handler 'leaky' raised in before_tool (ValueError); skipping it"
    )
    assert frames and frames[0].startswith('  File "') and frames[-1] == frames[-1].rstrip()
    assert all(line.startswith(('  File "', "    ")) for line in frames)
    assert "raise ValueError(" in frames[-1]
    assert "charge c1 declined" not in message


async def test_a_handler_that_lets_the_call_through_is_a_pass_step() -> None:
    """A handler returning None shows as a pass step, and the next handler still decides."""
    recorder = Recorder()
    look = on("before_tool", name="look")(lambda **_: None)
    answer = on("before_tool", name="answer")(lambda **_: {"status": "answered"})
    await run_app(_agent(), Lattice(handlers=[look, answer], telemetry=[recorder]))
    (outcome,) = recorder.of("before_tool")
    assert [(s.handler, s.status, s.error) for s in outcome.steps] == [
        ("look", "pass", None),
        ("answer", "act", None),
    ]
    assert outcome.steps[0].duration >= 0.0


async def test_a_value_of_the_wrong_type_is_a_rejected_step_naming_both_types() -> None:
    """A handler returning a str from before_tool is rejected, naming expected and given types."""
    recorder = Recorder()
    wrong = on("before_tool", name="wrong")(lambda **_: "allowed")
    await run_app(_agent(), Lattice(handlers=[wrong], telemetry=[recorder]))
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert (step.status, step.error) == ("rejected", "before_tool expects dict or None, got str")


async def test_a_value_returned_from_after_run_is_refused_naming_its_type() -> None:
    """A value returned on the notification-only after_run is a rejected step naming its type."""
    recorder = Recorder()

    @on("after_run", name="summary")
    def summary(**_: Any) -> str:
        return "the run ended"

    await run_app(_agent(), Lattice(handlers=[summary], telemetry=[recorder]))
    (outcome,) = recorder.of("after_run")
    (step,) = outcome.steps
    assert (step.handler, step.status) == ("summary", "rejected")
    assert step.error == "after_run is notification-only but the handler returned str"


async def test_a_passing_handlers_step_measures_its_own_time() -> None:
    """The step of a handler that let the call through lasts as long as that handler took."""
    recorder = Recorder()

    @on("before_tool", name="slow_check")
    async def slow_check(**_: Any) -> None:
        await asyncio.sleep(0.05)

    await run_app(_agent(), Lattice(handlers=[slow_check], telemetry=[recorder]))
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert (step.handler, step.status) == ("slow_check", "pass")
    assert 0.05 <= step.duration <= outcome.duration


async def test_a_sync_handler_returning_an_awaitable_is_awaited() -> None:
    """A plain function handing back a coroutine (a wrapper around an async check) is awaited,
    and the value it resolves to wins."""

    async def ask_service(**_: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"status": "answered by the service"}

    wrapper = on("before_tool", name="wrapper")(lambda **kwargs: ask_service(**kwargs))
    turn = await run_app(_agent(), Lattice(cache=[wrapper]))
    assert turn.tool_responses == [{"status": "answered by the service"}]


async def test_every_failure_of_a_handler_is_counted() -> None:
    """A handler failing on each of two tool calls is counted twice for that hook."""
    broken = on("before_tool", name="broken")(lambda **_: 1 / 0)
    script = [
        ScriptedResponse.call("lookup_charge", charge_id="c1"),
        ScriptedResponse.call("lookup_charge", charge_id="c2"),
        ScriptedResponse.text("Done."),
    ]
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])
    lattice = Lattice(handlers=[broken])
    turn = await run_app(agent, lattice)
    assert turn.tool_responses == [{"charge_id": "c1"}, {"charge_id": "c2"}]
    assert lattice.stats == {("error", "before_tool", "broken"): 2}
