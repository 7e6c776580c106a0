"""Fake contexts: real ADK contexts, requests, responses and tools for direct handler calls."""

from __future__ import annotations

import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_lattice.testing import (
    FakeModel,
    FunctionCall,
    callback_context,
    function_tool,
    invocation_context,
    llm_request,
    llm_response,
    tool_context,
)


def lookup_charge(charge_id: str) -> dict[str, str]:
    """Look up one charge by its id."""
    return {"charge_id": charge_id}


def test_callback_context_is_adks_callback_context() -> None:
    """callback_context builds an instance of ADK's own CallbackContext class."""
    assert isinstance(callback_context(), CallbackContext)


def test_tool_context_is_adks_tool_context() -> None:
    """tool_context builds an instance of ADK's own ToolContext class."""
    assert isinstance(tool_context(), ToolContext)


def test_callback_context_carries_the_chosen_identity() -> None:
    """Agent name, invocation id, user id, app name and session id are the ones asked for."""
    ctx = callback_context(
        agent_name="billing",
        invocation_id="inv-1",
        user_id="ann",
        app_name="shop",
        session_id="s-1",
    )
    assert (ctx.agent_name, ctx.invocation_id, ctx.user_id) == ("billing", "inv-1", "ann")
    assert (ctx.session.app_name, ctx.session.id) == ("shop", "s-1")


def test_callback_context_has_no_function_call_id() -> None:
    """A callback context, as in model hooks, has function_call_id None."""
    assert callback_context().function_call_id is None


def test_tool_context_carries_the_function_call_id() -> None:
    """tool_context sets the chosen function call id."""
    assert tool_context(function_call_id="fc-9").function_call_id == "fc-9"


def test_invocation_ids_differ_by_default() -> None:
    """Two contexts without an explicit invocation id get different ids."""
    assert callback_context().invocation_id != callback_context().invocation_id


def test_prefixed_state_keys_are_readable() -> None:
    """user: and app: keys, routed by the session service, read back through ctx.state."""
    ctx = tool_context(state={"user:is_manager": True, "app:plan": "pro", "n": 1})
    assert ctx.state["user:is_manager"] is True
    assert ctx.state["app:plan"] == "pro"
    assert ctx.state["n"] == 1


def test_prefixed_state_is_stored_at_user_scope() -> None:
    """A user: key lands in the session service's user state, as in a real run."""
    ctx = invocation_context(state={"user:is_manager": True}, user_id="ann", app_name="shop")
    assert ctx.session_service.user_state["shop"]["ann"] == {"is_manager": True}


def test_state_writes_are_recorded_as_a_delta() -> None:
    """A handler's write shows in ctx.state and in the context's state delta."""
    ctx = callback_context(state={"n": 1})
    ctx.state["n"] = 2
    assert ctx.state["n"] == 2
    assert ctx.actions.state_delta == {"n": 2}


def test_given_agent_is_the_current_agent() -> None:
    """A given agent becomes the context's agent."""
    agent = LlmAgent(name="specialist", model=FakeModel())
    assert callback_context(agent=agent).agent_name == "specialist"


def test_invocation_context_holds_the_user_text() -> None:
    """user_text becomes the invocation's user content."""
    ctx = invocation_context(user_text="refund c1")
    assert isinstance(ctx, InvocationContext)
    assert ctx.user_content is not None
    assert ctx.user_content.parts[0].text == "refund c1"


def test_shared_invocation_links_contexts() -> None:
    """A callback and a tool context built on one invocation see each other's writes."""
    shared = invocation_context(state={"n": 1})
    cb = callback_context(invocation=shared)
    tool = tool_context(invocation=shared, function_call_id="fc")
    cb.state["n"] = 5
    assert tool.state["n"] == 5
    assert tool.invocation_id == cb.invocation_id


def test_llm_request_holds_user_texts_after_given_contents() -> None:
    """llm_request puts given contents first, then one user content per text."""
    first = llm_request("earlier").contents[0]
    request = llm_request("now", contents=[first], system_instruction="Be brief.")
    assert [c.parts[0].text for c in request.contents] == ["earlier", "now"]
    assert request.config.system_instruction == "Be brief."


def test_llm_request_declares_given_tools() -> None:
    """Tools passed to llm_request are declared in its config and indexed by name."""
    request = llm_request("hi", tools=[function_tool(lookup_charge)])
    assert "lookup_charge" in request.tools_dict
    assert request.config.tools is not None


def test_llm_response_with_text_and_call() -> None:
    """llm_response carries text, function calls and usage as a model answer would."""
    response = llm_response(
        "Looking.",
        function_calls=[FunctionCall("lookup_charge", {"charge_id": "c1"})],
        input_tokens=4,
        output_tokens=2,
    )
    assert response.content is not None
    parts = response.content.parts or []
    assert parts[0].text == "Looking."
    assert parts[1].function_call is not None
    assert parts[1].function_call.args == {"charge_id": "c1"}
    assert response.usage_metadata is not None
    assert response.usage_metadata.total_token_count == 6


def test_llm_response_partial_chunk() -> None:
    """A chunk response is partial and not turn-complete."""
    response = llm_response("Hel", partial=True, turn_complete=None)
    assert (response.partial, response.turn_complete) == (True, None)


def test_llm_response_without_text_has_no_content() -> None:
    """A response with neither text nor calls has no content (e.g. a provider error)."""
    response = llm_response(error_code="SAFETY", error_message="blocked")
    assert response.content is None
    assert response.error_code == "SAFETY"


async def test_function_tool_is_a_real_runnable_tool() -> None:
    """function_tool wraps a function in ADK's FunctionTool that runs with a tool context."""
    tool = function_tool(lookup_charge)
    assert isinstance(tool, FunctionTool)
    assert tool.name == "lookup_charge"
    result = await tool.run_async(args={"charge_id": "c1"}, tool_context=tool_context())
    assert result == {"charge_id": "c1"}


def test_unknown_option_is_a_type_error() -> None:
    """Passing an unknown option is a TypeError, not a silent no-op."""
    with pytest.raises(TypeError):
        callback_context(agentname="x")


def test_shared_invocation_with_options_is_refused() -> None:
    """Passing invocation= together with options it would override is a TypeError."""
    shared = invocation_context()
    with pytest.raises(TypeError, match="agent_name"):
        tool_context(invocation=shared, agent_name="other")
