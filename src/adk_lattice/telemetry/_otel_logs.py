"""``OTelLogSink``: audit records as OpenTelemetry log records, to any collector beside traces.

Uses only ``opentelemetry-api``: records go to the global logger provider (set by
``enable_tracing(logs=...)`` or by the app), or to the one given. Without an SDK provider
the API drops them at no cost, like spans without a tracer provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from opentelemetry import _logs
from opentelemetry._logs import SeverityNumber

from ._names import INVOCATION_ID, SCOPE

#: The log record's event name, so a collector can route audit records apart from other logs.
EVENT_NAME: Final = "adk_lattice.audit"
_MAX_DEPTH: Final = 8


def _any_value(value: Any, depth: int = 0) -> Any:
    """The record as OpenTelemetry ``AnyValue``: no None (OTLP has no null), nothing exotic.

    Keys whose value is None are left out; other non-JSON values become strings.
    """
    if isinstance(value, str | bool | int | float):
        return value
    if depth >= _MAX_DEPTH:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _any_value(v, depth + 1) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_any_value(v, depth + 1) for v in value if v is not None]
    return str(value)


class OTelLogSink:
    """An audit sink emitting each record as one OpenTelemetry log record.

    The body is the record as a structured map (a field holding None is left out: OTLP has
    no null). Attributes name the invocation and its outcome, the event name is
    ``adk_lattice.audit`` and the severity INFO (WARN for a run that ended in error). A
    record written while a span is current carries its trace and span ids, so a backend
    links it to the invocation's trace::

        enable_tracing("otlp", logs=True)
        Lattice(telemetry=[Telemetry(), AuditLog(OTelLogSink())], ...)

    Args:
        logger_provider: where records go (default: the global logger provider).
        name: the sink's name in ``AuditLog.sink_errors``.
    """

    def __init__(self, *, logger_provider: Any = None, name: str = "otel_logs") -> None:
        self.name = name
        self._logger = _logs.get_logger(SCOPE, logger_provider=logger_provider)

    def __call__(self, record: Mapping[str, Any]) -> None:
        outcome = record.get("outcome")
        attributes: dict[str, Any] = {"adk_lattice.audit.outcome": str(outcome)}
        if record.get("invocation_id") is not None:
            attributes[INVOCATION_ID] = str(record["invocation_id"])
        if record.get("version") is not None:
            attributes["adk_lattice.audit.version"] = int(record["version"])
        failed = outcome in ("error", "cancelled", "abandoned")
        self._logger.emit(
            event_name=EVENT_NAME,
            severity_number=SeverityNumber.WARN if failed else SeverityNumber.INFO,
            severity_text="WARN" if failed else "INFO",
            body=_any_value(record),
            attributes=attributes,
        )

    def __repr__(self) -> str:
        return "OTelLogSink()"
