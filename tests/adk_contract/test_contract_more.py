"""ADK facts: Workflow coverage, AgentTool isolation, close, on_event merges, deprecations."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import Recorder, event_texts, make_runner, run
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import Workflow

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool


def leaf(name: str, *texts: str) -> LlmAgent:
    return LlmAgent(name=name, model=FakeModel([ScriptedResponse.text(t) for t in texts]))


async def test_workflow_nodes_get_agent_hooks_but_the_workflow_does_not() -> None:
    """Fact: a Workflow's LlmAgent nodes get agent hooks, the Workflow none; ic.agent is None."""
    rec = Recorder()
    await run(Workflow(name="wf", edges=[("START", leaf("a", "A"), leaf("b", "B"))]), rec)
    assert [(r.hook, r.agent) for r in rec.records if r.hook.endswith("_agent")] == [
        ("before_agent", "a"),
        ("after_agent", "a"),
        ("before_agent", "b"),
        ("after_agent", "b"),
    ]
    assert rec.of("before_run")[0].kwargs["invocation_context"].agent is None


async def test_agent_tool_without_plugins_hides_the_inner_agent() -> None:
    """Fact: AgentTool(include_plugins=False) runs its agent with no plugin hooks at all."""
    root = LlmAgent(
        name="root",
        model=FakeModel(
            [ScriptedResponse.call("helper", request="x"), ScriptedResponse.text("done")]
        ),
        tools=[AgentTool(leaf("helper", "helped"), include_plugins=False)],
    )
    rec = Recorder()
    await run(root, rec)
    assert {r.agent for r in rec.records if r.agent} == {"root"}
    assert len(rec.of("before_run")) == 1


async def test_runner_close_calls_each_plugin_close_once() -> None:
    """Fact: runner.close() calls every plugin's close() exactly once."""
    closed: list[str] = []

    class Closing(Recorder):
        async def close(self) -> None:
            closed.append(self.name)

    runner, _ = make_runner(leaf("a", "x"), Closing("one"), Closing("two"))
    await runner.close()
    assert closed == ["one", "two"]


async def test_on_event_returned_event_merges_only_its_set_fields() -> None:
    """Fact: an Event returned by on_event merges only its explicitly set fields."""

    def tag(*, event: Event, **_: Any) -> Event:
        return Event(custom_metadata={"seen": True})

    rec = Recorder(returns={"on_event": tag})
    events = await run(leaf("a", "original text"), rec)
    assert event_texts(events) == ["original text"]
    assert events[-1].author == "a"
    assert events[-1].custom_metadata == {"seen": True}


async def test_errors_raised_in_on_agent_error_are_swallowed() -> None:
    """Fact: on_agent_error is notification-only; its exception does not replace the error."""

    def explode() -> dict[str, Any]:
        """Always fails."""
        raise LookupError("tool failed")

    agent = LlmAgent(
        name="a",
        model=FakeModel([ScriptedResponse.call("explode")]),
        tools=[function_tool(explode)],
    )
    rec = Recorder(raises={"on_agent_error": ValueError("observer bug")})
    with pytest.raises(LookupError, match="tool failed"):
        await run(agent, rec)


def test_runner_with_agent_and_plugins_is_deprecated() -> None:
    """Fact: Runner(agent=..., plugins=...) still works but warns DeprecationWarning."""
    with pytest.warns(DeprecationWarning, match="`plugins` argument is deprecated"):
        Runner(
            app_name="x",
            agent=leaf("a"),
            plugins=[Recorder()],
            session_service=InMemorySessionService(),
        )
