"""Audit records as OpenTelemetry log records: ``OTelLogSink`` and ``enable_tracing(logs=...)``."""

from __future__ import annotations

from typing import Any

import pytest
from _otlp_receiver import otlp_http_receiver
from _telemetry_support import DenyRefunds, agent, lookup, parallel, refund, run
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from adk_lattice import Lattice
from adk_lattice.telemetry import AuditLog, OTelLogSink, TracingHandle, enable_tracing
from adk_lattice.testing import ScriptedResponse


def _any(value: Any) -> Any:
    """An OTLP AnyValue as plain Python."""
    kind = value.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: _any(kv.value) for kv in value.kvlist_value.values}
    if kind == "array_value":
        return [_any(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def refund_app() -> Any:
    return agent(
        "root", parallel("lookup", "refund"), ScriptedResponse.text("ok"), tools=[lookup, refund]
    )


async def test_audit_records_reach_an_otlp_collector_as_logs(
    tracing: TracingHandle, exporter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``enable_tracing(logs=...)`` each invocation's record arrives as one OTLP log."""
    with otlp_http_receiver() as (url, inbox):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", f"{url}/v1/logs")
        handle = enable_tracing("none", metrics_exporter="none", logs="otlp_http")
        try:
            lattice = Lattice(policy=[DenyRefunds()], telemetry=[AuditLog(OTelLogSink())])
            await run(refund_app(), lattice)
            assert handle.force_flush(10_000)
        finally:
            handle.shutdown()
        # ADK emits its own log events through the same provider: pick the audit ones.
        (record,) = [r for r in inbox.log_records() if r.event_name == "adk_lattice.audit"]
    body = _any(record.body)
    assert body["outcome"] == "completed"
    denied = [t for t in body["tool_calls"] if t["name"] == "refund"]
    assert denied[0]["decision"] == "deny"
    attrs = {a.key: _any(a.value) for a in record.attributes}
    assert attrs["adk_lattice.invocation.id"] == body["invocation_id"]


async def test_an_audit_log_record_is_linked_to_the_invocations_trace(
    tracing: TracingHandle, exporter: Any
) -> None:
    """The log record carries the trace id of the invocation's spans."""
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    lattice = Lattice(telemetry=[AuditLog(OTelLogSink(logger_provider=provider))])
    await run(agent("root", ScriptedResponse.text("hi")), lattice)
    (data,) = logs.get_finished_logs()
    trace_ids = {s.context.trace_id for s in exporter.get_finished_spans()}
    assert data.log_record.trace_id in trace_ids


def test_a_field_holding_none_is_left_out_of_the_body() -> None:
    """OTLP has no null: None fields are dropped, nested ones too; the rest is kept."""
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    OTelLogSink(logger_provider=provider)(
        {"outcome": "error", "error_type": None, "tool_calls": [{"name": "t", "reason": None}]}
    )
    (data,) = logs.get_finished_logs()
    assert data.log_record.body == {"outcome": "error", "tool_calls": [{"name": "t"}]}
    assert data.log_record.severity_text == "WARN"
