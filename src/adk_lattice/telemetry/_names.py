"""The names the telemetry tier writes: span attributes, span events, metrics, decisions.

Every name is documented in ``docs/telemetry.md``. Names from the OpenTelemetry GenAI
semantic conventions are used where one exists (``error.type``, ``gen_ai.tool.name``,
``gen_ai.output.messages``, ``gen_ai.tool.call.result``); everything the conventions do not
cover lives under the ``adk_lattice.`` namespace.
"""

from __future__ import annotations

from typing import Final

# The decision vocabulary lives in the core, beside note(): policies report decisions too.
from .._notes import DECISIONS as DECISIONS
from .._notes import DecisionName as DecisionName

#: The instrumentation scope of the tracer and meter.
SCOPE: Final = "adk_lattice"

# -- attributes (spans, span events and metrics) ---------------------------------------------
HOOK: Final = "adk_lattice.hook"
HANDLER: Final = "adk_lattice.handler"
TIER: Final = "adk_lattice.tier"
OUTCOME: Final = "adk_lattice.outcome"
DECISION: Final = "adk_lattice.decision"
REASON: Final = "adk_lattice.reason"
SYNTHESIZED: Final = "adk_lattice.synthesized"
CACHE_RESULT: Final = "adk_lattice.cache.result"
CACHE_MATCH: Final = "adk_lattice.cache.match"
CACHE_SIMILARITY: Final = "adk_lattice.cache.similarity"
DURATION: Final = "adk_lattice.duration"
MODE: Final = "adk_lattice.mode"
HANDLERS: Final = "adk_lattice.handlers"
STATUSES: Final = "adk_lattice.statuses"
INVOCATION_ID: Final = "adk_lattice.invocation.id"
SHORT_CIRCUIT: Final = "adk_lattice.short_circuit"
SERVED_BY: Final = "adk_lattice.served_by"
SERVED_TIER: Final = "adk_lattice.served_tier"
ERROR_TYPE: Final = "error.type"
TOOL_NAME: Final = "gen_ai.tool.name"
AGENT_NAME: Final = "gen_ai.agent.name"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_RESULT: Final = "gen_ai.tool.call.result"

# -- span events -------------------------------------------------------------------------------
EVENT_PREFIX: Final = "adk_lattice."
EVENT_HANDLER_ERROR: Final = "adk_lattice.handler_error"
EVENT_CONTENT: Final = "adk_lattice.content"

# -- metrics -----------------------------------------------------------------------------------
METRIC_HOOK_CALLS: Final = "adk_lattice.hook.calls"
METRIC_HANDLER_DURATION: Final = "adk_lattice.handler.duration"
METRIC_CACHE_REQUESTS: Final = "adk_lattice.cache.requests"
METRIC_POLICY_DECISIONS: Final = "adk_lattice.policy.decisions"
METRIC_SYNTHESIZED: Final = "adk_lattice.hook.synthesized"

#: Decisions a shadow handler reports as facts, under their own names (it did look, and it
#: did fail); every other decision of a shadow handler reads ``would_<decision>``.
SHADOW_FACTS: Final = frozenset({"allow", "cache_miss", "error", "cache_error"})


def would(decision: str) -> str:
    """How a shadow handler's decision reads: ``deny`` -> ``would_deny``; facts unchanged."""
    return decision if decision in SHADOW_FACTS else f"would_{decision}"


#: How a cache decision reads on the ``adk_lattice.cache.requests`` counter.
CACHE_RESULTS: Final[dict[str, str]] = {
    "cache_hit": "hit",
    "cache_miss": "miss",
    "cache_store": "store",
    "cache_skip": "skip",
    "cache_error": "error",
}
