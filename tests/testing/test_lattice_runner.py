"""LatticeRunner: a real Runner over an App carrying a Lattice, for integration tests."""

from __future__ import annotations

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig

from adk_lattice import Lattice
from adk_lattice.testing import FakeModel, LatticeRunner, RecordingHandler, ScriptedResponse


async def test_lattice_sees_the_run() -> None:
    """The given Lattice is registered on the App and sees the agent's hooks."""
    rec = RecordingHandler(["before_agent", "after_agent"])
    runner = LatticeRunner(
        model=FakeModel([ScriptedResponse.text("hi")]), lattice=Lattice(handlers=[rec])
    )
    await runner.run("hello")
    assert [(c.hook, c.kwargs["agent"].name) for c in rec.calls] == [
        ("before_agent", "agent"),
        ("after_agent", "agent"),
    ]


async def test_new_session_starts_a_fresh_conversation() -> None:
    """new_session=True gives the user a new session with only the new turn."""
    runner = LatticeRunner(
        model=FakeModel([ScriptedResponse.text("a"), ScriptedResponse.text("b")])
    )
    await runner.run("one")
    first = (await runner.session()).id
    await runner.run("two", new_session=True)
    second = await runner.session()
    assert second.id != first
    assert [e.author for e in second.events] == ["user", "agent"]


async def test_session_before_any_run_is_a_lookup_error() -> None:
    """Asking for a user's session before they ran is a LookupError naming the user."""
    with pytest.raises(LookupError, match="'ann'"):
        await LatticeRunner().session("ann")


async def test_streaming_and_run_config_together_are_refused() -> None:
    """streaming=True together with a run_config is a TypeError."""
    with pytest.raises(TypeError, match="not both"):
        await LatticeRunner().run("hi", streaming=True, run_config=RunConfig())


def test_model_with_own_agent_is_refused() -> None:
    """model= together with agent= is a TypeError (the model would go unused)."""
    agent = LlmAgent(name="a", model=FakeModel())
    with pytest.raises(TypeError, match="model="):
        LatticeRunner(agent, model=FakeModel())


async def test_texts_leave_out_partial_chunks_unless_asked() -> None:
    """texts() gives final texts; texts(partial=True) includes the chunks."""
    runner = LatticeRunner(model=FakeModel([ScriptedResponse(text_chunks=["a", "b"])]))
    events = await runner.run("hi", streaming=True)
    assert runner.texts(events) == ["ab"]
    assert runner.texts(events, partial=True) == ["a", "b", "ab"]
