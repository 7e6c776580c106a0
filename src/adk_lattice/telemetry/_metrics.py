"""The metrics ``Telemetry`` records per hook: instruments, shared attributes, the short path.

A turn runs about twenty handler steps, each measured twice (a call count and a duration)
and counted once more as a decision. The attribute sets repeat from turn to turn (hook,
handler, tier, outcome, mode), so each is built once and shared; OpenTelemetry reads them
and never changes them. While no meter provider is set every instrument drops what it is
given, and nothing is built at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from opentelemetry import metrics
from opentelemetry.metrics import _internal as _metrics_internal
from opentelemetry.util.types import AttributeValue

from .._outcome import Outcome
from . import _names as n
from ._decisions import LOOKUP_HOOKS, Decision

#: Step statuses as the ``adk_lattice.outcome`` attribute reads them (bounded: 3 values).
STEP_OUTCOME: Final = {
    "pass": "pass",
    "act": "act",
    "error": "error",
    "timeout": "error",
    "rejected": "error",
}
#: Shared attribute sets kept at most (then forgotten and built again).
MAX_ATTRS: Final = 4096
_UNKNOWN: Final[Any] = object()

Attrs = Mapping[str, AttributeValue]


def error_type(status: str, error: Any) -> str:
    """The ``error.type`` of a failed step: ``timeout``, ``rejected_return`` or its class."""
    if status == "timeout":
        return "timeout"
    if status == "rejected":
        return "rejected_return"
    return type(error).__name__ if isinstance(error, BaseException) else "error"


class HookMetrics:
    """The five instruments of ``Telemetry`` and the attribute sets they are given.

    Args:
        meter_provider: where metrics go (default: the global provider).
    """

    def __init__(self, meter_provider: metrics.MeterProvider | None) -> None:
        meter = metrics.get_meter(n.SCOPE, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            n.METRIC_HOOK_CALLS, unit="{call}", description="Handler runs per hook and outcome."
        )
        self.duration = meter.create_histogram(
            n.METRIC_HANDLER_DURATION, unit="s", description="Time one handler took on a hook."
        )
        self.cache = meter.create_counter(
            n.METRIC_CACHE_REQUESTS, unit="{request}", description="Cache lookups and stores."
        )
        self.policy = meter.create_counter(
            n.METRIC_POLICY_DECISIONS, unit="{decision}", description="Policy decisions."
        )
        self.synth = meter.create_counter(
            n.METRIC_SYNTHESIZED,
            unit="{outcome}",
            description="Outcomes the lattice made for hooks ADK never called.",
        )
        self._provider = meter_provider
        self._live = False
        self._attrs: dict[tuple[str | None, ...], Attrs] = {}

    def live(self) -> bool:
        """False while the meter provider drops every measurement (none set, or a no-op).

        Checked on every outcome until a real provider appears (a global one may be set
        after the observer was made); from then on True.
        """
        if self._live:
            return True
        provider = self._provider
        if provider is None:
            provider = getattr(_metrics_internal, "_METER_PROVIDER", _UNKNOWN)
        self._live = provider is not None and not isinstance(provider, metrics.NoOpMeterProvider)
        return self._live

    def record(self, outcome: Outcome, decisions: Sequence[Decision]) -> None:
        """Every step's call and duration, every cache and policy decision, a synthesis."""
        hook = outcome.hook
        steps = [(s, "enforce") for s in outcome.steps]
        steps += [(run.step, "shadow") for run in outcome.shadow]
        for step, mode in steps:
            error = None
            if step.status != "pass" and step.status != "act":
                error = error_type(step.status, step.error)
            attrs = self.step_attrs(hook, step.handler, step.tier, step.status, error, mode)
            self.calls.add(1, attrs)
            self.duration.record(step.duration, attrs)
        for d in decisions:
            base = d.decision.removeprefix("would_")
            if base in n.CACHE_RESULTS:
                result = n.CACHE_RESULTS[base]
                self.cache.add(
                    1, self._result_attrs(n.CACHE_RESULT, hook, d.handler, result, d.mode)
                )
            elif d.tier == "policy":
                self.policy.add(
                    1, self._result_attrs(n.DECISION, hook, d.handler, d.decision, d.mode)
                )
        if outcome.synthesized:
            self.synth.add(1, {n.HOOK: hook, n.REASON: outcome.reason or "unknown"})

    def record_quiet(self, outcome: Outcome) -> None:
        """:meth:`record` for an outcome where every step passed and nobody noted anything.

        Its decisions can only be the inferred ``allow`` (a policy) and ``cache_miss`` (a
        cache on a lookup hook): they are counted straight from the steps, with the same
        attributes, and no decision object is built.
        """
        hook = outcome.hook
        for step in outcome.steps:
            attrs = self.step_attrs(hook, step.handler, step.tier, "pass", None, "enforce")
            self.calls.add(1, attrs)
            self.duration.record(step.duration, attrs)
            if step.tier == "policy":
                attrs = self._result_attrs(n.DECISION, hook, step.handler, "allow", "enforce")
                self.policy.add(1, attrs)
            elif step.tier == "cache" and hook in LOOKUP_HOOKS:
                attrs = self._result_attrs(n.CACHE_RESULT, hook, step.handler, "miss", "enforce")
                self.cache.add(1, attrs)

    def step_attrs(
        self, hook: str, handler: str, tier: str, status: str, error: str | None, mode: str
    ) -> Attrs:
        """The shared, never changed attributes of one step's call count and duration."""
        key = ("step", hook, handler, tier, status, error, mode)
        attrs = self._attrs.get(key)
        if attrs is None:
            made: dict[str, AttributeValue] = {
                n.HOOK: hook,
                n.HANDLER: handler,
                n.TIER: tier,
                n.OUTCOME: STEP_OUTCOME[status],
                n.MODE: mode,
            }
            if error is not None:
                made[n.ERROR_TYPE] = error
            attrs = self._remember(key, made)
        return attrs

    def _result_attrs(self, name: str, hook: str, handler: str, value: str, mode: str) -> Attrs:
        """The shared attributes of a decision (``name`` the decision attribute) or a cache
        result (the cache result attribute) of one handler on one hook."""
        key = (name, hook, handler, value, mode)
        attrs = self._attrs.get(key)
        if attrs is None:
            attrs = self._remember(
                key, {n.HOOK: hook, n.HANDLER: handler, name: value, n.MODE: mode}
            )
        return attrs

    def _remember(self, key: tuple[str | None, ...], attrs: Attrs) -> Attrs:
        if len(self._attrs) >= MAX_ATTRS:  # handler names are few; notes may name more
            self._attrs.clear()
        self._attrs[key] = attrs
        return attrs
