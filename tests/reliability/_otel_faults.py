"""Span exporters that fail or stall, behind a switchable processor on the global provider.

OpenTelemetry sets the global tracer provider once per process and ADK's tracer binds to
the first one it sees, so one :class:`Switch` is attached to it (installing an SDK provider
if none is set) and each test points the switch at the processor it wants to break.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class RaisingExporter(SpanExporter):
    """An exporter whose every export raises (a collector that is down or misconfigured)."""

    def __init__(self) -> None:
        self.attempts = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.attempts += len(spans)
        raise ConnectionError("collector unreachable")


class StallingExporter(SpanExporter):
    """An exporter that sleeps ``delay`` seconds per export call (a slow collector)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.exported = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self.delay)
        with self._lock:
            self.exported += len(spans)
        return SpanExportResult.SUCCESS


class Switch(SpanProcessor):
    """Forwards to the processor in ``target``; does nothing while it is None."""

    target: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        if self.target is not None:
            self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.target is not None:
            self.target.on_end(span)


_SWITCH = Switch()
_attached: list[TracerProvider] = []


def switch() -> Switch:
    """The process's switch, attached to the global SDK tracer provider."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider), "the global tracer provider is not the SDK's"
    if not any(p is provider for p in _attached):
        provider.add_span_processor(_SWITCH)
        _attached.append(provider)
    return _SWITCH


@contextmanager
def exporting_through(processor: SpanProcessor) -> Iterator[SpanProcessor]:
    """Send every span that ends in the block through ``processor``; shut it down after."""
    s = switch()
    s.target = processor
    try:
        yield processor
    finally:
        s.target = None
        processor.shutdown()
