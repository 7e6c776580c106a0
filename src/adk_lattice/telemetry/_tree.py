"""Render finished spans (ADK's and the lattice's) as an indented tree, one line per span."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from . import _names as n


def render_span_tree(
    spans: Iterable[Any],
    *,
    trace_id: int | None = None,
    events: bool = True,
    durations: bool = True,
) -> str:
    """An indented tree of finished spans, children in start order, one trace after another.

    Works on what an SDK exporter holds (``InMemorySpanExporter().get_finished_spans()``,
    or the spans a custom ``SpanExporter`` receives). Each span line shows its name, its
    duration and whether the lattice served it from ``before_model``; with ``events`` the
    lattice's ``adk_lattice.*`` span events follow as ``·`` lines (who acted, the decision,
    the reason)::

        invoke_workflow billing  4.1 ms
          invoke_agent billing  3.2 ms
            · before_tool  ToolGuard:deny (role)

    Args:
        spans: finished spans (objects with ``name``, ``context``, ``parent``,
            ``start_time``, ``end_time``, ``attributes``, ``events``).
        trace_id: only this trace (default: every trace, oldest first).
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

    def walk(span: Any, depth: int) -> None:
        lines.append("  " * depth + _label(span, durations))
        if events:
            for event in span.events:
                if event.name.startswith(n.EVENT_PREFIX) and event.name != n.EVENT_CONTENT:
                    lines.append("  " * (depth + 1) + "· " + _event_label(event))
        for child in sorted(children.get(span.context.span_id, ()), key=_start):
            walk(child, depth + 1)

    for root in sorted(children.get(None, ()), key=lambda s: (s.context.trace_id, _start(s))):
        walk(root, 0)
    return "\n".join(lines)


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
        bits.append(", ".join(str(d) for d in decisions))
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
