"""Test helpers for apps built on adk-lattice.

A scripted model, a scripted Gemini API on loopback for ADK's real client, real ADK
contexts for calling handlers directly, a recording handler, a runner for integration
tests, in-memory OpenTelemetry capture, and checks for model-facing tool text and state
keys.
"""

from ._bans import DEFAULT_BANS, Ban, ban_violations
from ._cassette import CassetteError, RecordingModel
from ._confirm import confirmation_reply
from ._contexts import (
    callback_context,
    function_tool,
    invocation_context,
    llm_request,
    llm_response,
    tool_context,
)
from ._loopback.gemini import LoopbackGemini
from ._loopback.openai import LoopbackOpenAI
from ._loopback.server import LoopbackRequest
from ._model import FakeModel
from ._neutral import assert_tools_neutral, tool_findings
from ._otel import MetricCapture, capture_metrics, capture_spans
from ._recording import HookCall, RecordingHandler, returns_in_turn
from ._runner import LatticeRunner
from ._script import (
    FunctionCall,
    ScriptedResponse,
    ScriptExhaustedError,
    ScriptExhaustedWarning,
    estimate_tokens,
)
from ._state_keys import StateKeyFinding, undeclared_state_keys
from ._tool_text import model_facing_text, undeclared_arg_refs

__all__ = [
    "DEFAULT_BANS",
    "Ban",
    "CassetteError",
    "FakeModel",
    "FunctionCall",
    "HookCall",
    "LatticeRunner",
    "LoopbackGemini",
    "LoopbackOpenAI",
    "LoopbackRequest",
    "MetricCapture",
    "RecordingHandler",
    "RecordingModel",
    "ScriptExhaustedError",
    "ScriptExhaustedWarning",
    "ScriptedResponse",
    "StateKeyFinding",
    "assert_tools_neutral",
    "ban_violations",
    "callback_context",
    "capture_metrics",
    "capture_spans",
    "confirmation_reply",
    "estimate_tokens",
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
