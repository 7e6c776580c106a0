"""Test helpers for apps built on adk-lattice.

A scripted model, real ADK contexts for calling handlers directly, a recording handler,
a runner for integration tests, in-memory OpenTelemetry capture, and checks for
model-facing tool text and state keys.
"""

from ._bans import DEFAULT_BANS, Ban, ban_violations
from ._contexts import (
    callback_context,
    function_tool,
    invocation_context,
    llm_request,
    llm_response,
    tool_context,
)
from ._model import FakeModel, FunctionCall, ScriptedResponse, ScriptExhaustedError
from ._neutral import assert_tools_neutral, tool_findings
from ._otel import MetricCapture, capture_metrics, capture_spans
from ._recording import HookCall, RecordingHandler, returns_in_turn
from ._runner import LatticeRunner
from ._state_keys import StateKeyFinding, undeclared_state_keys
from ._tool_text import model_facing_text, undeclared_arg_refs

__all__ = [
    "DEFAULT_BANS",
    "Ban",
    "FakeModel",
    "FunctionCall",
    "HookCall",
    "LatticeRunner",
    "MetricCapture",
    "RecordingHandler",
    "ScriptExhaustedError",
    "ScriptedResponse",
    "StateKeyFinding",
    "assert_tools_neutral",
    "ban_violations",
    "callback_context",
    "capture_metrics",
    "capture_spans",
    "function_tool",
    "invocation_context",
    "llm_request",
    "llm_response",
    "model_facing_text",
    "returns_in_turn",
    "tool_context",
    "tool_findings",
    "undeclared_arg_refs",
    "undeclared_state_keys",
]
