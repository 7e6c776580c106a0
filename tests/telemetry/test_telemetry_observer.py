"""Telemetry on real Runners: ADK's spans enriched, metrics recorded, no span left open."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import Any

import pytest
from _telemetry_support import (
    PII,
    BlockAgent,
    DenyRefunds,
    KeepOutcomes,
    Raises,
    Redact,
    ServeFromCache,
    agent,
    all_strings,
    broken,
    lookup,
    multi_agent_app,
    parallel,
    points,
    refund,
    run,
    run_cancelled,
)
from google.adk.tools.agent_tool import AgentTool
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_lattice import Lattice
from adk_lattice._notes import pending_count
from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import Telemetry
from adk_lattice.testing import ScriptedResponse

#: The stand-in redactor and the library's own.
REDACTORS = pytest.mark.parametrize("redactor", [Redact, RedactPII])


def _span(exporter: InMemorySpanExporter, name: str) -> Any:
    matches = [s for s in exporter.get_finished_spans() if s.name == name]
    assert matches, f"no span {name!r} in {[s.name for s in exporter.get_finished_spans()]}"
    return matches[-1]


def _events(span: Any, name: str) -> list[Any]:
    return [e for e in span.events if e.name == name]


async def test_denied_tool_is_marked_on_its_execute_tool_span(exporter, metrics) -> None:
    """A policy denial shows on ADK's execute_tool span with handler, decision and reason."""
    provider, _ = metrics
    root = agent("root", parallel("refund"), ScriptedResponse.text("ok"), tools=[lookup, refund])
    lattice = Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)])
    await run(root, lattice)
    span = _span(exporter, "execute_tool refund")
    assert span.attributes["adk_lattice.before_tool.handler"] == "DenyRefunds"
    assert span.attributes["adk_lattice.before_tool.decision"] == "deny"
    assert span.attributes["adk_lattice.before_tool.reason"] == "role"
    (event,) = _events(span, "adk_lattice.before_tool")
    assert event.attributes["adk_lattice.decision"] == ("DenyRefunds:deny",)


async def test_before_model_short_circuit_is_marked_on_invoke_agent(exporter, metrics) -> None:
    """A response served from before_model marks invoke_agent: short-circuit, served by whom."""
    provider, _ = metrics
    root = agent("root", ScriptedResponse.text("never asked"))
    lattice = Lattice(
        cache=[ServeFromCache("root")], telemetry=[Telemetry(meter_provider=provider)]
    )
    await run(root, lattice)
    span = _span(exporter, "invoke_agent root")
    assert span.attributes["adk_lattice.short_circuit"] is True
    assert span.attributes["adk_lattice.served_by"] == "ServeFromCache"
    assert span.attributes["adk_lattice.served_tier"] == "cache"
    assert not [s for s in exporter.get_finished_spans() if s.name.startswith("generate_content")]


async def test_cache_requests_count_hits_and_misses(exporter, metrics) -> None:
    """adk_lattice.cache.requests counts a hit for the served agent and a miss for the other."""
    provider, reader = metrics
    helper = agent("helper", ScriptedResponse.text("inner"))
    root = agent(
        "root",
        ScriptedResponse.call("helper", request="q"),
        ScriptedResponse.text("done"),
        tools=[AgentTool(helper)],
    )
    lattice = Lattice(
        cache=[ServeFromCache("helper")], telemetry=[Telemetry(meter_provider=provider)]
    )
    await run(root, lattice)
    results = {
        a["adk_lattice.cache.result"]: v for a, v in points(reader, "adk_lattice.cache.requests")
    }
    assert results == {"hit": 1, "miss": 2}


async def test_policy_decisions_count_allow_and_deny(exporter, metrics) -> None:
    """adk_lattice.policy.decisions counts each allow and each deny of a policy handler."""
    provider, reader = metrics
    root = agent(
        "root", parallel("lookup", "refund"), ScriptedResponse.text("ok"), tools=[lookup, refund]
    )
    lattice = Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)])
    await run(root, lattice)
    got = {a["adk_lattice.decision"]: v for a, v in points(reader, "adk_lattice.policy.decisions")}
    assert got == {"allow": 1, "deny": 1}


async def test_failing_handler_counts_an_error_and_marks_the_span(exporter, metrics) -> None:
    """A handler that raises is counted with outcome=error and error.type, and evented."""
    provider, reader = metrics
    root = agent("root", ScriptedResponse.text("fine"))
    lattice = Lattice(handlers=[Raises()], telemetry=[Telemetry(meter_provider=provider)])
    await run(root, lattice)
    calls = points(reader, "adk_lattice.hook.calls")
    assert calls == [
        (
            {
                "adk_lattice.hook": "before_model",
                "adk_lattice.handler": "Raises",
                "adk_lattice.tier": "handlers",
                "adk_lattice.outcome": "error",
                "adk_lattice.mode": "enforce",
                "error.type": "RuntimeError",
            },
            1,
        )
    ]
    (event,) = _events(_span(exporter, "invoke_agent root"), "adk_lattice.handler_error")
    assert event.attributes["adk_lattice.handler"] == "Raises"


