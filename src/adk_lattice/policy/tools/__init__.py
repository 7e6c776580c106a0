"""Tool calls and what they return: rules, argument rewrites, approvals, result caps, trimming."""

from .approval import Approval
from .arguments import Clamp, InjectState, Round
from .guard import ToolGuard, ToolRule
from .results import CapToolResult
from .trim import TrimContext

__all__ = [
    "Approval",
    "CapToolResult",
    "Clamp",
    "InjectState",
    "Round",
    "ToolGuard",
    "ToolRule",
    "TrimContext",
]
