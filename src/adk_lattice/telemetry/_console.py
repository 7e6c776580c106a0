"""``SpanTreeExporter``: the console exporter of ``enable_tracing("console")``, one tree per run.

OpenTelemetry's ``ConsoleSpanExporter`` prints every span as a block of JSON (some 2,500
lines for two turns of a small app). This exporter keeps a trace's spans until its root
span ends (the end of the invocation), then prints the run as the indented tree
:func:`~adk_lattice.telemetry.render_span_tree` draws: span names, durations, and the
lattice's decisions under the spans they happened on.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, TextIO

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._tree import render_span_tree


class SpanTreeExporter(SpanExporter):
    """Prints each finished trace as one span tree.

    Spans are held per trace until the trace's root span (one without a parent) ends;
    then the whole trace is printed at once and forgotten. At most ``max_traces`` traces
    are held: past that the oldest is printed as it stands, marked incomplete, so memory
    stays bounded when a root never ends. ``shutdown()`` prints what is still held,
    marked incomplete.

    Args:
        out: where to print (default: standard output at the time of printing).
        events: show the lattice's decisions under their spans.
        durations: show each span's duration.
        max_traces: most traces held while waiting for their root span.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        events: bool = True,
        durations: bool = True,
        max_traces: int = 256,
    ) -> None:
        if max_traces < 1:
            raise ValueError("max_traces must be at least 1")
        self._out = out
        self._events = events
        self._durations = durations
        self._max = max_traces
        self._held: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Hold the spans; print every trace whose root span is among them."""
        ready: list[tuple[list[ReadableSpan], bool]] = []
        with self._lock:
            for span in spans:
                trace_id = span.context.trace_id if span.context is not None else 0
                self._held.setdefault(trace_id, []).append(span)
                if span.parent is None:
                    ready.append((self._held.pop(trace_id), True))
            while len(self._held) > self._max:
                _, oldest = self._held.popitem(last=False)
                ready.append((oldest, False))
        for held, complete in ready:
            self._print(held, complete)
        return SpanExportResult.SUCCESS

    def _print(self, spans: list[ReadableSpan], complete: bool) -> None:
        tree = render_span_tree(spans, events=self._events, durations=self._durations)
        out: Any = self._out or sys.stdout
        header = "" if complete else "(incomplete: the run's root span has not ended)\n"
        out.write(f"{header}{tree}\n\n")
        out.flush()

    def _drain(self) -> None:
        with self._lock:
            held = list(self._held.values())
            self._held.clear()
        for spans in held:
            self._print(spans, False)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Nothing to flush: a trace is printed when its root span ends."""
        return True

    def shutdown(self) -> None:
        """Print every trace still held, marked incomplete."""
        self._drain()
