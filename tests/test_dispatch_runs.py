"""Whose run an outcome belongs to, and how runs that never end cleanly are closed."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice, configure, on
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app


class Slow:
    """A tool that runs until released, then fails or answers as told."""

    def __init__(self, *, fail: bool = False) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

        async def lookup_charge(charge_id: str) -> dict[str, Any]:
            """Look up a charge."""
            self.started.set()
            await self.release.wait()
            if fail:
                raise ValueError("ledger offline")
            return {"charge_id": charge_id}

        self.lookup_charge = lookup_charge


def _agent(tool: Any) -> LlmAgent:
    script = [ScriptedResponse.call(tool.__name__, charge_id="c1"), ScriptedResponse.text("Done.")]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[tool])


def _chat(*, delay: float = 0.0) -> LlmAgent:
    return LlmAgent(name="chat", model=FakeModel([ScriptedResponse.text("Hi.", delay=delay)]))


async def test_outcomes_name_the_app_user_and_session_of_their_run(recorder: Recorder) -> None:
    """An outcome's invocation record carries the app, user and session the run belongs to."""
    turn = await run_app(_chat(), Lattice(telemetry=[recorder]), user_id="alice")
    (start,) = recorder.of("before_run")
    assert start.invocation is not None
    assert (start.invocation.app_name, start.invocation.user_id) == ("app", "alice")
    assert start.invocation.session_id == turn.session_id


async def test_hooks_after_close_are_still_attributed_to_their_run() -> None:
    """Hooks ADK runs after close() abandoned a run still name that run and its session."""
    recorder = Recorder()
    slow = Slow()
    lattice = Lattice(telemetry=[recorder])
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    await lattice.close()
    (opened,) = recorder.of("before_tool")
    slow.release.set()
    turn = await asyncio.wait_for(task, 10)
    late = [o for o in recorder.of("after_tool") if not o.synthesized]
    assert [o.invocation_id for o in late] == [opened.invocation_id]
    assert late[0].invocation is not None and late[0].invocation.session_id == turn.session_id


async def test_a_tool_failing_after_close_is_still_recovered_by_its_handler() -> None:
    """A tool that fails after close() abandoned its run is recovered by on_tool_error as usual."""
    slow = Slow(fail=True)
    recover = on("on_tool_error", name="recover")(lambda **_: {"status": "unavailable"})
    lattice = Lattice(handlers=[recover], telemetry=())
    task = asyncio.create_task(run_app(_agent(slow.lookup_charge), lattice))
    await asyncio.wait_for(slow.started.wait(), 10)
    await lattice.close()
    slow.release.set()
    turn = await asyncio.wait_for(task, 10)
    assert turn.tool_responses == [{"status": "unavailable"}]
    assert turn.texts[-1] == "Done."


async def test_a_run_cut_short_in_a_task_that_lives_on_is_closed_as_abandoned() -> None:
    """A run cut by asyncio.timeout is reported abandoned once the task that caught it ends."""
    recorder = Recorder()
    timeouts: list[asyncio.Timeout] = []
    # The timeout expires as the model is called, so the run is cut mid-way on any machine.
    expire = on("before_model", name="expire")(
        lambda **_: timeouts[0].reschedule(asyncio.get_running_loop().time())
    )
    lattice = Lattice(handlers=[expire], telemetry=[recorder])

    async def cut_run() -> None:
        async with asyncio.timeout(None) as timeout:
            timeouts.append(timeout)
            await run_app(_chat(delay=30), lattice)

    async def caller() -> None:
        with pytest.raises(TimeoutError):
            await cut_run()

    await asyncio.create_task(caller())
    for _ in range(100):
        if recorder.of("after_run"):
            break
        await asyncio.sleep(0.01)
    (end,) = recorder.of("after_run")
    assert (end.synthesized, end.reason) == (True, "abandoned")
    assert lattice.open_invocations == 0


async def test_a_finished_run_leaves_nothing_holding_the_lattice_on_its_task() -> None:
    """Once a run ends, the task that ran it no longer keeps the lattice's handlers alive."""
    recorder = Recorder()
    alive = weakref.ref(recorder)
    await run_app(_chat(), Lattice(telemetry=[recorder]))
    del recorder
    gc.collect()
    assert alive() is None


async def test_an_error_hooks_outcome_carries_the_error() -> None:
    """Observers get on_tool_error's outcome with the error the tool raised."""
    recorder = Recorder()
    slow = Slow(fail=True)
    slow.release.set()
    recover = on("on_tool_error", name="recover")(lambda **_: {"status": "unavailable"})
    await run_app(_agent(slow.lookup_charge), Lattice(handlers=[recover], telemetry=[recorder]))
    (failed,) = recorder.of("on_tool_error")
    assert isinstance(failed.error, ValueError) and str(failed.error) == "ledger offline"


async def test_an_observer_set_to_raise_stops_the_run_when_it_fails() -> None:
    """An observer with on_error='raise' that fails ends the run with an error, not a log line."""

    class Audit:
        name = "audit"

        def observe(self, outcome: Any) -> None:
            if outcome.hook == "before_run":
                raise ConnectionError("audit sink down")

    agent = _chat()
    lattice = Lattice(telemetry=[configure(Audit(), on_error="raise")])
    with pytest.raises(RuntimeError, match="audit sink down"):
        await run_app(agent, lattice)
    assert agent.model.calls == 0  # type: ignore[union-attr]


async def test_a_decider_not_asking_for_chunks_sees_only_the_final_answer() -> None:
    """An after_model handler without partial=True runs on the final response, never a chunk."""
    seen: list[bool] = []
    look = on("after_model", name="look")(lambda **kw: seen.append(kw["llm_response"].partial))
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    agent = LlmAgent(name="chat", model=model)
    await run_app(agent, Lattice(handlers=[look], telemetry=()), streaming=True)
    assert len(seen) == 1 and not seen[0]
