"""What the trace, metric and log halves of ``enable_tracing`` share: exporter names and
OpenTelemetry's set-once globals."""

from __future__ import annotations

import os
from typing import Any, Final

from opentelemetry.sdk.trace.export import SpanExporter

_OTLP_ENV: Final = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def resolve(exporter: SpanExporter | str | None) -> str:
    """The exporter kind a name (or an exporter) means; ``None`` reads the OTLP variables.

    Raises:
        ValueError: on an unknown exporter name.
    """
    if isinstance(exporter, SpanExporter):
        return "custom"
    name = exporter
    if name is None:
        name = "otlp" if any(os.environ.get(v) for v in _OTLP_ENV) else "console"
    if name == "otlp":
        protocol = os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
        )
        name = "otlp_grpc" if protocol.strip().lower() == "grpc" else "otlp_http"
    if name not in ("console", "console_json", "otlp_http", "otlp_grpc", "memory", "none"):
        raise ValueError(
            f"unknown exporter {exporter!r}: use a SpanExporter or one of "
            "'console', 'console_json', 'otlp', 'otlp_http', 'otlp_grpc', 'memory', 'none'"
        )
    return name


def forget_global(name: str, module: Any) -> None:
    """Let ``set_*_provider`` run again (OpenTelemetry allows it once per process)."""
    from opentelemetry.util._once import Once

    setattr(module, name, Once())
