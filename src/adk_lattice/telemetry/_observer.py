"""``Telemetry``: enriches ADK's spans and records metrics for every hook and handler.

Uses only ``opentelemetry-api``: without an SDK provider every call is a cheap no-op.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from .._outcome import Outcome
from . import _names as n
from ._content import delivered_model_text, delivered_tool_result
from ._decisions import Decision, cache_match, decisions_of, is_quiet
from ._metrics import STEP_OUTCOME, HookMetrics, error_type

_SPAN_KEY: Final = "adk_lattice.telemetry.span"
_NS: Final = 1_000_000_000
_QUIET: Final = frozenset({"allow", "cache_miss"})


class Telemetry:
    """An observer that puts what the lattice did on OpenTelemetry spans and metrics.

    On ADK's current span (``invoke_agent`` for agent and model hooks, ``execute_tool`` for
    tool hooks) it adds an ``adk_lattice.<hook>`` span event whenever a handler acted,
    decided, failed, or the lattice closed something ADK left open, plus per-hook
    attributes; a response served from ``before_model`` is marked with
    ``adk_lattice.short_circuit``. Metrics: ``adk_lattice.hook.calls``,
    ``adk_lattice.handler.duration``, ``adk_lattice.cache.requests``,
    ``adk_lattice.policy.decisions``, ``adk_lattice.hook.synthesized``.

    Args:
        tracer_provider: where spans go (default: the global provider).
        meter_provider: where metrics go (default: the global provider).
        handler_spans: also record one child span per handler that ran (off: it costs a
            span per handler per hook).
        capture_content: record the delivered model text and tool result, after every
            decider (output policy included) acted; never a request or a user message.
        max_content_chars: captured content is cut to this length.
        all_events: add a span event for every hook, also when nothing happened.
        name: the observer's name in the lattice's counters.
    """

    partial = False

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        handler_spans: bool = False,
        capture_content: bool = False,
        max_content_chars: int = 4096,
        all_events: bool = False,
        name: str = "Telemetry",
    ) -> None:
        if max_content_chars < 1:
            raise ValueError("max_content_chars must be at least 1")
        self.name = name
        self.handler_spans = handler_spans
        self.capture_content = capture_content
        self.max_content_chars = max_content_chars
        self.all_events = all_events
        self._tracer = trace.get_tracer(n.SCOPE, tracer_provider=tracer_provider)
        self._metrics = HookMetrics(meter_provider)
        # Outcomes with nothing to tell take the short path unless an option wants more.
        self._plain = not (handler_spans or capture_content or all_events)

    def observe(self, outcome: Outcome) -> None:
        """Record one hook outcome on the current span and on the metrics."""
        if self._plain and not outcome.synthesized and is_quiet(outcome) and self._keep(outcome):
            if self._metrics.live():
                self._metrics.record_quiet(outcome)
            return
        decisions = decisions_of(outcome)
        if self._metrics.live():
            self._metrics.record(outcome, decisions)
        span, own = self._span_for(outcome)
        try:
            if span.is_recording():
                self._record_span(span, outcome, decisions)
        finally:
            if own:
                span.end()
        if outcome.hook == "after_run" and outcome.invocation is not None:
            outcome.invocation.data.pop(_SPAN_KEY, None)  # freed with the run

    def _keep(self, outcome: Outcome) -> bool:
        """For an outcome with nothing to put on a span: keep the span bookkeeping only.

        Remembers the invocation's span (as :meth:`_span_for` does) and frees it at
        ``after_run``. False when :meth:`_span_for` would open a span of its own (no live
        span and the invocation's has ended): the full path then runs.
        """
        inv = outcome.invocation
        current = trace.get_current_span()
        if current.is_recording():
            if inv is not None and _SPAN_KEY not in inv.data:
                inv.data[_SPAN_KEY] = current
        elif inv is not None:
            parent = inv.data.get(_SPAN_KEY)
            if parent is not None and not parent.is_recording():
                return False
        if outcome.hook == "after_run" and inv is not None:
            inv.data.pop(_SPAN_KEY, None)  # freed with the run
        return True

    # -- spans ---------------------------------------------------------------------------------

    def _span_for(self, outcome: Outcome) -> tuple[Span, bool]:
        """The span to write on, and whether this observer opened it (and must end it).

        ADK's span is current while a callback runs. A close the lattice synthesizes at the
        end of a run may find no live span: then a short ``adk_lattice.<hook>`` span is made
        under the invocation's span (kept from its first hook), and ended right away.
        """
        current = trace.get_current_span()
        inv = outcome.invocation
        if current.is_recording():
            if inv is not None and _SPAN_KEY not in inv.data:
                inv.data[_SPAN_KEY] = current
            return current, False
        parent = inv.data.get(_SPAN_KEY) if inv is not None else None
        if parent is None:
            return current, False
        if parent.is_recording():
            return parent, False
        ctx = trace.set_span_in_context(parent)
        return self._tracer.start_span(f"adk_lattice.{outcome.hook}", context=ctx), True

    def _record_span(self, span: Span, outcome: Outcome, decisions: Sequence[Decision]) -> None:
        hook = outcome.hook
        loud = [d for d in decisions if d.decision not in _QUIET and d.mode == "enforce"]
        would = [d for d in decisions if d.decision not in _QUIET and d.mode == "shadow"]
        failed = [s for s in outcome.steps if s.status not in ("pass", "act")]
        failed += [r.step for r in outcome.shadow if r.step.status not in ("pass", "act")]
        if outcome.acted_by is not None:
            span.set_attribute(f"adk_lattice.{hook}.handler", outcome.acted_by)
        if loud:
            span.set_attribute(f"adk_lattice.{hook}.decision", loud[-1].decision)
            if loud[-1].reason is not None:
                span.set_attribute(f"adk_lattice.{hook}.reason", loud[-1].reason)
        matched = cache_match(outcome)
        if matched is not None:  # exact or semantic, and how similar
            span.set_attribute(n.CACHE_MATCH, matched[1])
            if matched[2] is not None:
                span.set_attribute(n.CACHE_SIMILARITY, matched[2])
        if outcome.synthesized and outcome.reason == "short_circuit":
            # ADK marks nothing when a response never came from the model: we do.
            span.set_attribute(n.SHORT_CIRCUIT, True)
            if outcome.acted_by is not None:
                span.set_attribute(n.SERVED_BY, outcome.acted_by)
            if outcome.acted_tier is not None:
                span.set_attribute(n.SERVED_TIER, outcome.acted_tier)
        interesting = outcome.acted_by is not None or loud or would or failed or outcome.synthesized
        if interesting or self.all_events:
            span.add_event(f"{n.EVENT_PREFIX}{hook}", _event_attrs(outcome, decisions))
        for step in failed:
            attrs: dict[str, AttributeValue] = {
                n.HOOK: hook,
                n.HANDLER: step.handler,
                n.TIER: step.tier,
                n.ERROR_TYPE: error_type(step.status, step.error),
            }
            span.add_event(n.EVENT_HANDLER_ERROR, attrs)
        if self.handler_spans and outcome.steps:
            self._handler_spans(span, outcome)
        if self.capture_content:
            self._content(span, outcome)

    def _handler_spans(self, parent: Span, outcome: Outcome) -> None:
        """One closed child span per handler, placed by the durations the chain measured."""
        ctx = trace.set_span_in_context(parent)
        start = time.time_ns() - int(outcome.duration * _NS)
        for step in outcome.steps:
            end = start + int(step.duration * _NS)
            attrs: dict[str, AttributeValue] = {
                n.HOOK: outcome.hook,
                n.HANDLER: step.handler,
                n.TIER: step.tier,
                n.OUTCOME: STEP_OUTCOME[step.status],
            }
            child = self._tracer.start_span(
                f"adk_lattice.handler {step.handler}", context=ctx, start_time=start
            )
            child.set_attributes(attrs)
            if step.status not in ("pass", "act"):
                child.set_attribute(n.ERROR_TYPE, error_type(step.status, step.error))
                child.set_status(trace.StatusCode.ERROR)
            child.end(end_time=end)
            start = end

    def _content(self, span: Span, outcome: Outcome) -> None:
        """Delivered content only: after every decider acted, never the raw input."""
        attrs: dict[str, AttributeValue] = {n.HOOK: outcome.hook}
        text = delivered_model_text(outcome)
        if text is not None:
            msg = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
            attrs[n.OUTPUT_MESSAGES] = json.dumps(msg, ensure_ascii=False)[: self.max_content_chars]
        else:
            result = delivered_tool_result(outcome)
            if result is None:
                return
            attrs[n.TOOL_RESULT] = result[: self.max_content_chars]
        span.add_event(n.EVENT_CONTENT, attrs)


def _event_attrs(outcome: Outcome, decisions: Sequence[Decision]) -> dict[str, AttributeValue]:
    attrs: dict[str, AttributeValue] = {
        n.HOOK: outcome.hook,
        n.DURATION: outcome.duration,
    }
    if outcome.invocation_id is not None:
        attrs[n.INVOCATION_ID] = outcome.invocation_id
    if outcome.agent is not None:
        attrs[n.AGENT_NAME] = outcome.agent
    if outcome.tool is not None:
        attrs[n.TOOL_NAME] = outcome.tool
    if outcome.acted_by is not None:
        attrs[n.HANDLER] = outcome.acted_by
    if outcome.acted_tier is not None:
        attrs[n.TIER] = outcome.acted_tier
    if outcome.synthesized:
        attrs[n.SYNTHESIZED] = True
        attrs[n.REASON] = outcome.reason or "unknown"
    if outcome.steps:
        attrs[n.HANDLERS] = [s.handler for s in outcome.steps]
        attrs[n.STATUSES] = [s.status for s in outcome.steps]
    if decisions:
        attrs[n.DECISION] = [f"{d.handler}:{d.decision}" for d in decisions]
        reasons = [d.reason for d in decisions if d.reason]
        if reasons and not outcome.synthesized:
            attrs[n.REASON] = reasons[-1]
    if outcome.error is not None:
        attrs[n.ERROR_TYPE] = type(outcome.error).__name__
    return attrs
