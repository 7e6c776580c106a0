"""One Lattice on the App sees every agent's model and tool calls, in every topology."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.tools.agent_tool import AgentTool

from adk_lattice import Lattice
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse
from tests.support import Recorder, assert_balanced, run_app


def lookup_charge(charge_id: str) -> dict[str, object]:
    """Look up one charge by its id."""
    return {"charge_id": charge_id, "amount": 42.0}


def explode(reason: str) -> dict[str, object]:
    """A tool that always fails."""
    raise ValueError(f"tool failed: {reason}")


# ADK 2.13 deprecates the container agents in favour of Workflow, but they still run.
_container_agents = pytest.mark.filterwarnings(
    "ignore:.*is deprecated in favor of Workflow:DeprecationWarning"
)


def _agents(recorder: Recorder, hook: str) -> list[str | None]:
    return [o.agent for o in recorder.of(hook) if not o.synthesized]


async def test_transfer_reaches_the_specialist(recorder: Recorder) -> None:
    """After transfer_to_agent, the specialist's model and tool calls reach the same Lattice."""
    specialist = LlmAgent(
        name="refunds",
        model=FakeModel(
            [ScriptedResponse.call("lookup_charge", charge_id="c1"), ScriptedResponse.text("ok")]
        ),
        tools=[lookup_charge],
    )
    coordinator = LlmAgent(
        name="coordinator",
        model=FakeModel([ScriptedResponse.call("transfer_to_agent", agent_name="refunds")]),
        sub_agents=[specialist],
    )
    await run_app(coordinator, Lattice(telemetry=[recorder]))
    assert _agents(recorder, "before_model") == ["coordinator", "refunds", "refunds"]
    assert [o.tool for o in recorder.of("before_tool")] == ["transfer_to_agent", "lookup_charge"]
    assert_balanced(recorder.outcomes)


async def test_transfer_closes_the_coordinator(recorder: Recorder) -> None:
    """The coordinator ADK never calls after_agent for is closed with reason 'transferred'."""
    specialist = LlmAgent(name="refunds", model=FakeModel([ScriptedResponse.text("done")]))
    coordinator = LlmAgent(
        name="coordinator",
        model=FakeModel([ScriptedResponse.call("transfer_to_agent", agent_name="refunds")]),
        sub_agents=[specialist],
    )
    await run_app(coordinator, Lattice(telemetry=[recorder]))
    closes = {o.agent: o for o in recorder.of("after_agent")}
    assert closes["coordinator"].synthesized and closes["coordinator"].reason == "transferred"
    assert not closes["refunds"].synthesized


async def test_agent_tool_runs_as_its_own_invocation(recorder: Recorder) -> None:
    """An AgentTool's nested run is seen as its own invocation, and both end exactly once."""
    helper = LlmAgent(
        name="helper",
        model=FakeModel(
            [ScriptedResponse.call("lookup_charge", charge_id="c9"), ScriptedResponse.text("42")]
        ),
        tools=[lookup_charge],
    )
    root = LlmAgent(
        name="root",
        model=FakeModel(
            [ScriptedResponse.call("helper", request="charge c9"), ScriptedResponse.text("done")]
        ),
        tools=[AgentTool(helper)],
    )
    lattice = Lattice(telemetry=[recorder])
    await run_app(root, lattice)
    runs = {o.invocation_id for o in recorder.of("after_run")}
    assert len(runs) == 2
    assert "helper" in _agents(recorder, "before_model")
    assert "lookup_charge" in [o.tool for o in recorder.of("before_tool")]
    assert_balanced(recorder.outcomes)
    assert lattice.open_invocations == 0


@_container_agents
async def test_sequential_agent_children_are_all_seen(recorder: Recorder) -> None:
    """A SequentialAgent's container and each child get agent hooks and model calls seen."""
    first = LlmAgent(name="first", model=FakeModel([ScriptedResponse.text("one")]))
    second = LlmAgent(name="second", model=FakeModel([ScriptedResponse.text("two")]))
    await run_app(
        SequentialAgent(name="pipeline", sub_agents=[first, second]), Lattice(telemetry=[recorder])
    )
    assert _agents(recorder, "before_agent") == ["pipeline", "first", "second"]
    assert _agents(recorder, "before_model") == ["first", "second"]
    assert_balanced(recorder.outcomes)


@_container_agents
async def test_parallel_agent_children_are_all_seen(recorder: Recorder) -> None:
    """A ParallelAgent's interleaved children are each seen and each closed."""
    left = LlmAgent(
        name="left",
        model=FakeModel(
            [ScriptedResponse.call("lookup_charge", charge_id="L"), ScriptedResponse.text("l")]
        ),
        tools=[lookup_charge],
    )
    right = LlmAgent(name="right", model=FakeModel([ScriptedResponse.text("r")]))
    await run_app(
        ParallelAgent(name="fan", sub_agents=[left, right]), Lattice(telemetry=[recorder])
    )
    assert sorted(a or "" for a in _agents(recorder, "before_model")) == ["left", "left", "right"]
    assert [o.agent for o in recorder.of("before_tool")] == ["left"]
    assert_balanced(recorder.outcomes)


@_container_agents
async def test_loop_agent_iterations_are_all_seen(recorder: Recorder) -> None:
    """Each iteration of a LoopAgent's child reaches the Lattice and is closed."""
    worker = LlmAgent(
        name="worker",
        model=FakeModel([ScriptedResponse.text("pass 1"), ScriptedResponse.text("pass 2")]),
    )
    await run_app(
        LoopAgent(name="loop", sub_agents=[worker], max_iterations=2), Lattice(telemetry=[recorder])
    )
    assert _agents(recorder, "before_model") == ["worker", "worker"]
    assert _agents(recorder, "before_agent").count("worker") == 2
    assert_balanced(recorder.outcomes)


