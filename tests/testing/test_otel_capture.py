"""In-memory OpenTelemetry capture over the process-wide providers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry import metrics, trace

from adk_lattice.testing import capture_metrics, capture_spans


def test_spans_ended_during_capture_are_captured() -> None:
    """A span ended inside the block reaches the capture's exporter."""
    with capture_spans() as exporter:
        with trace.get_tracer("t").start_as_current_span("inside"):
            pass
        assert [s.name for s in exporter.get_finished_spans()] == ["inside"]


def test_spans_ended_outside_capture_are_dropped() -> None:
    """A span ended between captures reaches no later capture."""
    with capture_spans():
        pass
    with trace.get_tracer("t").start_as_current_span("between"):
        pass
    with capture_spans() as exporter:
        assert exporter.get_finished_spans() == ()


def test_captures_cannot_nest() -> None:
    """Starting a span capture inside another is a RuntimeError."""
    with capture_spans(), pytest.raises(RuntimeError, match="already active"), capture_spans():
        pass


def test_metrics_measured_before_capture_are_not_seen() -> None:
    """A capture sees only measurements made after it began."""
    counter = metrics.get_meter("t").create_counter("lattice.test.count")
    with capture_metrics():
        counter.add(5)
    with capture_metrics() as capture:
        counter.add(2)
        assert [p.value for p in capture.points("lattice.test.count")] == [2]


def test_points_are_totals_since_the_capture_began() -> None:
    """points() reports totals since the capture began, whatever was collected before."""
    counter = metrics.get_meter("t").create_counter("lattice.test.total")
    with capture_metrics() as capture:
        counter.add(1)
        capture.get_metrics_data()
        counter.add(3)
        assert sum(p.value for p in capture.points("lattice.test.total")) == 4
        assert "lattice.test.total" in capture.names()


SRC = Path(__file__).resolve().parents[2] / "src"


def test_captures_attach_to_providers_installed_earlier() -> None:
    """With SDK providers already global (an app's own), captures attach to them."""
    script = textwrap.dedent(
        """
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
        from adk_lattice.testing import capture_metrics, capture_spans

        trace.set_tracer_provider(TracerProvider())
        metrics.set_meter_provider(MeterProvider())
        counter = metrics.get_meter("app").create_counter("app.count")
        with capture_spans() as spans, capture_metrics() as capture:
            with trace.get_tracer("app").start_as_current_span("work"):
                counter.add(2)
            assert [s.name for s in spans.get_finished_spans()] == ["work"]
            assert [p.value for p in capture.points("app.count")] == [2]
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


def test_exporter_keeps_its_spans_after_the_block() -> None:
    """The exporter still holds the captured spans after the capture ends."""
    with capture_spans() as exporter, trace.get_tracer("t").start_as_current_span("kept"):
        pass
    assert [s.name for s in exporter.get_finished_spans()] == ["kept"]


def test_capture_follows_a_replaced_tracer_provider() -> None:
    """Spans from a provider installed later, and from tracers of the first, are captured."""
    script = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.util._once import Once
        from adk_lattice.testing import capture_spans

        early = trace.get_tracer("early")
        with capture_spans(), early.start_as_current_span("bind"):
            pass  # first use binds it to the first provider for good, as ADK's tracer is
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # what a replace=True install does
        trace.set_tracer_provider(TracerProvider())
        with capture_spans() as spans:
            with trace.get_tracer("late").start_as_current_span("late"):
                pass
            with early.start_as_current_span("early"):
                pass
        assert sorted(s.name for s in spans.get_finished_spans()) == ["early", "late"]
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
