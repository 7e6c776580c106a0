"""The dispatch engine on real Runners: fail-closed denials, outcomes, timings and closes."""

from __future__ import annotations

import asyncio
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Lattice, current_call, on
from adk_lattice._chain import DENIAL_TEXT
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app

ran: list[str] = []


def issue_refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    ran.append(charge_id)
    return {"status": "refunded"}


def refund_agent() -> LlmAgent:
    ran.clear()
    script = [ScriptedResponse.call("issue_refund", charge_id="c1"), ScriptedResponse.text("Done.")]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[issue_refund])


def broken(hook: str, **options: Any) -> Any:
    def fail(**_: Any) -> None:
        raise RuntimeError("service down")

    return on(hook, name="broken", **options)(fail)  # type: ignore[arg-type]


async def test_a_failing_user_message_policy_keeps_the_users_words() -> None:
    """A failing on_user_message policy ends the run; the stored message is still the user's."""
    agent = refund_agent()
    lattice = Lattice(policy=[broken("on_user_message")])
    turn = await run_app(agent, lattice, "refund my charge c1")
    session = await turn.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=turn.session_id
    )
    assert session is not None
    user_events = [e for e in session.events if e.author == "user"]
    assert [e.content.parts[0].text for e in user_events] == ["refund my charge c1"]  # type: ignore[union-attr,index]
    assert turn.texts == [DENIAL_TEXT]
    assert agent.model.calls == 0  # type: ignore[union-attr]


async def test_a_failing_user_message_policy_does_not_deny_the_next_run() -> None:
    """After a run denied for a failing on_user_message policy, the next run is not denied."""
    calls = {"n": 0}

    @on("on_user_message", name="flaky")
    def flaky(**_: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("service down")

    agent = refund_agent()
    lattice = Lattice(policy=[flaky])
    first = await run_app(agent, lattice)
    second = await run_app(agent, lattice, runner=first.runner)
    assert first.texts == [DENIAL_TEXT]
    assert second.texts[-1] == "Done."


async def test_a_failing_cache_handler_set_to_deny_marks_the_call_denied() -> None:
    """A non-policy handler failing with on_error='deny' is a denial to after_tool and observers."""
    recorder = Recorder()
    seen: list[tuple[bool, str | None]] = []

    @on("after_tool")
    def look(**_: Any) -> None:
        call = current_call()
        assert call is not None
        seen.append((call.denied, call.short_circuit_tier))

    lattice = Lattice(
        cache=[broken("before_tool", on_error="deny")], handlers=[look], telemetry=[recorder]
    )
    await run_app(refund_agent(), lattice)
    assert ran == []
    assert seen == [(True, "cache")]
    (outcome,) = recorder.of("before_tool")
    assert (outcome.denied, outcome.reason, outcome.acted_tier) == (True, "handler_error", "cache")


async def test_a_failing_handler_set_to_deny_before_the_model_is_a_denied_outcome() -> None:
    """A handlers-tier before_model failing with on_error='deny' answers with the denial."""
    recorder = Recorder()
    lattice = Lattice(handlers=[broken("before_model", on_error="deny")], telemetry=[recorder])
    turn = await run_app(refund_agent(), lattice)
    assert turn.texts == [DENIAL_TEXT]
    (outcome,) = recorder.of("before_model")
    assert (outcome.denied, outcome.acted_by) == (True, "broken")
    (closed,) = recorder.of("after_model")
    assert (closed.synthesized, closed.denied, closed.reason) == (True, True, "short_circuit")


def _reply(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


async def test_a_policy_answer_before_the_model_is_a_denial_a_cache_one_is_not() -> None:
    """Observers see a policy's before_model answer as denied and a cache's as served."""
    recorder = Recorder()
    refusal = on("before_model", name="refuse")(lambda **_: _reply("No."))
    await run_app(refund_agent(), Lattice(policy=[refusal], telemetry=[recorder]))
    hit = on("before_model", name="hit")(lambda **_: _reply("cached"))
    await run_app(refund_agent(), Lattice(cache=[hit], telemetry=[recorder]))
    assert [(o.acted_by, o.denied) for o in recorder.of("before_model")] == [
        ("refuse", True),
        ("hit", False),
    ]


async def test_step_and_outcome_durations_measure_the_handlers_time() -> None:
    """A step's duration is the time its handler took, and the outcome's covers every step."""
    recorder = Recorder()

    @on("before_tool", name="slow")
    async def slow(**_: Any) -> None:
        await asyncio.sleep(0.05)

    loop = asyncio.get_running_loop()
    started = loop.time()
    await run_app(refund_agent(), Lattice(handlers=[slow], telemetry=[recorder]))
    wall = loop.time() - started
    (outcome,) = recorder.of("before_tool")
    (step,) = outcome.steps
    assert 0.05 <= step.duration <= outcome.duration <= wall
