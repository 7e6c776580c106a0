"""Built-in policies: handlers for the lattice's policy tier.

Every denial is legible (a ``{"status": "denied", "reason": ...}`` tool result, or a
model-role answer for agent and model hooks), counted on the policy's ``counts``, and
identity, roles and tenants are read only through declared :class:`~adk_lattice.state.StateKey`.
"""

from .approval import Approval
from .arguments import Clamp, InjectState, Round
from .budget import Budget, Price, TokenBudget
from .injection import InjectionGuard
from .injection_classifier import ClassifierDetector
from .injection_detectors import CallableDetector, Detector, Finding, RulesDetector
from .injection_judge import JudgeDetector
from .limits import CallLimits
from .ner import PresidioEngine
from .protect import ProtectState
from .provenance import ProvenanceGuard
from .provenance_config import Consequential
from .rate import CounterStore, MemoryCounter, RateLimit, RedisCounter
from .redact import RedactPII
from .require_state import RequireState
from .results import CapToolResult
from .sums import SumLimit
from .tool_guard import ToolGuard, ToolRule
from .trim import TrimContext

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
