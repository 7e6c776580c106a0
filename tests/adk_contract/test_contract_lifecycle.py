"""ADK facts: registration, cancellation and early close of a run."""

from __future__ import annotations

import asyncio

import pytest
from contract_support import ADK_VERSION, Recorder, make_runner, message
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool


def lookup(charge_id: str) -> dict[str, str]:
    """Look up a charge."""
    return {"charge_id": charge_id}


async def test_cancelled_run_calls_neither_after_run_nor_on_run_error() -> None:
    """Fact: a run task cancelled mid-model-call gets neither after_run nor on_run_error.

    Before 2.11 after_run runs, inside the task being cancelled.
    """
    in_model = asyncio.Event()
    cancelling: list[int] = []

    def mark(**_: object) -> None:
        in_model.set()

    def end(**_: object) -> None:
        task = asyncio.current_task()
        cancelling.append(task.cancelling() if task is not None else 0)

    model = FakeModel([ScriptedResponse(text_chunks=["late"], delay=30)])
    rec = Recorder(returns={"before_model": mark, "after_run": end})
    runner, service = make_runner(LlmAgent(name="a", model=model), rec)
    session = await service.create_session(app_name="contract", user_id="u")

    async def consume() -> None:
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message=message("x")
        ):
            pass

    task = asyncio.create_task(consume())
    await in_model.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    if ADK_VERSION >= (2, 11):
        assert rec.of("after_run") == []
    else:
        assert cancelling == [1]
    assert rec.of("on_run_error") == []


async def test_early_close_of_the_event_stream_still_runs_after_run() -> None:
    """Fact: closing the run's generator early (aclose) still runs after_run."""
    script = [ScriptedResponse.call("lookup", charge_id="c1"), ScriptedResponse.text("ok")]
    agent = LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(lookup)])
    rec = Recorder()
    runner, service = make_runner(agent, rec)
    session = await service.create_session(app_name="contract", user_id="u")
    stream = runner.run_async(user_id="u", session_id=session.id, new_message=message("x"))
    await anext(stream)
    await stream.aclose()
    assert len(rec.of("after_run")) == 1
    assert rec.of("before_tool") == []


def test_runner_with_app_and_plugins_raises_value_error() -> None:
    """Fact: Runner(app=..., plugins=...) raises ValueError."""
    app = App(name="contract", root_agent=LlmAgent(name="a", model=FakeModel()))
    with pytest.raises(ValueError, match="plugins"):
        Runner(app=app, session_service=InMemorySessionService(), plugins=[Recorder()])


def test_duplicate_plugin_names_raise_value_error() -> None:
    """Fact: two plugins with the same name raise ValueError."""
    root = LlmAgent(name="a", model=FakeModel())
    with pytest.raises(ValueError, match="already registered"):
        make_runner(root, Recorder("twin"), Recorder("twin"))
