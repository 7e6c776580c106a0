"""Built-in policies: handlers for the lattice's policy tier.

Every denial is legible (a ``{"status": "denied", "reason": ...}`` tool result, or a
model-role answer for agent and model hooks), counted on the policy's ``counts``, and
identity, roles and tenants are read only through declared :class:`~adk_lattice.state.StateKey`.

The families live in subpackages (``injection``, ``limits``, ``pii``, ``provenance``,
``tools``; the text machinery they share in ``_text``); every public name is re-exported
here, so ``from adk_lattice.policy import ...`` is the import to use.
"""

from .injection import (
    CallableDetector,
    ClassifierDetector,
    Detector,
    Finding,
    InjectionGuard,
    JudgeDetector,
    RulesDetector,
)
from .limits import (
    Budget,
    CallLimits,
    CounterStore,
    MemoryCounter,
    Price,
    RateLimit,
    RedisCounter,
    SumLimit,
    TokenBudget,
)
from .pii import PresidioEngine, RedactPII
from .protect import ProtectState
from .provenance import Consequential, ProvenanceGuard
from .require_state import RequireState
from .tools import (
    Approval,
    CapToolResult,
    Clamp,
    InjectState,
    Round,
    ToolGuard,
    ToolRule,
    TrimContext,
)

__all__ = [
    "Approval",
    "Budget",
    "CallLimits",
    "CallableDetector",
    "CapToolResult",
    "Clamp",
    "ClassifierDetector",
    "Consequential",
    "CounterStore",
    "Detector",
    "Finding",
    "InjectState",
    "InjectionGuard",
    "JudgeDetector",
    "MemoryCounter",
    "PresidioEngine",
    "Price",
    "ProtectState",
    "ProvenanceGuard",
    "RateLimit",
    "RedactPII",
    "RedisCounter",
    "RequireState",
    "Round",
    "RulesDetector",
    "SumLimit",
    "TokenBudget",
    "ToolGuard",
    "ToolRule",
    "TrimContext",
]
