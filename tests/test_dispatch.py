"""The dispatch engine on real Runners: fail-closed denials, outcomes, timings and closes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, current_call, on
from adk_lattice._chain import DENIAL_TEXT
from adk_lattice._dispatch import MAX_OPEN, push_open, remove_open
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


def _bare_ctx(invocation_id: str, agent: Any) -> Any:
    return type("Ctx", (), {"invocation_id": invocation_id, "agent": agent, "session": None})()


async def test_an_evicted_invocation_is_closed_once_and_never_tracked_again() -> None:
    """Past max_invocations the oldest run is closed as abandoned, and its late hooks do not
    open it again or close it a second time."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder], max_invocations=1)
    agent = refund_agent()
    first, second = _bare_ctx("inv-1", agent), _bare_ctx("inv-2", agent)
    await lattice.before_run_callback(invocation_context=first)
    await lattice.before_run_callback(invocation_context=second)
    await asyncio.sleep(0.01)  # the eviction closes the run in a task of its own
    await lattice.before_run_callback(invocation_context=first)  # a late hook of inv-1
    await asyncio.sleep(0.01)
    ends = [(o.invocation_id, o.reason) for o in recorder.of("after_run")]
    assert ends == [("inv-1", "abandoned")]
    assert lattice.open_invocations == 1
    await lattice.close()


async def test_a_run_closed_by_close_is_not_tracked_again_by_its_late_hooks() -> None:
    """After close() abandons a run, a late hook of that run leaves nothing open."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    ctx = _bare_ctx("inv-1", refund_agent())
    await lattice.before_run_callback(invocation_context=ctx)
    await lattice.close()
    await lattice.before_run_callback(invocation_context=ctx)
    assert lattice.open_invocations == 0
    assert [o.reason for o in recorder.of("after_run")] == ["abandoned"]


def failing_lookup(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    raise ValueError("ledger offline")


async def test_a_failed_run_reports_its_error_on_every_synthesized_end() -> None:
    """When a tool's error ends the run, the closes observers get carry that error."""
    recorder = Recorder()
    script = [ScriptedResponse.call("failing_lookup", charge_id="c1")]
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[failing_lookup])
    with pytest.raises(ValueError, match="ledger offline"):
        await run_app(agent, Lattice(telemetry=[recorder]))
    (end,) = recorder.of("after_run")
    assert (end.synthesized, end.reason) == (True, "run_error")
    assert isinstance(end.error, ValueError)
    assert end.args == {"invocation_context": None, "error": end.error}
    assert end.invocation is not None and end.invocation.invocation_id == end.invocation_id
    closed_agent = [o for o in recorder.of("after_agent") if o.synthesized]
    assert [(o.reason, o.error is end.error) for o in closed_agent] == [("error", True)]


async def test_a_short_circuited_model_call_is_closed_with_the_answer_given() -> None:
    """Observers see the after_model close of a before_model short-circuit carry its answer."""
    recorder = Recorder()
    hit = on("before_model", name="hit")(lambda **_: _reply("cached"))
    await run_app(refund_agent(), Lattice(cache=[hit], telemetry=[recorder]))
    (closed,) = recorder.of("after_model")
    assert closed.synthesized
    assert closed.value is not None and closed.value.content.parts[0].text == "cached"
    assert closed.invocation is not None


def test_open_entries_are_bounded_dropping_the_oldest() -> None:
    """Past MAX_OPEN open agents or model calls, the oldest entry is dropped."""
    opened: list[tuple[str, dict[str, Any]]] = []
    for i in range(MAX_OPEN + 1):
        push_open(opened, (f"a{i}", {}))
    assert len(opened) == MAX_OPEN
    assert (opened[0][0], opened[-1][0]) == ("a1", f"a{MAX_OPEN}")


def test_closing_an_agent_removes_its_innermost_entry_only() -> None:
    """remove_open drops the latest entry of that name, keeps the rest, and tolerates none."""
    opened: list[tuple[str, dict[str, Any]]] = [
        ("a", {"n": 1}),
        ("b", {}),
        ("c", {}),
        ("a", {"n": 2}),
    ]
    remove_open(opened, "a")
    remove_open(opened, "b")
    assert opened == [("a", {"n": 1}), ("c", {})]
    empty: list[tuple[str, dict[str, Any]]] = []
    remove_open(empty, "a")
    assert empty == []


class ShortCircuit(BasePlugin):
    """Another plugin, registered before the lattice, answering every tool call itself."""

    def __init__(self) -> None:
        super().__init__(name="short_circuit")

    async def before_tool_callback(self, **_: Any) -> dict[str, Any]:
        return {"status": "answered elsewhere"}


async def test_after_tool_gets_a_call_record_when_another_plugin_answered_first() -> None:
    """A tool call another plugin short-circuited still reaches after_tool with its ids."""
    seen: list[tuple[Any, ...]] = []

    @on("after_tool")
    def look(**_: Any) -> None:
        call = current_call()
        assert call is not None
        seen.append((bool(call.function_call_id), call.tool, call.agent, bool(call.invocation_id)))

    lattice = Lattice(handlers=[look])
    app = App(name="app", root_agent=refund_agent(), plugins=[ShortCircuit(), lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    await run_app(app.root_agent, lattice, runner=runner)
    assert seen == [(True, "issue_refund", "billing", True)]
    assert lattice.open_invocations == 0


async def test_a_hanging_observer_is_cut_off_at_its_timeout() -> None:
    """An async observer past its timeout is counted as failed and the run completes."""

    class Hangs:
        name = "hangs"
        timeout = 0.05

        async def observe(self, outcome: Any) -> None:
            await asyncio.sleep(3600)

    lattice = Lattice(telemetry=[Hangs()])
    turn = await asyncio.wait_for(run_app(refund_agent(), lattice), 30)
    assert turn.texts[-1] == "Done."
    assert lattice.stats[("observer_error", "before_run", "hangs")] == 1


async def test_a_partial_observer_after_a_final_only_one_still_sees_chunks() -> None:
    """Streamed chunks reach every partial observer, wherever it stands in the list."""
    final_only, chunks = Recorder(name="final", partial=False), Recorder(name="chunks")
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    agent = LlmAgent(name="billing", model=model)
    await run_app(agent, Lattice(telemetry=[final_only, chunks]), streaming=True)
    assert any(o.partial for o in chunks.outcomes)
    assert not any(o.partial for o in final_only.outcomes)


async def test_every_failure_of_an_observer_is_counted() -> None:
    """An observer failing on each of two tool calls is counted twice for that hook."""

    class Audit:
        name = "audit"

        def observe(self, outcome: Any) -> None:
            if outcome.hook == "before_tool":
                raise ConnectionError("audit sink down")

    script = [
        ScriptedResponse.call("issue_refund", charge_id="c1"),
        ScriptedResponse.call("issue_refund", charge_id="c2"),
        ScriptedResponse.text("Done."),
    ]
    ran.clear()
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[issue_refund])
    lattice = Lattice(telemetry=[Audit()])
    turn = await run_app(agent, lattice)
    assert (ran, turn.texts[-1]) == (["c1", "c2"], "Done.")
    assert lattice.stats == {("observer_error", "before_tool", "audit"): 2}


async def test_a_runs_own_outcomes_name_its_root_agent(recorder: Recorder) -> None:
    """before_run and after_run outcomes name the agent the run started with."""
    await run_app(refund_agent(), Lattice(telemetry=[recorder]))
    assert [(o.hook, o.agent) for o in recorder.outcomes if o.hook.endswith("_run")] == [
        ("before_run", "billing"),
        ("after_run", "billing"),
    ]
