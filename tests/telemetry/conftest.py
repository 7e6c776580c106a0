"""Fixtures for the telemetry tests: one process-wide tracer provider, per-test readers.

OpenTelemetry lets a process set its global tracer provider once, and ADK's tracer binds to
the first one it sees, so the session installs one (through ``enable_tracing``, which adds
its exporter to a provider set earlier instead of replacing it) and each test clears the
in-memory exporter. Meters are per test: ``Telemetry`` takes an explicit meter provider.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _telemetry_support import OpenSpans, meter
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_lattice.telemetry import TracingHandle, enable_tracing

_OPEN = OpenSpans()


@pytest.fixture(scope="session")
def tracing() -> Iterator[TracingHandle]:
    """The session's tracing, exporting to memory."""
    handle = enable_tracing("memory", metrics_exporter="none")
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    provider.add_span_processor(_OPEN)
    yield handle
    handle.shutdown()


@pytest.fixture
def exporter(tracing: TracingHandle) -> Iterator[InMemorySpanExporter]:
    """The in-memory span exporter, empty at the start of the test."""
    assert isinstance(tracing.span_exporter, InMemorySpanExporter)
    tracing.span_exporter.clear()
    _OPEN.open.clear()
    yield tracing.span_exporter
    tracing.span_exporter.clear()


@pytest.fixture
def open_spans(exporter: InMemorySpanExporter) -> OpenSpans:
    """The tracker of spans started and not yet ended (cleared per test)."""
    return _OPEN


@pytest.fixture
def metrics() -> Iterator[tuple[object, InMemoryMetricReader]]:
    """A private meter provider and its in-memory reader."""
    provider, reader = meter()
    yield provider, reader
    provider.shutdown()
