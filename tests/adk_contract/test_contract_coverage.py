"""ADK facts: a Runner plugin sees every agent (transfer, AgentTool, workflow agents)."""

from __future__ import annotations

import pytest
from contract_support import Recorder, run
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.loop_agent import LoopAgent
from google.adk.agents.parallel_agent import ParallelAgent
from google.adk.agents.sequential_agent import SequentialAgent
from google.adk.tools.agent_tool import AgentTool

from adk_lattice.testing import FakeModel, ScriptedResponse

# ADK 2.13 deprecates the workflow agents in favour of Workflow, which cannot yet be an
# LlmAgent sub-agent; apps still use them, so the lattice must keep seeing them.
workflow_agents_deprecated = pytest.mark.filterwarnings(
    "ignore:.*is deprecated in favor of Workflow:DeprecationWarning"
)


def leaf(name: str, *texts: str) -> LlmAgent:
    """An agent answering the given texts, one per model call."""
    return LlmAgent(name=name, model=FakeModel([ScriptedResponse.text(t) for t in texts]))


async def test_transfer_target_gets_both_agent_hooks_coordinator_no_after_agent() -> None:
    """Fact: after a transfer the target gets before/after_agent; the coordinator no after."""
    specialist = leaf("specialist", "refund done")
    coordinator = LlmAgent(
        name="coordinator",
        model=FakeModel([ScriptedResponse.call("transfer_to_agent", agent_name="specialist")]),
        sub_agents=[specialist],
    )
    rec = Recorder()
    await run(coordinator, rec)
    assert [r.agent for r in rec.of("before_agent")] == ["coordinator", "specialist"]
    assert [r.agent for r in rec.of("after_agent")] == ["specialist"]
    assert "specialist" in [r.agent for r in rec.of("before_model")]


async def test_agent_tool_nested_run_fires_run_hooks_with_a_new_invocation_id() -> None:
    """Fact: an AgentTool runs a nested Runner whose run hooks fire with a new invocation_id."""
    helper = leaf("helper", "helped")
    root = LlmAgent(
        name="root",
        model=FakeModel(
            [ScriptedResponse.call("helper", request="help me"), ScriptedResponse.text("done")]
        ),
        tools=[AgentTool(helper)],
    )
    rec = Recorder()
    await run(root, rec)
    runs = rec.of("before_run")
    assert len(runs) == 2
    assert runs[0].invocation_id != runs[1].invocation_id
    assert len(rec.of("after_run")) == 2
    helper_models = [r for r in rec.of("before_model") if r.agent == "helper"]
    assert [r.invocation_id for r in helper_models] == [runs[1].invocation_id]


@workflow_agents_deprecated
async def test_sequential_agent_fires_agent_hooks_for_container_and_children() -> None:
    """Fact: a SequentialAgent gets before/after_agent, and so does each child, in order."""
    root = SequentialAgent(name="seq", sub_agents=[leaf("one", "1"), leaf("two", "2")])
    rec = Recorder()
    await run(root, rec)
    agent_hooks = [(r.hook, r.agent) for r in rec.records if r.hook.endswith("_agent")]
    assert agent_hooks == [
        ("before_agent", "seq"),
        ("before_agent", "one"),
        ("after_agent", "one"),
        ("before_agent", "two"),
        ("after_agent", "two"),
        ("after_agent", "seq"),
    ]


@workflow_agents_deprecated
async def test_parallel_agent_fires_agent_and_model_hooks_for_every_child() -> None:
    """Fact: a ParallelAgent and each child get agent hooks; each child's model hooks fire."""
    root = ParallelAgent(name="par", sub_agents=[leaf("left", "l"), leaf("right", "r")])
    rec = Recorder()
    await run(root, rec)
    assert sorted(r.agent or "" for r in rec.of("before_agent")) == ["left", "par", "right"]
    assert sorted(r.agent or "" for r in rec.of("after_agent")) == ["left", "par", "right"]
    assert sorted(r.agent or "" for r in rec.of("after_model")) == ["left", "right"]


@workflow_agents_deprecated
async def test_loop_agent_fires_agent_hooks_per_iteration() -> None:
    """Fact: a LoopAgent gets agent hooks once; its child gets them on every iteration."""
    root = LoopAgent(name="loop", max_iterations=2, sub_agents=[leaf("step", "a", "b")])
    rec = Recorder()
    await run(root, rec)
    befores = [r.agent for r in rec.of("before_agent")]
    assert befores == ["loop", "step", "step"]
    assert [r.agent for r in rec.of("after_agent")] == ["step", "step", "loop"]
