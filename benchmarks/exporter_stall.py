"""How much a failing or stalling span exporter slows a turn, per span processor.

Runs tool-calling turns (5 ADK spans each, plus the lattice's handler spans) on a real
Runner with ``Telemetry(handler_spans=True)``, with the global tracer provider exporting
through: nothing; ``SimpleSpanProcessor`` or ``BatchSpanProcessor`` over an exporter that
sleeps ``--stall`` seconds per export; and both over an exporter that raises. Prints the
median turn time of each.

    PYTHONPATH=src python benchmarks/exporter_stall.py --stall 0.01 --turns 40
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from adk_lattice import Lattice
from adk_lattice.telemetry import Telemetry
from adk_lattice.testing import FakeModel, ScriptedResponse


class _Stalling(SpanExporter):
    def __init__(self, delay: float) -> None:
        self.delay = delay

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self.delay)
        return SpanExportResult.SUCCESS


class _Raising(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise ConnectionError("collector unreachable")


class _Switch(SpanProcessor):
    target: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        if self.target is not None:
            self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.target is not None:
            self.target.on_end(span)


def lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order_id": order_id, "status": "shipped"}


async def _turns(runner: Runner, n: int) -> list[float]:
    times = []
    for _ in range(n):
        session = await runner.session_service.create_session(app_name="bench", user_id="u1")
        message = types.Content(role="user", parts=[types.Part(text="Where is A1?")])
        start = time.perf_counter()
        async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
            pass
        times.append(time.perf_counter() - start)
    return times


def _runner() -> Runner:
    script = [ScriptedResponse.call("lookup", order_id="A1"), ScriptedResponse.text("Shipped.")]
    model = FakeModel(script=script * 10_000)
    agent = LlmAgent(name="assistant", model=model, tools=[lookup])
    lattice = Lattice(telemetry=[Telemetry(handler_spans=True)])
    app = App(name="bench", root_agent=agent, plugins=[lattice])
    return Runner(app=app, session_service=InMemorySessionService())


async def main(stall: float, turns: int) -> None:
    """Print the median turn time under each processor and exporter."""
    logging.disable(logging.CRITICAL)  # the raising exporter logs every failure
    provider = TracerProvider()
    trace.set_tracer_provider(provider)
    switch = _Switch()
    provider.add_span_processor(switch)
    configs: dict[str, Any] = {
        "no exporter": lambda: None,
        f"Simple, stalls {stall * 1000:g} ms": lambda: SimpleSpanProcessor(_Stalling(stall)),
        f"Batch, stalls {stall * 1000:g} ms": lambda: BatchSpanProcessor(_Stalling(stall)),
        "Simple, raises": lambda: SimpleSpanProcessor(_Raising()),
        "Batch, raises": lambda: BatchSpanProcessor(_Raising()),
    }
    runner = _runner()
    await _turns(runner, 10)  # warm-up
    base = 0.0
    print("| processor, exporter | median turn (ms) | x no exporter |\n|---|---|---|")
    for label, make in configs.items():
        processor = make()
        switch.target = processor
        median = statistics.median(await _turns(runner, turns))
        switch.target = None
        if processor is not None:
            processor.shutdown()
        base = base or median
        print(f"| {label} | {median * 1000:.2f} | {median / base:.1f} |")
    await runner.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stall", type=float, default=0.01, help="seconds per export")
    parser.add_argument("--turns", type=int, default=40, help="turns per configuration")
    args = parser.parse_args()
    asyncio.run(main(args.stall, args.turns))
