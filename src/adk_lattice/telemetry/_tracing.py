"""``enable_tracing()``: global OpenTelemetry tracing and metrics for the whole app in one call.

The only module of the telemetry tier that imports the OpenTelemetry SDK.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    InMemoryMetricReader,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ._otel import forget_global, resolve

logger = logging.getLogger("adk_lattice")

ExporterName = Literal[
    "console", "console_json", "otlp", "otlp_http", "otlp_grpc", "memory", "none"
]
#: ADK's legacy span format puts raw requests and tool arguments on spans unless this says no.
ADK_CONTENT_ENV: Final = "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS"


@dataclass(slots=True)
class TracingHandle:
    """What :func:`enable_tracing` set up, to flush and shut it down.

    Attributes:
        tracer_provider: the global tracer provider now in effect.
        meter_provider: the global meter provider now in effect.
        span_exporter: the exporter this call added (None for ``"none"``).
        metric_reader: the metric reader this call installed, or None when the meter
            provider was already set (metrics then go wherever that provider sends them).
        logger_provider: the global logger provider when ``logs`` was asked for, else None.
        log_exporter: the log record exporter this call added, or None.
        owns_tracer_provider, owns_meter_provider, owns_logger_provider: whether this call
            created (and :meth:`shutdown` shuts down) the provider.
    """

    tracer_provider: Any
    meter_provider: Any
    span_exporter: SpanExporter | None = None
    metric_reader: MetricReader | None = None
    owns_tracer_provider: bool = False
    owns_meter_provider: bool = False
    logger_provider: Any = None
    log_exporter: Any = None
    owns_logger_provider: bool = False
    _processor: SpanProcessor | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export everything buffered now; True when every part flushed in time."""
        ok = True
        if self._processor is not None:
            ok = self._processor.force_flush(timeout_millis) and ok
        if self.owns_meter_provider:
            ok = bool(self.meter_provider.force_flush(timeout_millis)) and ok
        if self.logger_provider is not None and self.log_exporter is not None:
            ok = bool(self.logger_provider.force_flush(timeout_millis)) and ok
        return ok

    def shutdown(self) -> None:
        """Flush, then shut down what this call created. Safe to call more than once.

        A provider that was already set is left running; only the exporter this call
        attached to it stops.
        """
        if self._closed:
            return
        self._closed = True
        if self.owns_tracer_provider:
            self.tracer_provider.shutdown()
        elif self._processor is not None:
            self._processor.shutdown()
        if self.owns_meter_provider:
            self.meter_provider.shutdown()
        if self.owns_logger_provider:
            self.logger_provider.shutdown()


def enable_tracing(
    exporter: SpanExporter | ExporterName | None = None,
    *,
    metrics_exporter: MetricExporter | MetricReader | ExporterName | None = None,
    service_name: str | None = None,
    replace: bool = False,
    adk_content: bool = False,
    metric_interval_s: float = 60.0,
    logs: Any = False,
) -> TracingHandle:
    """Turn on global OpenTelemetry tracing and metrics for the whole app.

    With no argument: OTLP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``)
    is set (gRPC when ``OTEL_EXPORTER_OTLP_PROTOCOL`` says ``grpc``, else HTTP), the
    console otherwise. The standard ``OTEL_*`` variables configure the OTLP exporters.

    A provider the app (or ADK's own set-up, e.g. ``adk web``) already installed is kept:
    an SDK tracer provider gets this call's exporter added to it; the meter provider is
    left as it is (instruments report through it). ``replace=True`` installs new providers
    anyway; tracers and meters already handed out by the old ones keep using them, so call
    it at start-up.

    ADK's legacy span format (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``) puts raw prompts,
    tool arguments and results on its spans unless ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS``
    says no; unless ``adk_content=True`` (or that variable is already set) this call sets it
    to ``false``, so no raw content reaches the exporter whichever format ADK emits.

    Args:
        exporter: a ``SpanExporter``, or ``"console"`` (each run printed as a span tree with
            the lattice's decisions, when its root span ends), ``"console_json"`` (every
            span as OpenTelemetry's raw JSON), ``"otlp"`` (protocol from the environment),
            ``"otlp_http"``, ``"otlp_grpc"``, ``"memory"`` (tests) or ``"none"``.
        metrics_exporter: a ``MetricExporter``, a ``MetricReader``, or a name as above;
            default: the same kind as the span exporter (``"memory"`` for a custom one;
            none for ``"console"``, whose metric JSON would bury the trees; ask for it with
            ``metrics_exporter="console"``).
        service_name: ``service.name`` of the resource (default: from ``OTEL_SERVICE_NAME``).
        replace: install new global providers even when some are already set.
        adk_content: let ADK keep putting raw content on its spans.
        metric_interval_s: how often periodic metric readers export.
        logs: also export OpenTelemetry log records (the audit records of
            :class:`~adk_lattice.telemetry.OTelLogSink`): ``True`` for the same kind as the
            span exporter, a name as above, or an SDK ``LogRecordExporter``. A global
            logger provider the app already set gets this exporter added; otherwise one is
            installed. Default: no log export.

    Returns:
        A :class:`TracingHandle` with ``force_flush()`` and ``shutdown()``.

    Raises:
        ValueError: on an unknown exporter name.
        ImportError: when an OTLP exporter is asked for but ``adk-lattice[otlp]`` is missing.
    """
    if not adk_content:
        os.environ.setdefault(ADK_CONTENT_ENV, "false")
    kind = resolve(exporter)
    resource = _resource(service_name)
    span_exporter = exporter if isinstance(exporter, SpanExporter) else _span_exporter(kind)
    processor: SpanProcessor | None = None
    if span_exporter is not None:
        batched = kind in ("otlp_http", "otlp_grpc")
        processor = (BatchSpanProcessor if batched else SimpleSpanProcessor)(span_exporter)
    handle = TracingHandle(trace.get_tracer_provider(), metrics.get_meter_provider())
    handle.span_exporter, handle._processor = span_exporter, processor
    _install_tracer(handle, resource, processor, replace)
    reader = _metric_reader(metrics_exporter, kind, metric_interval_s)
    _install_meter(handle, resource, reader, replace)
    if logs is not False and logs is not None:
        from ._log_export import install_logs

        install_logs(handle, resource, kind if logs is True else logs, replace)
    return handle


