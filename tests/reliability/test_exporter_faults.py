"""A span exporter that raises or stalls, under Simple and Batch processors: no failed turn."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.tools import FunctionTool
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import AuditLog, Telemetry
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig, text_of
from tests.reliability._otel_faults import RaisingExporter, StallingExporter, exporting_through

S = ScriptedResponse


def lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order_id": order_id, "status": "shipped"}


async def _two_turns(processor: Any) -> tuple[list[str], list[dict[str, Any]], Rig]:
    records: list[dict[str, Any]] = []
    rig = Rig(
        [S.call("lookup", order_id="A1"), S.text("It shipped.")] * 2,
        policy=[RedactPII()],
        tools=[FunctionTool(lookup)],
        telemetry=[Telemetry(handler_spans=True), AuditLog(records.append)],
    )
    with exporting_through(processor):
        answers = [text_of(await rig.ask("Where is A1?")) for _ in range(2)]
    await rig.close()
    return answers, records, rig


@pytest.mark.parametrize("processor", [SimpleSpanProcessor, BatchSpanProcessor])
async def test_a_raising_exporter_fails_no_turn(processor: Any) -> None:
    """Every export raises: both turns answer, are audited, and the exporter was tried."""
    exporter = RaisingExporter()
    answers, records, rig = await _two_turns(processor(exporter))
    assert answers == ["It shipped.", "It shipped."]
    assert [r["outcome"] for r in records] == ["completed", "completed"]
    assert exporter.attempts > 0
    assert not rig.lattice.stats


@pytest.mark.parametrize("processor", [SimpleSpanProcessor, BatchSpanProcessor])
async def test_a_stalling_exporter_fails_no_turn_and_loses_no_span(processor: Any) -> None:
    """Every export sleeps: both turns answer and every span still reaches the exporter."""
    exporter = StallingExporter(0.002)
    answers, records, _ = await _two_turns(processor(exporter))
    assert answers == ["It shipped.", "It shipped."]
    assert len(records) == 2
    assert exporter.exported >= 2 * 5  # per turn: workflow, agent, 2 model calls, tool
