"""Built-in policies: handlers for the lattice's policy tier.

Every denial is legible (a ``{"status": "denied", "reason": ...}`` tool result, or a
model-role answer for agent and model hooks), counted on the policy's ``counts``, and
identity, roles and tenants are read only through declared :class:`~adk_lattice.state.StateKey`.
"""

from .arguments import Clamp, InjectState, Round
from .injection import Finding, InjectionGuard
from .limits import CallLimits
from .provenance import Consequential, ProvenanceGuard
from .rate import CounterStore, MemoryCounter, RateLimit, RedisCounter
from .redact import RedactPII
from .require_state import RequireState
from .results import CapToolResult
from .tool_guard import Approval, ToolGuard, ToolRule
from .trim import TrimContext

__all__ = [
    "Approval",
    "CallLimits",
    "CapToolResult",
    "Clamp",
    "Consequential",
    "CounterStore",
    "Finding",
    "InjectState",
    "InjectionGuard",
    "MemoryCounter",
    "ProvenanceGuard",
    "RateLimit",
    "RedactPII",
    "RedisCounter",
    "RequireState",
    "Round",
    "ToolGuard",
    "ToolRule",
    "TrimContext",
]
