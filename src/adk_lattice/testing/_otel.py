"""In-memory OpenTelemetry capture for tests, safe with OTel's set-once global providers.

OpenTelemetry lets a process set its global tracer and meter providers once. So the SDK
providers already installed are reused, or one per kind is installed for the whole
process, and each capture attaches its own in-memory exporter or reader for its duration:

- spans: a forwarding span processor on the provider hands every ended span to the
  exporter of the capture that is active, and drops spans while none is;
- metrics: an SDK meter provider takes readers at any time, so each capture adds its own
  ``InMemoryMetricReader`` to the global provider (installed if none is) and removes it
  at the end, seeing only the measurements made meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_lock = threading.Lock()


class _Forwarder(SpanProcessor):
    """Hands spans to the active capture's processor; does nothing between captures."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        target = _target
        if target is not None:
            target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        target = _target
        if target is not None:
            target.on_end(span)


#: The active capture's processor, shared by every forwarder.
_target: SpanProcessor | None = None
#: The tracer providers a forwarder is attached to. A provider replaced later keeps its
#: forwarder: tracers obtained earlier (ADK's among them) still export through it.
_attached: list[TracerProvider] = []


def _attach_forwarder() -> None:
    """Make sure the global tracer provider (installed if none is) has a forwarder."""
    with _lock:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            trace.set_tracer_provider(TracerProvider())
            # Only takes effect while no provider is set; otherwise the check below explains.
            provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            raise RuntimeError(
                "the global tracer provider is not an OpenTelemetry SDK TracerProvider "
                f"({type(provider).__name__}); span capture needs one to attach to"
            )
        if not any(known is provider for known in _attached):
            provider.add_span_processor(_Forwarder())
            _attached.append(provider)


def _meter_provider() -> MeterProvider:
    """The process's SDK MeterProvider, installing one (without readers) when none is set."""
    with _lock:
        current = metrics.get_meter_provider()
        if not isinstance(current, MeterProvider):
            # Only takes effect while no provider is set; otherwise the check below explains.
            metrics.set_meter_provider(MeterProvider())
            current = metrics.get_meter_provider()
        if not isinstance(current, MeterProvider):
            raise RuntimeError(
                "the global meter provider is not an OpenTelemetry SDK MeterProvider "
                f"({type(current).__name__}); metric capture needs one to attach to"
            )
        return current


class MetricCapture:
    """The metrics recorded while one capture is active.

    Wraps an ``InMemoryMetricReader`` attached to the process's meter provider for the
    capture only, so every collection holds the totals since the capture began.
    """

    def __init__(self, reader: InMemoryMetricReader) -> None:
        self._reader = reader

    def get_metrics_data(self) -> MetricsData | None:
        """Collect the totals measured since the capture began."""
        return self._reader.get_metrics_data()

    def names(self) -> set[str]:
        """The names of every metric measured during the capture."""
        return {metric.name for metric in self._metrics()}

    def points(self, name: str) -> list[Any]:
        """The data points of the metric ``name``: one per attribute set, totals so far."""
        return [
            point
            for metric in self._metrics()
            if metric.name == name
            for point in metric.data.data_points
        ]

    def _metrics(self) -> Iterator[Any]:
        data = self.get_metrics_data()
        for resource_metrics in data.resource_metrics if data else ():
            for scope_metrics in resource_metrics.scope_metrics:
                yield from scope_metrics.metrics


@contextmanager
def capture_spans() -> Iterator[InMemorySpanExporter]:
    """Collect every span that ends while the block runs into an in-memory exporter.

    Yields:
        The exporter; ``get_finished_spans()`` returns the spans, in end order.

    Raises:
        RuntimeError: when a capture is already active, or the global tracer provider is
            not an SDK ``TracerProvider``.
    """
    global _target
    _attach_forwarder()
    exporter = InMemorySpanExporter()
    with _lock:
        if _target is not None:
            raise RuntimeError("a span capture is already active; captures cannot nest")
        _target = SimpleSpanProcessor(exporter)
    try:
        yield exporter
    finally:
        _target = None


@contextmanager
def capture_metrics() -> Iterator[MetricCapture]:
    """Collect the metrics measured while the block runs.

    Yields:
        A :class:`MetricCapture`.

    Raises:
        RuntimeError: when the global meter provider is not an SDK ``MeterProvider``.
    """
    provider = _meter_provider()
    # A reader added now sees only what is measured from now on; removed, it sees no more.
    reader = InMemoryMetricReader()
    provider.add_metric_reader(reader)
    try:
        yield MetricCapture(reader)
    finally:
        provider.remove_metric_reader(reader)
