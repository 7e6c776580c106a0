"""Tool calls a run leaves open: one record per call, and one close each, on real Runners."""

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
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app


def failing_lookup(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    raise ValueError("ledger offline")


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id}


def _agent(tool: Any) -> LlmAgent:
    script = [ScriptedResponse.call(tool.__name__, charge_id="c1"), ScriptedResponse.text("Done.")]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[tool])


async def test_a_tool_error_handler_sees_the_record_before_tool_filled() -> None:
    """on_tool_error handlers get the same call record as before_tool, with its data."""
    seen: list[Any] = []

    @on("before_tool")
    def mark(**_: Any) -> None:
        call = current_call()
        assert call is not None
        call.data["started_by"] = "mark"
        seen.append(call)

    @on("on_tool_error")
    def recover(**_: Any) -> dict[str, Any]:
        seen.append(current_call())
        return {"status": "unavailable"}

    turn = await run_app(_agent(failing_lookup), Lattice(handlers=[mark, recover]))
    assert turn.texts[-1] == "Done."
    assert len(seen) == 2 and seen[1] is seen[0]
    assert seen[1].data == {"started_by": "mark"}


class Slow:
    """A tool that runs until released, announcing when it started."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

        async def lookup_charge(charge_id: str) -> dict[str, Any]:
            """Look up a charge."""
            self.started.set()
            await self.release.wait()
            return {"charge_id": charge_id}

        self.lookup_charge = lookup_charge


async def test_closing_the_lattice_mid_tool_closes_the_call_as_abandoned() -> None:
    """close() during a running tool call gives observers its after_tool, abandoned, with its
    tool name and call id."""
    recorder = Recorder()
    slow = Slow()
    lattice = Lattice(telemetry=[recorder])
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    await lattice.close()
    (opened,) = recorder.of("before_tool")
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason) == (True, "abandoned")
    assert (closed.tool, closed.agent) == ("lookup_charge", "billing")
    assert closed.function_call_id is not None
    assert closed.function_call_id == opened.function_call_id
    assert closed.call is opened.call
    slow.release.set()
    await asyncio.wait_for(task, 10)


class BrokenAfterLattice(BasePlugin):
    """A plugin after the lattice whose before_tool fails, ending the run."""

    def __init__(self) -> None:
        super().__init__(name="broken_after")

    async def before_tool_callback(self, **_: Any) -> None:
        raise RuntimeError("audit service down")


async def _fail_run_mid_tool(lattice: Lattice) -> RuntimeError:
    """Run an app whose plugin after the lattice fails before a tool; return the run's error."""
    agent = _agent(lookup_charge)
    app = App(name="app", root_agent=agent, plugins=[lattice, BrokenAfterLattice()])
    runner = Runner(app=app, session_service=InMemorySessionService())
    with pytest.raises(RuntimeError, match="audit service down") as info:
        await run_app(agent, lattice, runner=runner)
    return info.value


async def test_a_call_open_when_its_run_fails_is_closed_as_cancelled() -> None:
    """A tool call the run's failure interrupted is closed for observers as cancelled, once."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    await _fail_run_mid_tool(lattice)
    (end,) = recorder.of("after_run")
    assert (end.synthesized, end.reason) == (True, "run_error")
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason, closed.tool) == (True, "cancelled", "lookup_charge")
    assert lattice.open_invocations == 0


async def _cancel_mid_tool(lattice: Lattice) -> None:
    """Run the app until its tool starts, then cancel the run's task."""
    slow = Slow()
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_cancelled_run_closed_again_by_close_ends_once() -> None:
    """A run cancelled mid-tool and then swept by close() reports one after_run, not two."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    await _cancel_mid_tool(lattice)
    await lattice.close()
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(recorder.of("after_run")) == 1
    assert len(recorder.of("after_tool")) == 1


async def test_closing_the_lattice_mid_model_call_closes_it_and_its_agent() -> None:
    """close() during a model call gives observers its after_model and the agent's after_agent,
    both abandoned, the model's close carrying its callback context and no response."""
    recorder = Recorder()
    agent = LlmAgent(name="billing", model=FakeModel([ScriptedResponse.text("Done.", delay=30)]))
    started = asyncio.Event()
    mark = on("before_model", name="started")(lambda **_: started.set())
    lattice = Lattice(handlers=[mark], telemetry=[recorder])
    task = asyncio.create_task(run_app(agent, lattice))
    await asyncio.wait_for(started.wait(), 10)
    await lattice.close()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (opened,) = recorder.of("before_model")
    (closed,) = recorder.of("after_model")
    assert (closed.synthesized, closed.reason, closed.agent) == (True, "abandoned", "billing")
    assert closed.args["callback_context"] is opened.args["callback_context"]
    assert closed.args["llm_response"] is None
    (ended,) = [o for o in recorder.of("after_agent") if o.synthesized]
    assert (ended.reason, ended.agent) == ("abandoned", "billing")


