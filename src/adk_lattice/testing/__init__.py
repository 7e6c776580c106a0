"""Test helpers for apps built on adk-lattice: a scripted model, fake contexts, fakes."""

from ._contexts import (
    callback_context,
    function_tool,
    invocation_context,
    llm_request,
    llm_response,
    tool_context,
)
from ._model import FakeModel, FunctionCall, ScriptedResponse, ScriptExhaustedError
from ._recording import HookCall, RecordingHandler, returns_in_turn

__all__ = [
    "FakeModel",
    "FunctionCall",
    "HookCall",
    "RecordingHandler",
    "ScriptExhaustedError",
    "ScriptedResponse",
    "callback_context",
    "function_tool",
    "invocation_context",
    "llm_request",
    "llm_response",
    "returns_in_turn",
    "tool_context",
]
