"""adk-lattice: one ADK Runner plugin, pluggable policy, cache and telemetry chains.

Register one :class:`Lattice` on the ADK ``App``; it intercepts every lifecycle hook of
every agent and sub-agent and hands each to small handlers in three decider tiers
(policy, cache, custom handlers; first non-None value wins) and to observers (telemetry,
audit, cache store) that see the final outcome of every hook.
"""

from ._chain import ReturnGuardError
from ._config.read import ConfigError
from ._handlers import FunctionHandler, Mode, configure, on
from ._hooks import HOOKS, HookName, OnError, Tier
from ._outcome import Outcome, Step
from ._plugin import Lattice
from ._records import CallRecord, InvocationRecord, current_call
from ._shadow import ShadowRun

__all__ = [
    "HOOKS",
    "CallRecord",
    "ConfigError",
    "FunctionHandler",
    "HookName",
    "InvocationRecord",
    "Lattice",
    "Mode",
    "OnError",
    "Outcome",
    "ReturnGuardError",
    "ShadowRun",
    "Step",
    "Tier",
    "configure",
    "current_call",
    "on",
]
