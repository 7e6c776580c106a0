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
from ._otel import MetricCapture, capture_metrics, capture_spans
from ._recording import HookCall, RecordingHandler, returns_in_turn
from ._runner import LatticeRunner

__all__ = [
    "FakeModel",
    "FunctionCall",
    "HookCall",
    "LatticeRunner",
    "MetricCapture",
    "RecordingHandler",
    "ScriptExhaustedError",
    "ScriptedResponse",
    "callback_context",
    "capture_metrics",
    "capture_spans",
    "function_tool",
    "invocation_context",
    "llm_request",
    "llm_response",
    "returns_in_turn",
    "tool_context",
]
