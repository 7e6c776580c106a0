"""Hook names, what each hook may return, and the handler protocols per hook.

The names are ADK's plugin hook names without the ``_callback`` suffix, and every
handler method takes ADK's own keyword arguments, so a handler reads like an ADK callback.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from google.adk.events.event import Event
from google.adk.models.llm_response import LlmResponse
from google.genai import types

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.models.llm_request import LlmRequest
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.tool_context import ToolContext

HookName = Literal[
    "on_user_message",
    "before_run",
    "on_event",
    "after_run",
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
    "on_agent_error",
    "on_run_error",
]

#: Every hook, in the order ADK calls them in one turn.
HOOKS: Final[tuple[HookName, ...]] = (
    "on_user_message",
    "before_run",
    "before_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
    "on_event",
    "after_agent",
    "on_agent_error",
    "after_run",
    "on_run_error",
)

#: What a non-None return must be, per hook. ``None`` marks notification-only hooks:
#: whatever a handler returns there is ignored (and flagged by the return guard).
EXPECTED: Final[dict[HookName, type | None]] = {
    "on_user_message": types.Content,
    "before_run": types.Content,
    "on_event": Event,
    "after_run": None,
    "before_agent": types.Content,
    "after_agent": types.Content,
    "before_model": LlmResponse,
    "after_model": LlmResponse,
    "on_model_error": LlmResponse,
    "before_tool": dict,
    "after_tool": dict,
    "on_tool_error": dict,
    "on_agent_error": None,
    "on_run_error": None,
}

#: The keyword arguments ADK passes to each plugin hook (and the lattice to each handler).
HOOK_ARGS: Final[dict[HookName, tuple[str, ...]]] = {
    "on_user_message": ("invocation_context", "user_message"),
    "before_run": ("invocation_context",),
    "on_event": ("invocation_context", "event"),
    "after_run": ("invocation_context",),
    "before_agent": ("agent", "callback_context"),
    "after_agent": ("agent", "callback_context"),
    "before_model": ("callback_context", "llm_request"),
    "after_model": ("callback_context", "llm_response"),
    "on_model_error": ("callback_context", "llm_request", "error"),
    "before_tool": ("tool", "tool_args", "tool_context"),
    "after_tool": ("tool", "tool_args", "tool_context", "result"),
    "on_tool_error": ("tool", "tool_args", "tool_context", "error"),
    "on_agent_error": ("agent", "callback_context", "error"),
    "on_run_error": ("invocation_context", "error"),
}

#: Hooks whose handlers see a tool (tool scoping applies).
TOOL_HOOKS: Final[frozenset[HookName]] = frozenset({"before_tool", "after_tool", "on_tool_error"})

#: The context keyword argument each hook passes, to find agent, invocation and call ids.
CONTEXT_ARG: Final[dict[HookName, str]] = {
    "on_user_message": "invocation_context",
    "before_run": "invocation_context",
    "on_event": "invocation_context",
    "after_run": "invocation_context",
    "before_agent": "callback_context",
    "after_agent": "callback_context",
    "before_model": "callback_context",
    "after_model": "callback_context",
    "on_model_error": "callback_context",
    "before_tool": "tool_context",
    "after_tool": "tool_context",
    "on_tool_error": "tool_context",
    "on_agent_error": "callback_context",
    "on_run_error": "invocation_context",
}

#: The keyword argument holding the value a hook's replacement stands in for.
SUBJECT_ARG: Final[dict[HookName, str | None]] = {
    "on_user_message": "user_message",
    "before_run": None,
    "on_event": "event",
    "after_run": None,
    "before_agent": None,
    "after_agent": None,
    "before_model": "llm_request",
    "after_model": "llm_response",
    "on_model_error": "error",
    "before_tool": "tool_args",
    "after_tool": "result",
    "on_tool_error": "error",
    "on_agent_error": "error",
    "on_run_error": "error",
}

Tier = Literal["policy", "cache", "handlers", "telemetry"]
#: Deciders run in this order; the first non-None value wins.
DECIDER_TIERS: Final[tuple[Tier, ...]] = ("policy", "cache", "handlers")

OnError = Literal["deny", "skip", "raise"]
#: What a failing handler does by default, per tier: policy fails closed, the rest fail open.
DEFAULT_ON_ERROR: Final[dict[Tier, OnError]] = {
    "policy": "deny",
    "cache": "skip",
    "handlers": "skip",
    "telemetry": "skip",
}


class BeforeAgent(Protocol):
    """``before_agent``: return Content to skip the agent (ADK then runs no after_agent)."""

    def before_agent(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | Awaitable[types.Content | None] | None: ...


class AfterAgent(Protocol):
    """``after_agent``: return Content to add a final agent response."""

    def after_agent(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | Awaitable[types.Content | None] | None: ...


class BeforeModel(Protocol):
    """``before_model``: edit ``llm_request`` in place, or return an LlmResponse instead."""

    def before_model(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | Awaitable[LlmResponse | None] | None: ...


class AfterModel(Protocol):
    """``after_model``: mutate ``llm_response`` in place, or return a replacement."""

    def after_model(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | Awaitable[LlmResponse | None] | None: ...


class BeforeTool(Protocol):
    """``before_tool``: mutate ``tool_args`` in place, or return a dict to skip the tool."""

    def before_tool(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | Awaitable[dict[str, Any] | None] | None: ...


class AfterTool(Protocol):
    """``after_tool``: mutate ``result`` in place, or return a replacement dict."""

    def after_tool(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | Awaitable[dict[str, Any] | None] | None: ...


class OnToolError(Protocol):
    """``on_tool_error``: return a dict to stand in for the failed tool's result."""

    def on_tool_error(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: BaseException,
    ) -> dict[str, Any] | Awaitable[dict[str, Any] | None] | None: ...


class OnModelError(Protocol):
    """``on_model_error``: return an LlmResponse to stand in for the failed model call."""

    def on_model_error(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: BaseException
    ) -> LlmResponse | Awaitable[LlmResponse | None] | None: ...


class BeforeRun(Protocol):
    """``before_run``: return Content to end the run with that message."""

    def before_run(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | Awaitable[types.Content | None] | None: ...