def _resource(service_name: str | None) -> Resource:
    # Resource.create reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; ours wins over them.
    return Resource.create({"service.name": service_name} if service_name else {})


def _span_exporter(kind: str) -> SpanExporter | None:
    if kind == "console":
        from ._console import SpanTreeExporter

        return SpanTreeExporter()
    if kind == "console_json":
        return ConsoleSpanExporter()
    if kind == "memory":
        return InMemorySpanExporter()
    if kind == "otlp_http":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if kind == "otlp_grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        return GrpcSpanExporter()
    return None


def _metric_reader(
    spec: MetricExporter | MetricReader | str | None, span_kind: str, interval_s: float
) -> MetricReader | None:
    if isinstance(spec, MetricReader):
        return spec
    if isinstance(spec, MetricExporter):
        return PeriodicExportingMetricReader(spec, export_interval_millis=interval_s * 1000)
    if spec is None and span_kind == "console":
        return None  # a readable console: the span tree, not periodic metric JSON
    kind = resolve(spec) if spec is not None else span_kind
    exporter: MetricExporter
    if kind in ("memory", "custom"):
        return InMemoryMetricReader()
    if kind == "none":
        return None
    if kind in ("console", "console_json"):
        exporter = ConsoleMetricExporter()
    elif kind == "otlp_http":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter()
    else:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetricExporter,
        )

        exporter = GrpcMetricExporter()
    return PeriodicExportingMetricReader(exporter, export_interval_millis=interval_s * 1000)


def _install_tracer(
    handle: TracingHandle, resource: Resource, processor: SpanProcessor | None, replace: bool
) -> None:
    current = trace.get_tracer_provider()
    unset = isinstance(current, trace.ProxyTracerProvider)
    if not unset and not replace:
        if isinstance(current, TracerProvider):
            if processor is not None:
                current.add_span_processor(processor)
        elif processor is not None:
            logger.warning(
                "adk_lattice: the global tracer provider %s is not the OpenTelemetry SDK's; "
                "leaving it alone (pass replace=True to install ours)",
                type(current).__name__,
            )
            handle._processor = None
        return
    provider = TracerProvider(resource=resource)
    if processor is not None:
        provider.add_span_processor(processor)
    if not unset:
        forget_global("_TRACER_PROVIDER_SET_ONCE", trace)
    trace.set_tracer_provider(provider)
    handle.tracer_provider, handle.owns_tracer_provider = provider, True


def _install_meter(
    handle: TracingHandle, resource: Resource, reader: MetricReader | None, replace: bool
) -> None:
    if reader is None:
        return
    from opentelemetry.metrics import _internal as metrics_internal

    unset = metrics_internal._METER_PROVIDER is None
    if not unset and not replace:
        return  # an SDK MeterProvider takes no reader after construction
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    if not unset:
        forget_global("_METER_PROVIDER_SET_ONCE", metrics_internal)
    metrics.set_meter_provider(provider)
    handle.meter_provider, handle.owns_meter_provider = provider, True
    handle.metric_reader = reader