async def test_a_tool_error_close_carries_the_tools_error() -> None:
    """A tool raising unrecovered is closed for observers as an error, carrying that error."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    with pytest.raises(ValueError, match="ledger offline"):
        await run_app(_agent(failing_lookup), lattice)
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason) == (True, "error")
    assert isinstance(closed.error, ValueError)
    assert str(closed.error) == "ledger offline"


async def test_a_call_interrupted_by_a_failing_run_carries_the_runs_error() -> None:
    """A tool call closed because its run failed carries the error the run ended with."""
    recorder = Recorder()
    error = await _fail_run_mid_tool(Lattice(telemetry=[recorder]))
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason) == (True, "cancelled")
    assert closed.error is error


async def test_a_run_cancelled_just_before_close_is_reported_cancelled() -> None:
    """close() right after a run's cancellation reports that run and its tool call as
    cancelled, not abandoned."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    await _cancel_mid_tool(lattice)
    await lattice.close()
    (end,) = recorder.of("after_run")
    assert (end.synthesized, end.reason) == (True, "cancelled")
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason) == (True, "cancelled")


async def test_closing_a_cancelled_run_in_the_background_logs_no_loop_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The background close of a cancelled run ends cleanly: the event loop logs no error."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    await _cancel_mid_tool(lattice)
    await lattice.close()
    for _ in range(3):
        await asyncio.sleep(0)
    assert [r for r in caplog.records if r.name == "asyncio"] == []


class SlowToReport(Recorder):
    """A recorder that takes a while to note an abandoned run's end."""

    async def observe(self, outcome: Any) -> None:  # type: ignore[override]
        if outcome.hook == "after_run" and outcome.reason == "abandoned":
            await asyncio.sleep(0.05)
        super().observe(outcome)


async def test_an_evicted_runs_close_is_delivered_before_close_returns() -> None:
    """close() returns only after the close of a run evicted past max_invocations is observed."""
    recorder = SlowToReport()
    slow = Slow()
    lattice = Lattice(telemetry=[recorder], max_invocations=1)
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    await run_app(LlmAgent(name="chat", model=FakeModel([ScriptedResponse.text("Hi.")])), lattice)
    await lattice.close()
    ends = [o.reason for o in recorder.of("after_run")]
    assert sorted(ends, key=str) == [None, "abandoned"]
    slow.release.set()
    await asyncio.wait_for(task, 10)


async def test_a_synthesized_tool_close_has_the_hooks_argument_names() -> None:
    """An abandoned tool call's after_tool reaches observers with after_tool's argument names,
    each None: nothing ran to fill them."""
    recorder = Recorder()
    slow = Slow()
    lattice = Lattice(telemetry=[recorder])
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    await lattice.close()
    (closed,) = recorder.of("after_tool")
    assert closed.args == {"tool": None, "tool_args": None, "tool_context": None, "result": None}
    slow.release.set()
    await asyncio.wait_for(task, 10)


class AnswersTools(BasePlugin):
    """A plugin registered before the lattice that answers every tool call itself."""

    def __init__(self) -> None:
        super().__init__(name="answers_tools")

    async def before_tool_callback(self, **_: Any) -> dict[str, Any]:
        return {"status": "answered elsewhere"}


async def test_a_call_another_plugin_answered_ends_once_with_its_real_after_tool() -> None:
    """A tool call answered by a plugin ahead of the lattice gets its real after_tool only,
    no extra close at the run's end."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    agent = _agent(lookup_charge)
    app = App(name="app", root_agent=agent, plugins=[AnswersTools(), lattice])
    await run_app(agent, lattice, runner=Runner(app=app, session_service=InMemorySessionService()))
    assert [o.synthesized for o in recorder.of("after_tool")] == [False]


class RewritesAnswers(BasePlugin):
    """A plugin registered before the lattice that replaces every model answer."""

    def __init__(self) -> None:
        super().__init__(name="rewrites_answers")

    async def after_model_callback(self, **_: Any) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Hi.")]))


async def test_a_model_call_whose_end_another_plugin_took_is_closed_at_the_run_end() -> None:
    """A model call whose after_model a plugin ahead of the lattice took over (so the lattice
    never saw it end) is closed as abandoned when the run ends."""
    recorder = Recorder()
    lattice = Lattice(telemetry=[recorder])
    agent = LlmAgent(name="chat", model=FakeModel([ScriptedResponse.text("Hello.")]))
    app = App(name="app", root_agent=agent, plugins=[RewritesAnswers(), lattice])
    await run_app(agent, lattice, runner=Runner(app=app, session_service=InMemorySessionService()))
    (closed,) = recorder.of("after_model")
    assert (closed.synthesized, closed.reason, closed.agent) == (True, "abandoned", "chat")
    assert recorder.hooks()[-2:] == ["after_model", "after_run"]


async def test_a_recovered_call_to_a_made_up_tool_is_closed_at_once() -> None:
    """A call to a tool that does not exist, answered by on_tool_error, is closed right then as
    an error (ADK runs no after_tool for it), not left open until the run ends."""
    recorder = Recorder()
    recover = on("on_tool_error", name="recover")(lambda **_: {"status": "no such tool"})
    script = [ScriptedResponse.call("made_up", charge_id="c1"), ScriptedResponse.text("Done.")]
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])
    turn = await run_app(agent, Lattice(handlers=[recover], telemetry=[recorder]))
    assert turn.tool_responses == [{"status": "no such tool"}]
    hooks = recorder.hooks()
    assert hooks[hooks.index("on_tool_error") + 1] == "after_tool"
    (closed,) = recorder.of("after_tool")
    assert (closed.synthesized, closed.reason) == (True, "error")
    assert isinstance(closed.error, ValueError)
