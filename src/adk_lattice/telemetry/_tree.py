"""Render finished spans (ADK's and the lattice's) as an indented tree, one line per span."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Final

from . import _names as n

#: Decisions that only say a handler looked and let the step through: left off the tree's
#: lines (they stay on the span event's ``adk_lattice.decision`` attribute).
QUIET_DECISIONS: Final = frozenset({"allow", "cache_miss"})
_MODEL_HOOKS: Final = frozenset({"before_model", "after_model", "on_model_error"})


def render_span_tree(
    spans: Iterable[Any],
    *,
    trace_id: int | None = None,
    events: bool = True,
    durations: bool = True,
) -> str:
    """An indented tree of finished spans, in the order things happened, one run after another.

    Works on what an SDK exporter holds (``InMemorySpanExporter().get_finished_spans()``,
    or the spans a custom ``SpanExporter`` receives). Each span line shows its name, its
    duration and whether the lattice served it from ``before_model``; with ``events`` the
    lattice's ``adk_lattice.*`` span events follow as ``·`` lines (who acted, the decisions
    that acted, the reason)::

        invoke_workflow billing  4.1 ms
          invoke_agent billing  3.2 ms
            generate_content gemini-2.5-flash  1.9 ms
              · after_model  RedactPII:redact  (email)
            execute_tool refund  0.3 ms
              · before_tool  ToolGuard:deny  (role)

    Runs (root spans) appear in the order they started, and within a span its child spans
    and its events are interleaved by time. ADK runs model callbacks on the agent's span, so
    a ``before_model``, ``after_model`` or ``on_model_error`` event is shown under the
    ``generate_content`` span of the model call it belongs to; one whose call never reached
    the model (served from ``before_model``) stays on the agent's span. Decisions that only
    let the step through (``allow``, ``cache_miss``) are not shown.

    Args:
        spans: finished spans (objects with ``name``, ``context``, ``parent``,
            ``start_time``, ``end_time``, ``attributes``, ``events``).
        trace_id: only this trace (default: every trace, the earliest run first).
        events: show the lattice's span events under their span.
        durations: show each span's duration.

    Returns:
        The tree as text, lines joined by newlines (empty when there is no span).
    """
    chosen = [s for s in spans if trace_id is None or s.context.trace_id == trace_id]
    ids = {s.context.span_id for s in chosen}
    children: dict[int | None, list[Any]] = defaultdict(list)
    for s in chosen:
        parent = s.parent.span_id if s.parent is not None else None
        children[parent if parent in ids else None].append(s)
    lines: list[str] = []

    def walk(span: Any, depth: int, moved: Sequence[Any]) -> None:
        lines.append("  " * depth + _label(span, durations))
        kids = sorted(children.get(span.context.span_id, ()), key=_start)
        own = [*moved, *(_shown(span) if events else ())]
        handed = _hand_to_model_calls(own, kids)
        gone = {id(e) for moved_events in handed.values() for e in moved_events}
        kept = [e for e in own if id(e) not in gone]
        items: list[tuple[int, int, Any]] = [(e.timestamp or 0, 0, e) for e in kept]
        items += [(_start(k), 1, k) for k in kids]
        for _, is_span, item in sorted(items, key=lambda t: (t[0], t[1])):
            if is_span:
                walk(item, depth + 1, handed.get(item.context.span_id, ()))
            else:
                lines.append("  " * (depth + 1) + "· " + _event_label(item))

    for root in sorted(children.get(None, ()), key=_start):
        walk(root, 0, ())
    return "\n".join(lines)


def _shown(span: Any) -> list[Any]:
    return [
        e for e in span.events if e.name.startswith(n.EVENT_PREFIX) and e.name != n.EVENT_CONTENT
    ]


def _is_model_call(span: Any) -> bool:
    attrs = span.attributes or {}
    operation = attrs.get("gen_ai.operation.name")
    return operation == "generate_content" or (
        operation is None and str(span.name).startswith("generate_content")
    )


def _hand_to_model_calls(events: Sequence[Any], kids: Sequence[Any]) -> dict[int, list[Any]]:
    """Which model-hook events belong under which model-call child span.

    Model calls under one agent span run one after another: a ``before_model`` event
    belongs to the first model call that starts after it, unless a handler answered it
    there (then the model was not called); an ``after_model`` or ``on_model_error`` event
    belongs to the last model call started before it, unless it closes a response served
    from ``before_model``. Returns the events handed on, by the child span's id.
    """
    calls = [k for k in kids if _is_model_call(k)]
    handed: dict[int, list[Any]] = {}
    if not calls:
        return handed
    for event in events:
        attrs = event.attributes or {}
        hook = attrs.get(n.HOOK)
        if hook not in _MODEL_HOOKS:
            continue
        at = event.timestamp or 0
        target = None
        if hook == "before_model":
            if attrs.get(n.HANDLER) is None:  # nobody answered: the model was called
                target = next((c for c in calls if _start(c) >= at), None)
        elif not (attrs.get(n.SYNTHESIZED) and attrs.get(n.REASON) == "short_circuit"):
            target = next((c for c in reversed(calls) if _start(c) <= at), None)
        if target is not None:
            handed.setdefault(target.context.span_id, []).append(event)
    return handed


def _start(span: Any) -> int:
    return span.start_time or 0


def _label(span: Any, durations: bool) -> str:
    parts = [span.name]
    if durations and span.start_time is not None and span.end_time is not None:
        parts.append(f"{(span.end_time - span.start_time) / 1e6:.1f} ms")
    attrs = span.attributes or {}
    if attrs.get(n.SHORT_CIRCUIT):
        parts.append(f"[served by {attrs.get(n.SERVED_BY, '?')}, model not called]")
    return "  ".join(parts)


def _event_label(event: Any) -> str:
    attrs = event.attributes or {}
    hook = str(attrs.get(n.HOOK, event.name.removeprefix(n.EVENT_PREFIX)))
    bits: list[str] = [hook]
    decisions = attrs.get(n.DECISION)
    if isinstance(decisions, Sequence) and not isinstance(decisions, str):
        acted = [str(d) for d in decisions if str(d).rpartition(":")[2] not in QUIET_DECISIONS]
        if acted:
            bits.append(", ".join(acted))
        elif attrs.get(n.HANDLER):
            bits.append(f"{attrs[n.HANDLER]} acted")
    elif attrs.get(n.HANDLER):
        bits.append(f"{attrs[n.HANDLER]} acted")
    if attrs.get(n.SYNTHESIZED):
        bits.append(f"(closed: {attrs.get(n.REASON)})")
    elif attrs.get(n.REASON):
        bits.append(f"({attrs[n.REASON]})")
    if attrs.get(n.ERROR_TYPE):
        who = attrs.get(n.HANDLER)
        bits.append(f"error {attrs[n.ERROR_TYPE]}" + (f" in {who}" if who else ""))
    return "  ".join(bits)
