"""ADK facts ProvenanceGuard relies on: nested runs copy state, the call event comes first,
another agent's events reach a model as "For context" text naming the author, and the tool
classes whose declarations ADK builds from the app's code exist."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import Recorder, make_runner, message
from google.adk.agents import BaseAgent, SequentialAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from adk_lattice.policy.provenance.channels import CODE_DECLARATIONS, code_declared_classes
from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool


async def _run(agent: LlmAgent, rec: Recorder, state: dict[str, Any] | None = None) -> Any:
    runner, service = make_runner(agent, rec)
    session = await service.create_session(app_name="contract", user_id="u", state=state or {})
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message("x")):
        pass
    return await service.get_session(app_name="contract", user_id="u", session_id=session.id)


def _nested(inner_tools: list[Any]) -> LlmAgent:
    inner = LlmAgent(
        name="helper",
        model=FakeModel([ScriptedResponse.call("note"), ScriptedResponse.text("done")]),
        tools=inner_tools,
    )
    script = [ScriptedResponse.call("helper", request="go"), ScriptedResponse.text("ok")]
    return LlmAgent(name="outer", model=FakeModel(script), tools=[AgentTool(inner)])


async def test_agent_tool_session_starts_from_a_copy_of_the_callers_state() -> None:
    """Fact: an AgentTool run's fresh session holds the caller's state (a taint record too)."""
    seen: list[Any] = []

    def note(tool_context: ToolContext) -> dict[str, Any]:
        """Record what the nested run's state holds."""
        seen.append((tool_context.session.id, tool_context.state.get("adk_lattice.provenance")))
        return {}

    rec = Recorder()
    outer = await _run(_nested([function_tool(note)]), rec, {"adk_lattice.provenance": {"v": 1}})
    ((inner_session_id, record),) = seen
    assert record == {"v": 1}
    assert inner_session_id != outer.id


async def test_agent_tool_forwards_nested_state_writes_to_the_caller() -> None:
    """Fact: state the nested run writes reaches the caller's session state."""

    def note(tool_context: ToolContext) -> dict[str, Any]:
        """Write a state key in the nested run."""
        tool_context.state["written_inside"] = True
        return {}

    outer = await _run(_nested([function_tool(note)]), Recorder())
    assert outer.state["written_inside"] is True


async def test_the_call_event_is_in_the_session_before_the_tool_hook() -> None:
    """Fact: in before_tool, the model event carrying the call is already in session.events."""

    def lookup() -> dict[str, Any]:
        """Look something up."""
        return {}

    found: list[bool] = []

    def before_tool(*, tool_context: ToolContext, **_: Any) -> None:
        ids = [fc.id for e in tool_context.session.events for fc in e.get_function_calls()]
        found.append(tool_context.function_call_id in ids)

    script = [ScriptedResponse.call("lookup"), ScriptedResponse.text("ok")]
    agent = LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(lookup)])
    await _run(agent, Recorder(returns={"before_tool": before_tool}))
    assert found == [True]


@pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning")
async def test_another_agents_words_reach_the_model_as_user_text_naming_the_author() -> None:
    """Fact: an earlier agent's text is relayed as a user-role "For context:" content whose
    next part starts ``[author] said:`` (the guard reads the author there)."""
    first = LlmAgent(name="first", model=FakeModel([ScriptedResponse.text("hello")]))
    model = FakeModel([ScriptedResponse.text("ok")])
    second = LlmAgent(name="second", model=model)
    await _run(SequentialAgent(name="flow", sub_agents=[first, second]), Recorder())  # type: ignore[arg-type]
    relayed = [c for c in model.requests[0].contents if c.parts and c.parts[0].text]
    relayed = [c for c in relayed if (c.parts[0].text or "").startswith("For context:")]
    assert [c.role for c in relayed] == ["user"]
    assert (relayed[0].parts[1].text or "").startswith("[first] said:")


def test_a_remote_a2a_agent_is_a_base_agent_not_an_llm_agent() -> None:
    """Fact: ``RemoteA2aAgent`` is no ``LlmAgent``, so the guard labels its events."""
    pytest.importorskip("a2a")
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    assert issubclass(RemoteA2aAgent, BaseAgent)
    assert not issubclass(RemoteA2aAgent, LlmAgent)


def test_the_instruction_placeholder_pattern_is_the_guards() -> None:
    """Fact: ADK fills the placeholders the guard reads (same pattern, same key names)."""
    from google.adk.flows.llm_flows.prompt import _instructions_utils as adk

    from adk_lattice.policy.provenance.channels import _PLACEHOLDER, _state_name

    assert adk._TEMPLATE_VAR_PATTERN.pattern == _PLACEHOLDER.pattern
    names = ["x", "user:x", "app:x", "temp:x", "a:x", "x:y:z", "1x", "user:", ":x", "x y"]
    assert [_state_name(n) for n in names] == [adk._is_valid_state_name(n) for n in names]


async def test_a_workflow_hands_a_nodes_output_on_as_a_user_event_marked_as_a_node_input() -> None:
    """Fact: a ``Workflow`` gives the next ``LlmAgent`` node the previous node's output as a
    user-authored event with a node path (2.13) or no invocation id (older releases), while
    the user's own message carries its invocation's id (the guard reads both marks)."""
    from google.adk.workflow import START, Workflow

    def fetch(node_input: Any = None) -> str:
        return "fetched text"

    seen: list[tuple[str, str, str]] = []

    def spy(**kw: Any) -> None:
        for e in kw["callback_context"]._invocation_context.session.events:
            if e.author == "user" and e.content and e.content.parts:
                seen.append((e.content.parts[0].text or "", e.node_info.path, e.invocation_id))

    node = LlmAgent(name="reader", model=FakeModel([ScriptedResponse.text("ok")]))
    flow = Workflow(name="flow", edges=[(START, fetch), (fetch, node)])
    await _run(flow, Recorder(returns={"before_model": spy}))  # type: ignore[arg-type]
    (typed, _, invocation), (text, path, node_invocation) = seen
    assert (typed, text) == ("x", "fetched text")
    assert invocation and (path or not node_invocation)


def test_every_code_declared_tool_class_is_a_tool_of_the_installed_adk() -> None:
    """Each class ``channels.CODE_DECLARATIONS`` names imports and is a ``BaseTool``."""
    classes = code_declared_classes()
    assert len(classes) == len(CODE_DECLARATIONS)
    assert all(issubclass(cls, BaseTool) for cls in classes)
