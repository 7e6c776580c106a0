"""In-memory OpenTelemetry capture for tests, safe with OTel's set-once global providers.

OpenTelemetry lets a process set its global tracer and meter providers once. So one SDK
provider per kind is installed for the whole process (or an SDK tracer provider already
installed is reused), and each test attaches its own in-memory exporter or reader view
for its duration:

- spans: a forwarding span processor hands every ended span to the exporter of the
  test that is capturing, and drops spans while none is;
- metrics: one ``InMemoryMetricReader`` with delta temporality; a capture drains it on
  start, so each test sees only the measurements made during the test.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    MeterProvider,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
    MetricsData,
)
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_lock = threading.Lock()


class _Forwarder(SpanProcessor):
    """Hands ended spans to the capturing test's processor; does nothing between tests."""

    def __init__(self) -> None:
        self.target: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        target = self.target
        if target is not None:
            target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        target = self.target
        if target is not None:
            target.on_end(span)


_forwarder: _Forwarder | None = None
_reader: InMemoryMetricReader | None = None


def _install_forwarder() -> _Forwarder:
    global _forwarder
    with _lock:
        if _forwarder is not None:
            return _forwarder
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
            # set_tracer_provider only warns when a provider was set concurrently: re-read.
            provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            raise RuntimeError(
                "the global tracer provider is not an OpenTelemetry SDK TracerProvider "
                f"({type(provider).__name__}); span capture needs one to attach to"
            )
        _forwarder = _Forwarder()
        provider.add_span_processor(_forwarder)
        return _forwarder


def _install_reader() -> InMemoryMetricReader:
    global _reader
    with _lock:
        if _reader is not None:
            return _reader
        if isinstance(metrics.get_meter_provider(), MeterProvider):
            # An SDK MeterProvider takes its readers at construction; none can be added.
            raise RuntimeError(
                "a global OpenTelemetry MeterProvider is already installed, so no in-memory "
                "reader can be attached; capture metrics in a process that does not set one"
            )
        # Delta temporality makes each collection hold only what happened since the last
        # one, which is what lets consecutive tests share one process-wide reader.
        kinds = (Counter, UpDownCounter, Histogram, ObservableCounter, ObservableUpDownCounter)
        temporality: dict[type, AggregationTemporality] = dict.fromkeys(
            kinds, AggregationTemporality.DELTA
        )
        temporality[ObservableGauge] = AggregationTemporality.CUMULATIVE
        reader = InMemoryMetricReader(preferred_temporality=temporality)
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _reader = reader
        return reader


class MetricCapture:
    """The metrics recorded while one capture is active.

    Each :meth:`get_metrics_data` call collects what was measured since the previous call
    (or since the capture began); :meth:`points` looks across every collection so far.
    """

    def __init__(self, reader: InMemoryMetricReader) -> None:
        self._reader = reader
        self._collected: list[MetricsData] = []

    def get_metrics_data(self) -> MetricsData | None:
        """Collect the measurements made since the previous collection."""
        data = self._reader.get_metrics_data()
        if data is not None:
            self._collected.append(data)
        return data

    def names(self) -> set[str]:
        """The names of every metric measured during the capture (collects first)."""
        return {metric.name for metric in self._metrics()}

    def points(self, name: str) -> list[Any]:
        """Every data point of the metric ``name`` measured during the capture.

        Collects first. Counters and histograms give one delta point per collection and
        attribute set.
        """
        return [
            point
            for metric in self._metrics()
            if metric.name == name
            for point in metric.data.data_points
        ]

    def _metrics(self) -> Iterator[Any]:
        self.get_metrics_data()
        for data in self._collected:
            for resource_metrics in data.resource_metrics:
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
    forwarder = _install_forwarder()
    exporter = InMemorySpanExporter()
    with _lock:
        if forwarder.target is not None:
            raise RuntimeError("a span capture is already active; captures cannot nest")
        forwarder.target = SimpleSpanProcessor(exporter)
    try:
        yield exporter
    finally:
        forwarder.target = None
        exporter.clear()


@contextmanager
def capture_metrics() -> Iterator[MetricCapture]:
    """Collect the metrics measured while the block runs.

    Yields:
        A :class:`MetricCapture`.

    Raises:
        RuntimeError: when another SDK ``MeterProvider`` is already the global one.
    """
    reader = _install_reader()
    reader.get_metrics_data()  # drop what earlier code measured
    yield MetricCapture(reader)
