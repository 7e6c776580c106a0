"""The log half of ``enable_tracing``: a global SDK logger provider and its exporter."""

from __future__ import annotations

from typing import Any

from opentelemetry import _logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    ConsoleLogRecordExporter,
    InMemoryLogRecordExporter,
    LogRecordExporter,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.resources import Resource

from ._otel import forget_global, resolve


def _exporter(kind: str) -> LogRecordExporter | None:
    if kind in ("console", "console_json"):
        return ConsoleLogRecordExporter()
    if kind in ("memory", "custom"):
        return InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    if kind == "otlp_http":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

        return OTLPLogExporter()
    if kind == "otlp_grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
            OTLPLogExporter as GrpcLogExporter,
        )

        return GrpcLogExporter()
    return None


def install_logs(handle: Any, resource: Resource, spec: Any, replace: bool) -> None:
    """Add a log exporter to the global logger provider, installing one if none is set.

    Args:
        handle: the :class:`~adk_lattice.telemetry.TracingHandle` to record it on.
        resource: the resource of a provider made here.
        spec: a ``LogRecordExporter``, or an exporter name (``console``, ``otlp``, ...).
        replace: install a new provider even when one is set.

    Raises:
        ValueError: on an unknown exporter name.
    """
    if isinstance(spec, LogRecordExporter):
        exporter: LogRecordExporter | None = spec
        kind = "custom"
    else:
        kind = spec if spec in ("custom",) else resolve(spec)
        exporter = _exporter(kind)
    if exporter is None:
        return
    batched = kind in ("otlp_http", "otlp_grpc")
    processor = (BatchLogRecordProcessor if batched else SimpleLogRecordProcessor)(exporter)
    current = _logs.get_logger_provider()
    if isinstance(current, LoggerProvider) and not replace:
        current.add_log_record_processor(processor)
        handle.logger_provider, handle.log_exporter = current, exporter
        return
    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(processor)
    from opentelemetry._logs import _internal as logs_internal

    if logs_internal._LOGGER_PROVIDER is not None:
        forget_global("_LOGGER_PROVIDER_SET_ONCE", logs_internal)
    _logs.set_logger_provider(provider)
    handle.logger_provider, handle.log_exporter = provider, exporter
    handle.owns_logger_provider = True
