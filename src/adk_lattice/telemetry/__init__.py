"""Telemetry tier: OpenTelemetry spans and metrics, an audit record per invocation.

``Telemetry`` and ``AuditLog`` are observers for ``Lattice(telemetry=[...])``;
``enable_tracing()`` turns on global OpenTelemetry export in one call. Importing this
package needs only ``opentelemetry-api``: the SDK is imported when ``enable_tracing`` (or
``TracingHandle``) is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._notes import Note, note, notes_of
from ._audit import AuditLog
from ._decisions import Decision, decisions_of
from ._names import DECISIONS, DecisionName
from ._observer import Telemetry
from ._otel_logs import OTelLogSink
from ._sinks import JsonlSink, LoggingSink, Sink
from ._tree import render_span_tree

if TYPE_CHECKING:
    from ._console import SpanTreeExporter
    from ._tracing import TracingHandle, enable_tracing

__all__ = [
    "DECISIONS",
    "AuditLog",
    "Decision",
    "DecisionName",
    "JsonlSink",
    "LoggingSink",
    "Note",
    "OTelLogSink",
    "Sink",
    "SpanTreeExporter",
    "Telemetry",
    "TracingHandle",
    "decisions_of",
    "enable_tracing",
    "note",
    "notes_of",
    "render_span_tree",
]


def __getattr__(name: str) -> Any:
    # Deferred so that using Telemetry or AuditLog never imports the OpenTelemetry SDK.
    if name in ("enable_tracing", "TracingHandle"):
        from . import _tracing

        return getattr(_tracing, name)
    if name == "SpanTreeExporter":
        from ._console import SpanTreeExporter

        return SpanTreeExporter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