async def test_handler_duration_is_a_histogram_in_seconds(exporter, metrics) -> None:
    """adk_lattice.handler.duration records one point per handler run, in seconds."""
    provider, reader = metrics
    root = agent("root", parallel("lookup"), ScriptedResponse.text("ok"), tools=[lookup])
    lattice = Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)])
    await run(root, lattice)
    data = reader.get_metrics_data()
    (metric,) = [
        m
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == "adk_lattice.handler.duration"
    ]
    assert metric.unit == "s"
    (point,) = metric.data.data_points
    assert point.count == 1
    assert 0 <= point.sum < 1


@REDACTORS
async def test_metric_attributes_carry_no_identity_or_content(
    exporter, metrics, redactor: Callable[[], Any]
) -> None:
    """Metric attributes hold hook, handler, tier, outcome, decision only: no user or text."""
    provider, reader = metrics
    lattice = Lattice(
        policy=[DenyRefunds(), redactor()], telemetry=[Telemetry(meter_provider=provider)]
    )
    root = agent(
        "root",
        parallel("lookup", "refund"),
        ScriptedResponse.text(f"mail {PII}"),
        tools=[lookup, refund],
    )
    await run(root, lattice, f"I am {PII}", user_id="user-4711")
    allowed = {
        "adk_lattice.hook",
        "adk_lattice.handler",
        "adk_lattice.tier",
        "adk_lattice.outcome",
        "adk_lattice.decision",
        "adk_lattice.cache.result",
        "adk_lattice.reason",
        "adk_lattice.mode",
        "error.type",
    }
    data = reader.get_metrics_data()
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    attrs = dict(p.attributes or {})
                    assert set(attrs) <= allowed, (m.name, attrs)
                    assert "user-4711" not in str(attrs)
                    assert PII not in str(attrs)


async def test_handler_spans_are_off_by_default(exporter, metrics) -> None:
    """Without handler_spans no adk_lattice.handler span is made."""
    provider, _ = metrics
    root = agent("root", parallel("lookup"), ScriptedResponse.text("ok"), tools=[lookup])
    await run(root, Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)]))
    assert not [s for s in exporter.get_finished_spans() if s.name.startswith("adk_lattice.")]


async def test_handler_spans_are_children_of_the_hook_span(exporter, metrics) -> None:
    """With handler_spans each handler run is a closed child span of ADK's current span."""
    provider, _ = metrics
    root = agent("root", parallel("lookup"), ScriptedResponse.text("ok"), tools=[lookup])
    telemetry = Telemetry(meter_provider=provider, handler_spans=True)
    await run(root, Lattice(policy=[DenyRefunds()], telemetry=[telemetry]))
    (child,) = [
        s for s in exporter.get_finished_spans() if s.name == "adk_lattice.handler DenyRefunds"
    ]
    parent = _span(exporter, "execute_tool lookup")
    assert child.parent.span_id == parent.context.span_id
    assert child.attributes["adk_lattice.outcome"] == "pass"
    assert parent.start_time <= child.start_time <= child.end_time <= parent.end_time


async def test_content_is_not_captured_by_default(exporter, metrics) -> None:
    """Without capture_content no model text reaches any span."""
    provider, _ = metrics
    root = agent("root", ScriptedResponse.text("the secret plan"))
    await run(root, Lattice(telemetry=[Telemetry(meter_provider=provider)]), "tell me")
    text = all_strings(exporter.get_finished_spans())
    assert "the secret plan" not in text
    assert "tell me" not in text


@pytest.mark.parametrize(
    ("redactor", "delivered"),
    [(Redact, "Write to [email] now"), (RedactPII, "Write to [REDACTED:EMAIL] now")],
)
async def test_captured_content_is_after_output_policy(
    exporter, metrics, redactor: Callable[[], Any], delivered: str
) -> None:
    """With capture_content the delivered, redacted text is recorded, never the raw value."""
    provider, _ = metrics
    root = agent("root", ScriptedResponse.text(f"Write to {PII} now"))
    telemetry = Telemetry(meter_provider=provider, capture_content=True)
    await run(root, Lattice(policy=[redactor()], telemetry=[telemetry]), f"I am {PII}")
    text = all_strings(exporter.get_finished_spans())
    assert delivered in text
    assert PII not in text


@REDACTORS
async def test_no_pii_in_spans_while_redaction_is_on(
    exporter, metrics, redactor: Callable[[], Any]
) -> None:
    """With an output redactor on, no span (ADK's or ours) carries the PII value."""
    provider, _ = metrics
    root = agent(
        "root", parallel("lookup"), ScriptedResponse.text(f"Your mail is {PII}"), tools=[lookup]
    )
    telemetry = Telemetry(meter_provider=provider, capture_content=True, all_events=True)
    await run(root, Lattice(policy=[redactor()], telemetry=[telemetry]), f"my mail is {PII}")
    assert PII not in all_strings(exporter.get_finished_spans())