async def test_parallel_tool_calls_get_their_own_records(recorder: Recorder) -> None:
    """Two function calls in one model turn get two distinct per-call records, both closed."""
    agent = LlmAgent(
        name="billing",
        model=FakeModel(
            [
                ScriptedResponse(
                    function_calls=[
                        FunctionCall("lookup_charge", {"charge_id": "a"}),
                        FunctionCall("lookup_charge", {"charge_id": "b"}),
                    ]
                ),
                ScriptedResponse.text("both found"),
            ]
        ),
        tools=[lookup_charge],
    )
    await run_app(agent, Lattice(telemetry=[recorder]))
    befores = recorder.of("before_tool")
    afters = recorder.of("after_tool")
    assert len({o.function_call_id for o in befores}) == 2
    assert {id(o.call) for o in befores} == {id(o.call) for o in afters}
    assert_balanced(recorder.outcomes)


async def test_streaming_chunks_are_marked_partial(recorder: Recorder) -> None:
    """In SSE mode observers see each chunk as partial and one final after_model."""
    agent = LlmAgent(
        name="streamer",
        model=FakeModel([ScriptedResponse(text_chunks=["Hel", "lo ", "there"])]),
    )
    await run_app(agent, Lattice(telemetry=[recorder]), streaming=True)
    after = recorder.of("after_model")
    assert [o.partial for o in after] == [True, True, True, False]
    final = after[-1].final
    assert final.content.parts[0].text == "Hello there"
    assert_balanced(recorder.outcomes)


async def test_a_failing_tool_still_closes_everything(recorder: Recorder) -> None:
    """A tool that raises ends the run with every agent and call closed and one after_run."""
    agent = LlmAgent(
        name="billing",
        model=FakeModel([ScriptedResponse.call("explode", reason="boom")]),
        tools=[explode],
    )
    lattice = Lattice(telemetry=[recorder])
    with pytest.raises(ValueError, match="tool failed"):
        await run_app(agent, lattice)
    assert [o.tool for o in recorder.of("on_tool_error")] == ["explode"]
    end = recorder.of("after_run")[-1]
    assert end.synthesized and end.reason == "run_error"
    assert isinstance(end.error, ValueError)
    assert_balanced(recorder.outcomes)
    assert lattice.open_invocations == 0


async def test_a_failing_model_still_closes_everything(recorder: Recorder) -> None:
    """A model that raises reaches on_model_error and the run still ends exactly once."""
    agent = LlmAgent(
        name="billing",
        model=FakeModel([ScriptedResponse(error=ConnectionError("provider down"))]),
    )
    lattice = Lattice(telemetry=[recorder])
    with pytest.raises(ConnectionError):
        await run_app(agent, lattice)
    assert len(recorder.of("on_model_error")) == 1
    assert_balanced(recorder.outcomes)
    assert lattice.open_invocations == 0


async def test_a_cancelled_run_is_closed_as_cancelled(recorder: Recorder) -> None:
    """A run whose task is cancelled mid-tool is closed, with reason 'cancelled'."""
    started = asyncio.Event()

    async def slow_lookup(charge_id: str) -> dict[str, object]:
        """A lookup that never returns in time."""
        started.set()
        await asyncio.sleep(30)
        return {"charge_id": charge_id}

    agent = LlmAgent(
        name="billing",
        model=FakeModel([ScriptedResponse.call("slow_lookup", charge_id="c1")]),
        tools=[slow_lookup],
    )
    lattice = Lattice(telemetry=[recorder])
    task = asyncio.create_task(run_app(agent, lattice))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(5):
        await asyncio.sleep(0)
    end = recorder.of("after_run")
    assert len(end) == 1 and end[0].synthesized
    assert end[0].reason == "cancelled"
    assert_balanced(recorder.outcomes)
    assert lattice.open_invocations == 0


async def test_cancelled_sibling_tool_call_is_closed(recorder: Recorder) -> None:
    """When one of two parallel tool calls fails, the cancelled sibling is closed as cancelled."""

    async def slow_lookup(charge_id: str) -> dict[str, object]:
        """A lookup slower than its failing sibling."""
        await asyncio.sleep(30)
        return {"charge_id": charge_id}

    agent = LlmAgent(
        name="billing",
        model=FakeModel(
            [
                ScriptedResponse(
                    function_calls=[
                        FunctionCall("slow_lookup", {"charge_id": "a"}),
                        FunctionCall("explode", {"reason": "b"}),
                    ]
                )
            ]
        ),
        tools=[slow_lookup, explode],
    )
    lattice = Lattice(telemetry=[recorder])
    with pytest.raises(ValueError, match="tool failed"):
        await run_app(agent, lattice)
    closes = {o.tool: o for o in recorder.of("after_tool")}
    assert closes["slow_lookup"].reason == "cancelled"
    assert closes["explode"].reason == "error"
    assert_balanced(recorder.outcomes)
    assert lattice.open_invocations == 0


async def test_workflow_nodes_are_all_seen(recorder: Recorder) -> None:
    """A Workflow's LlmAgent nodes reach the Lattice; the Workflow itself has no agent name."""
    from google.adk.workflow import START, Workflow

    first = LlmAgent(name="first", model=FakeModel([ScriptedResponse.text("one")]))
    second = LlmAgent(name="second", model=FakeModel([ScriptedResponse.text("two")]))
    flow = Workflow(name="flow", edges=[(START, first), (first, second)])
    turn = await run_app(flow, Lattice(telemetry=[recorder]))
    assert turn.texts == ["one", "two"]
    assert _agents(recorder, "before_model") == ["first", "second"]
    assert recorder.of("before_run")[0].agent is None
    assert_balanced(recorder.outcomes)
