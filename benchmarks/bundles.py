"""The plugin set-ups the benchmarks compare, all tracing to one in-memory exporter."""

from __future__ import annotations

import os
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_lattice import Lattice

#: Every configuration, in table order. ``openinference`` is the peer's instrumentation.
CONFIGS = ("bare", "noop", "empty", "telemetry", "bundle", "bundle_shadow", "openinference")

#: One process-wide provider, as an app with global tracing turned on has: ADK's own spans,
#: ours and the peer's all go to the same in-memory exporter, cleared between batches.
EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(PROVIDER)


class NoOp(BasePlugin):
    """ADK's own no-op plugin: every hook inherited from BasePlugin."""

    def __init__(self) -> None:
        super().__init__("noop")


#: ``BENCH_AUDIT_BACKGROUND=1``: the bundle's audit records are written by the worker thread.
_BG = os.environ.get("BENCH_AUDIT_BACKGROUND") == "1"


def _bundle(tmp: str, *, shadow: bool = False) -> Lattice:
    from adk_lattice import configure
    from adk_lattice.cache import ResponseCache
    from adk_lattice.policy import (
        CapToolResult,
        InjectionGuard,
        RedactPII,
        RequireState,
        ToolGuard,
        ToolRule,
    )
    from adk_lattice.stores import MemoryStore
    from adk_lattice.telemetry import AuditLog, Telemetry

    lookup_rule = ToolRule(
        schema={
            "type": "object",
            "required": ["charge_id"],
            "properties": {"charge_id": {"type": "string", "maxLength": 64}},
        }
    )
    # The shadow variant runs the two content scanners as a rollout would start them: in
    # shadow mode, on copies of the request and response (the cost of the copies).
    mode = "shadow" if shadow else "enforce"
    return Lattice(
        name="bundle",
        policy=[
            RequireState("user:account_active", message="Your account is inactive."),
            configure(InjectionGuard(), mode=mode),
            ToolGuard({"lookup_charge": lookup_rule}),
            configure(RedactPII(), mode=mode),
            CapToolResult(max_items=20),
        ],
        cache=[ResponseCache(MemoryStore())],
        telemetry=[Telemetry(), AuditLog(os.path.join(tmp, "audit.jsonl"), background=_BG)],
    )


def _telemetry_only() -> Lattice:
    from adk_lattice.telemetry import Telemetry

    return Lattice(name="telemetry", telemetry=[Telemetry()])


def make_plugins(config: str, tmp: str) -> list[Any]:
    """The plugins for one configuration (the peer instruments globally instead)."""
    if config in ("bare", "openinference"):
        return []
    if config == "noop":
        return [NoOp()]
    if config == "empty":
        return [Lattice(name="empty", telemetry=())]
    if config == "telemetry":
        return [_telemetry_only()]
    if config == "bundle":
        return [_bundle(tmp)]
    if config == "bundle_shadow":
        return [_bundle(tmp, shadow=True)]
    raise ValueError(f"unknown configuration {config!r}")
