"""The metrics' short path and shared attributes: same figures, never a stale attribute set."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from _telemetry_support import agent, lookup, meter, points, run
from opentelemetry import metrics as otel_metrics
from opentelemetry.metrics import _internal as metrics_internal
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.util._once import Once

from adk_lattice import Lattice, on
from adk_lattice.cache import ResponseCache
from adk_lattice.stores import MemoryStore
from adk_lattice.telemetry import Telemetry
from adk_lattice.testing import ScriptedResponse

METRICS = (
    "adk_lattice.hook.calls",
    "adk_lattice.handler.duration",
    "adk_lattice.cache.requests",
    "adk_lattice.policy.decisions",
    "adk_lattice.hook.synthesized",
)


class Allow:
    """A policy that lets everything through, on the model and tool hooks."""

    name = "Allow"

    def before_model(self, *, callback_context: Any, llm_request: Any) -> None:
        return None

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        return None


def _tool_turn() -> Any:
    return agent(
        "root",
        ScriptedResponse.call("lookup", charge_id="c1"),
        ScriptedResponse.text("done"),
        tools=[lookup],
    )


def _figures(reader: InMemoryMetricReader) -> dict[str, Counter[tuple[Any, ...]]]:
    """Per metric: how many measurements each attribute set got (a count, not a time)."""
    out: dict[str, Counter[tuple[Any, ...]]] = {}
    for name in METRICS:
        found: Counter[tuple[Any, ...]] = Counter()
        for attrs, value in points(reader, name):
            count = value if isinstance(value, int) else value.count
            found[tuple(sorted(attrs.items()))] += count
        out[name] = found
    return out


async def _turn_figures(telemetry: Telemetry, reader: InMemoryMetricReader) -> Any:
    lattice = Lattice(policy=[Allow()], cache=[ResponseCache(MemoryStore())], telemetry=[telemetry])
    await run(_tool_turn(), lattice, "what is on c1?")
    return _figures(reader)


async def test_a_quiet_turn_records_what_the_full_path_records(exporter) -> None:
    """Every metric of a turn where nothing happened matches the per-decision path's."""
    provider, reader = meter()
    quick = await _turn_figures(Telemetry(meter_provider=provider), reader)
    other, other_reader = meter()
    full = await _turn_figures(Telemetry(meter_provider=other, all_events=True), other_reader)
    assert quick == full
    allow = (("adk_lattice.decision", "allow"), ("adk_lattice.handler", "Allow"))
    assert any(all(a in key for a in allow) for key in quick["adk_lattice.policy.decisions"])
    provider.shutdown()
    other.shutdown()


async def test_a_handler_that_fails_after_passing_is_counted_as_an_error(exporter) -> None:
    """The shared attributes of a passing step are never reused for the same step failing."""
    calls = Counter[str]()

    @on("before_model", name="flaky")
    def flaky(*, callback_context: Any, llm_request: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("second call fails")

    provider, reader = meter()
    lattice = Lattice(handlers=[flaky], telemetry=[Telemetry(meter_provider=provider)])
    await run(_tool_turn(), lattice)
    seen = {
        (attrs["adk_lattice.outcome"], attrs.get("error.type")): value
        for attrs, value in points(reader, "adk_lattice.hook.calls")
        if attrs["adk_lattice.handler"] == "flaky"
    }
    assert seen == {("pass", None): 1, ("error", "RuntimeError"): 1}
    provider.shutdown()


async def test_spans_keep_decisions_when_metrics_go_nowhere(exporter) -> None:
    """With a no-op meter provider the spans still carry every decision."""

    @on("before_tool", name="NoRefunds")
    def deny(*, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any]:
        return {"status": "denied", "code": "role"}

    telemetry = Telemetry(meter_provider=otel_metrics.NoOpMeterProvider())
    await run(_tool_turn(), Lattice(policy=[deny], telemetry=[telemetry]))
    span = next(s for s in exporter.get_finished_spans() if s.name == "execute_tool lookup")
    assert span.attributes["adk_lattice.before_tool.decision"] == "deny"


async def test_metrics_start_once_a_global_meter_provider_is_set(
    exporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global meter provider set after Telemetry was made receives the later turns."""
    monkeypatch.setattr(metrics_internal, "_METER_PROVIDER", None)
    monkeypatch.setattr(metrics_internal, "_METER_PROVIDER_SET_ONCE", Once())
    monkeypatch.setattr(
        metrics_internal, "_PROXY_METER_PROVIDER", type(metrics_internal._PROXY_METER_PROVIDER)()
    )
    monkeypatch.delenv("OTEL_PYTHON_METER_PROVIDER", raising=False)
    telemetry = Telemetry()
    await run(_tool_turn(), Lattice(policy=[Allow()], telemetry=[telemetry]))
    provider, reader = meter()
    otel_metrics.set_meter_provider(provider)
    await run(_tool_turn(), Lattice(policy=[Allow()], telemetry=[telemetry]))
    counted = sum(v for _, v in points(reader, "adk_lattice.policy.decisions"))
    assert counted == 3  # this turn's: two model calls and one tool call, each allowed
    provider.shutdown()
