"""Real ADK contexts, requests, responses and tools for calling a handler directly.

A handler unit test should exercise the same objects ADK hands it at run time, so these
helpers build genuine ``InvocationContext``/``Context`` objects over an
``InMemorySessionService`` session instead of stand-ins::

    ctx = tool_context(state={"user:is_manager": False}, function_call_id="call-1")
    assert policy.before_tool(tool=function_tool(issue_refund), tool_args={"amount": 5000},
                              tool_context=ctx) is not None
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from ._model import FakeModel
from ._script import FunctionCall


def _session(
    service: InMemorySessionService,
    app_name: str,
    user_id: str,
    session_id: str | None,
    state: Mapping[str, Any] | None,
) -> Session:
    # The service's own implementation routes ``user:``/``app:`` keys exactly as a real run
    # does; the public sync wrapper only adds a deprecation log line, the async one would
    # force every helper (and every handler test) to be async.
    return service._create_session_impl(
        app_name=app_name, user_id=user_id, state=dict(state or {}), session_id=session_id
    )


_DEFAULTS: dict[str, Any] = {
    "state": None,
    "agent": None,
    "agent_name": "agent",
    "invocation_id": None,
    "user_id": "user",
    "app_name": "app",
    "session_id": None,
    "user_text": None,
}


def _shared(invocation: InvocationContext, options: dict[str, Any]) -> InvocationContext:
    """The shared invocation, refusing options it would silently override."""
    given = [name for name, value in options.items() if value != _DEFAULTS[name]]
    if given:
        raise TypeError(
            f"pass either invocation= or invocation options, not both: {', '.join(given)}"
        )
    return invocation


def invocation_context(
    *,
    state: Mapping[str, Any] | None = None,
    agent: BaseAgent | None = None,
    agent_name: str = "agent",
    invocation_id: str | None = None,
    user_id: str = "user",
    app_name: str = "app",
    session_id: str | None = None,
    user_text: str | None = None,
    run_config: RunConfig | None = None,
    session_service: InMemorySessionService | None = None,
) -> InvocationContext:
    """Build a real ``InvocationContext`` over a fresh in-memory session.

    Args:
        state: initial session state; ``user:``/``app:`` keys are stored at user/app scope
            by the session service and merged back, exactly as in a run.
        agent: the current agent; by default an ``LlmAgent`` named ``agent_name`` on a
            :class:`FakeModel`.
        agent_name: the agent's name when ``agent`` is not given.
        invocation_id: the invocation id (default: a fresh ``e-<uuid>``).
        user_id: the session's user id.
        app_name: the session's app name.
        session_id: the session's id (default: a fresh one).
        user_text: the user message that started the invocation, if any.
        run_config: the run config (default: ``RunConfig()``).
        session_service: the service to create the session in (default: a new one).

    Returns:
        The invocation context, ready for ``on_user_message``/``before_run``/... hooks.
    """
    service = session_service or InMemorySessionService()
    session = _session(service, app_name, user_id, session_id, state)
    user_content = None
    if user_text is not None:
        user_content = types.Content(role="user", parts=[types.Part(text=user_text)])
    return InvocationContext(
        session_service=service,
        invocation_id=invocation_id or f"e-{uuid.uuid4()}",
        agent=agent if agent is not None else LlmAgent(name=agent_name, model=FakeModel()),
        session=session,
        user_content=user_content,
        run_config=run_config or RunConfig(),
    )


def callback_context(
    *,
    state: Mapping[str, Any] | None = None,
    agent: BaseAgent | None = None,
    agent_name: str = "agent",
    invocation_id: str | None = None,
    user_id: str = "user",
    app_name: str = "app",
    session_id: str | None = None,
    user_text: str | None = None,
    invocation: InvocationContext | None = None,
) -> Context:
    """Build a real ADK ``CallbackContext`` (agent and model hooks).

    Args:
        state: initial session state, as for :func:`invocation_context`.
        agent: the current agent, as for :func:`invocation_context`.
        agent_name: the agent's name when ``agent`` is not given.
        invocation_id: the invocation id (default: a fresh one).
        user_id: the session's user id.
        app_name: the session's app name.
        session_id: the session's id.
        user_text: the user message that started the invocation, if any.
        invocation: an existing invocation context to share (e.g. with a tool context),
            instead of the arguments above.

    Returns:
        A ``google.adk.agents.context.Context`` whose writes land in ``ctx.state`` and in
        ``ctx.actions.state_delta``, as in a run.

    Raises:
        TypeError: when ``invocation`` is given together with invocation options.
    """
    options: dict[str, Any] = {
        "state": state,
        "agent": agent,
        "agent_name": agent_name,
        "invocation_id": invocation_id,
        "user_id": user_id,
        "app_name": app_name,
        "session_id": session_id,
        "user_text": user_text,
    }
    if invocation is None:
        invocation = invocation_context(**options)
    else:
        invocation = _shared(invocation, options)
    return Context(invocation)


def tool_context(
    *,
    function_call_id: str | None = "call-1",
    state: Mapping[str, Any] | None = None,
    agent: BaseAgent | None = None,
    agent_name: str = "agent",
    invocation_id: str | None = None,
    user_id: str = "user",
    app_name: str = "app",
    session_id: str | None = None,
    user_text: str | None = None,
    invocation: InvocationContext | None = None,
) -> Context:
    """Build a real ADK ``ToolContext`` (tool hooks) with a function call id.

    Args:
        function_call_id: the id of the function call the tool hook serves.
        state: initial session state, as for :func:`invocation_context`.
        agent: the current agent, as for :func:`invocation_context`.
        agent_name: the agent's name when ``agent`` is not given.
        invocation_id: the invocation id (default: a fresh one).
        user_id: the session's user id.
        app_name: the session's app name.
        session_id: the session's id.
        user_text: the user message that started the invocation, if any.
        invocation: an existing invocation context to share, instead of the arguments
            above except ``function_call_id``.

    Returns:
        A ``google.adk.agents.context.Context`` with ``function_call_id`` set.

    Raises:
        TypeError: when ``invocation`` is given together with invocation options.
    """
    ctx = callback_context(
        state=state,
        agent=agent,
        agent_name=agent_name,
        invocation_id=invocation_id,
        user_id=user_id,
        app_name=app_name,
        session_id=session_id,
        user_text=user_text,
        invocation=invocation,
    )
    ctx.function_call_id = function_call_id
    return ctx


def llm_request(
    *texts: str,
    contents: Sequence[types.Content] = (),
    model: str = "fake-model",
    system_instruction: str | None = None,
    tools: Sequence[BaseTool] = (),
) -> LlmRequest:
    """Build an ``LlmRequest`` with user texts and/or ready-made contents.

    Args:
        *texts: each becomes one ``user`` content with one text part, after ``contents``.
        contents: contents to put first, as given.
        model: the request's model name.
        system_instruction: the system instruction, if any.
        tools: tools whose declarations the request carries (as ADK adds them).

    Returns:
        The request.
    """
    request = LlmRequest(model=model, contents=list(contents))
    request.contents.extend(
        types.Content(role="user", parts=[types.Part(text=text)]) for text in texts
    )
    if system_instruction is not None:
        request.config.system_instruction = system_instruction
    if tools:
        request.append_tools(list(tools))
    return request


def llm_response(
    text: str | None = None,
    *,
    function_calls: Sequence[FunctionCall] = (),
    partial: bool | None = None,
    turn_complete: bool | None = True,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    error_code: str | None = None,
    error_message: str | None = None,
) -> LlmResponse:
    """Build an ``LlmResponse`` as a model would return it.

    Args:
        text: the answer text, if any.
        function_calls: function calls the answer requests.
        partial: True for a streamed chunk.
        turn_complete: True for a final response (set it to None for a chunk).
        input_tokens: prompt tokens in the usage metadata (none when both are None).
        output_tokens: output tokens in the usage metadata.
        error_code: a provider error code carried in the response.
        error_message: the provider error's message.

    Returns:
        The response.
    """
    parts: list[types.Part] = []
    if text is not None:
        parts.append(types.Part(text=text))
    for call in function_calls:
        fc = types.FunctionCall(name=call.name, args=dict(call.args), id=call.id)
        parts.append(types.Part(function_call=fc))
    usage = None
    if input_tokens is not None or output_tokens is not None:
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=input_tokens,
            candidates_token_count=output_tokens,
            total_token_count=(input_tokens or 0) + (output_tokens or 0),
        )
    content = types.Content(role="model", parts=parts) if parts else None
    return LlmResponse(
        content=content,
        partial=partial,
        turn_complete=turn_complete,
        usage_metadata=usage,
        error_code=error_code,
        error_message=error_message,
    )


def function_tool(fn: Callable[..., Any]) -> FunctionTool:
    """Wrap a function in ADK's real ``FunctionTool`` (its name is the function's name)."""
    return FunctionTool(fn)