@REDACTORS
async def test_notes_are_gathered_and_freed(exporter, metrics, redactor: Callable[[], Any]) -> None:
    """Every note a handler makes during a run is gathered by the end of the run."""
    provider, _ = metrics
    gc.collect()
    before = pending_count()
    kept = KeepOutcomes()  # keeps every context alive, so only gathering can free a note
    root = agent(
        "root", parallel("refund", "refund"), ScriptedResponse.text(f"to {PII}"), tools=[refund]
    )
    telemetry = [Telemetry(meter_provider=provider), kept]
    await run(root, Lattice(policy=[DenyRefunds(), redactor()], telemetry=telemetry))
    gc.collect()
    assert kept.outcomes
    assert pending_count() == before


async def test_no_span_left_open_after_a_transfer(exporter, open_spans, metrics) -> None:
    """A run with parallel tools, an AgentTool and a transfer ends every span it started."""
    provider, _ = metrics
    telemetry = Telemetry(meter_provider=provider, handler_spans=True)
    result = await run(multi_agent_app(), Lattice(policy=[DenyRefunds()], telemetry=[telemetry]))
    assert result.error is None
    assert open_spans.open == {}
    coordinator = _span(exporter, "invoke_workflow coordinator")
    closes = _events(coordinator, "adk_lattice.after_agent")
    assert [e.attributes["adk_lattice.reason"] for e in closes] == ["transferred"]


async def test_no_span_left_open_after_a_blocked_agent(exporter, open_spans, metrics) -> None:
    """A before_agent block is marked on the agent's span and leaves nothing open."""
    provider, _ = metrics
    lattice = Lattice(policy=[BlockAgent("root")], telemetry=[Telemetry(meter_provider=provider)])
    await run(agent("root", ScriptedResponse.text("x")), lattice)
    assert open_spans.open == {}
    span = _span(exporter, "invoke_agent root")
    assert span.attributes["adk_lattice.before_agent.decision"] == "block"


async def test_no_span_left_open_after_a_model_error(exporter, open_spans, metrics) -> None:
    """A model that raises leaves no span open; the run's end is recorded."""
    provider, _ = metrics
    root = agent("root", ScriptedResponse(error=RuntimeError("provider down")))
    result = await run(root, Lattice(telemetry=[Telemetry(meter_provider=provider)]))
    assert isinstance(result.error, RuntimeError)
    assert open_spans.open == {}
    events = [e for s in exporter.get_finished_spans() for e in _events(s, "adk_lattice.after_run")]
    assert [e.attributes["adk_lattice.reason"] for e in events] == ["run_error"]


async def test_no_span_left_open_after_a_tool_error(exporter, open_spans, metrics) -> None:
    """A tool that raises (its parallel sibling cancelled) leaves no span open."""
    provider, _ = metrics
    root = agent("root", parallel("broken", "lookup"), tools=[broken, lookup])
    telemetry = Telemetry(meter_provider=provider, handler_spans=True)
    result = await run(root, Lattice(policy=[DenyRefunds()], telemetry=[telemetry]))
    assert isinstance(result.error, ValueError)
    assert open_spans.open == {}


async def test_cancelled_run_is_closed_on_a_short_span(exporter, open_spans, metrics) -> None:
    """A cancelled parallel tool run ends every span; its late close gets its own ended span."""
    provider, _ = metrics
    started = asyncio.Event()
    count = 0

    async def slow(charge_id: str) -> dict[str, Any]:
        """A slow tool."""
        nonlocal count
        count += 1
        if count == 2:
            started.set()
        await asyncio.sleep(30)
        return {}

    root = agent("root", parallel("slow", "slow"), tools=[slow])
    await run_cancelled(root, Lattice(telemetry=[Telemetry(meter_provider=provider)]), started)
    assert open_spans.open == {}
    (late,) = [s for s in exporter.get_finished_spans() if s.name == "adk_lattice.after_run"]
    (event,) = _events(late, "adk_lattice.after_run")
    assert event.attributes["adk_lattice.reason"] == "cancelled"
    assert late.parent.span_id == _span(exporter, "invoke_workflow root").context.span_id


async def test_captured_tool_result_goes_on_the_execute_tool_span(exporter, metrics) -> None:
    """With capture_content the delivered tool result is an adk_lattice.content event."""
    provider, _ = metrics
    root = agent("root", parallel("lookup"), ScriptedResponse.text("ok"), tools=[lookup])
    telemetry = Telemetry(meter_provider=provider, capture_content=True, max_content_chars=20)
    await run(root, Lattice(telemetry=[telemetry]))
    (event,) = _events(_span(exporter, "execute_tool lookup"), "adk_lattice.content")
    assert event.attributes["gen_ai.tool.call.result"] == '{"charge_id":"c0","a'
