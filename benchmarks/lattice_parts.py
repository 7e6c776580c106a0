"""The lattice's own parts in isolation, best of repeated rounds (steady on a loaded machine).

Each part is timed on real inputs: the 14 outcomes of one real tool turn of the benchmark
bundle (``bundles.py``) replayed through ``Telemetry`` and ``AuditLog`` under a recording
span, the cache key and scope of that turn's second model request, a ``ResponseCache``
lookup that misses, ``CapToolResult`` on a small and a 56 KB result. The minimum over the
rounds is reported: load from other jobs only ever adds time. Run it against another
checkout's sources to compare (``PYTHONPATH=<other>/src``).

Usage: ``.venv/bin/python benchmarks/lattice_parts.py`` (``PARTS_METRICS=1``: with a
global SDK meter provider and an in-memory reader, so ``Telemetry`` records metrics).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

ROUNDS = int(os.environ.get("PARTS_ROUNDS", "15"))


def _metrics() -> None:
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


async def _best(fn: Callable[[], Awaitable[None]], runs: int) -> float:
    """Microseconds per run of ``fn``, the best of ``ROUNDS`` rounds of ``runs``."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(runs):
            await fn()
        best = min(best, (time.perf_counter() - start) / runs)
    return best * 1e6


async def _turn_outcomes() -> tuple[Any, list[tuple[Any, dict[str, Any]]], dict[str, Any]]:
    """One real tool turn of the bundle: its observers, outcomes (with notes) and inputs."""
    import scenarios  # this folder is sys.path[0]

    from adk_lattice._notes import notes_of

    setup = scenarios._Setup("bundle", "tool", tempfile.mkdtemp(prefix="bench-"))
    dispatch = setup.runner.plugin_manager.plugins[0]._dispatch
    observers = dispatch.observers
    captured: list[tuple[Any, dict[str, Any]]] = []
    seen: dict[str, Any] = {}

    def record(outcome: Any) -> None:
        notes_of(outcome)  # as the first telemetry observer gathers them
        captured.append((outcome, _copy(outcome.extra)))
        if outcome.hook == "before_model":
            seen["ctx"], seen["req"] = outcome.args["callback_context"], outcome.args["llm_request"]

    # The recorder runs after the cache's store observer, which notes on the outcome.
    recorder = dataclasses.replace(observers[0], name="record", call=record, is_async=False)
    for _ in range(5):
        await setup.turn()
    dispatch.observers = (observers[0], recorder, *observers[1:])
    await setup.turn()
    dispatch.observers = observers
    return observers, captured, seen


def _copy(extra: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list) else v for k, v in extra.items()}


async def main() -> None:
    """Print microseconds per part."""
    logging.disable(logging.WARNING)
    if os.environ.get("PARTS_METRICS"):
        _metrics()
    from bundles import EXPORTER, PROVIDER

    from adk_lattice.cache import ResponseCache
    from adk_lattice.cache._keys import request_digest, scope_digest
    from adk_lattice.policy import CapToolResult
    from adk_lattice.stores import MemoryStore

    observers, captured, seen = await _turn_outcomes()
    tracer = PROVIDER.get_tracer("bench")

    def replay(call: Callable[[Any], Any] | None) -> Callable[[], Awaitable[None]]:
        async def one_turn() -> None:
            with tracer.start_as_current_span("turn"):
                for outcome, extra in captured:
                    fresh = dataclasses.replace(outcome, extra=_copy(extra))
                    if call is not None:
                        result = call(fresh)
                        if asyncio.iscoroutine(result):
                            await result

        return one_turn

    EXPORTER.clear()
    floor = await _best(replay(None), 50)  # copying the outcomes, opening the span
    print(f"outcomes per turn: {len(captured)}")
    for o in observers:
        if o.name in ("Telemetry", "AuditLog"):
            cost = await _best(replay(o.call), 50) - floor
            print(f"{o.name + ' observer, one tool turn':<44} {cost:9.1f} us")
            EXPORTER.clear()
    ctx, req = seen["ctx"], seen["req"]

    async def digest() -> None:
        request_digest(req)

    async def scope() -> None:
        scope_digest("user", ctx)

    cache = ResponseCache(MemoryStore(), name="parts")
    slot = cache._slot(ctx)

    async def lookup() -> None:
        await cache.before_model(callback_context=ctx, llm_request=req)
        ctx.state[slot] = None

    cap = CapToolResult(max_items=20)
    small = {"charge_id": "ch_1", "amount": 12.5, "currency": "EUR"}
    note = "refunded after review " * 3
    big = {"charges": [{"id": f"ch_{i}", "amount": i * 1.5, "note": note} for i in range(500)]}

    def capped(result: dict[str, Any]) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            await cap.after_tool(tool=None, tool_args={}, tool_context=None, result=result)

        return run

    contents = len(req.contents)
    print(f"{f'cache key digest ({contents} contents)':<44} {await _best(digest, 500):9.2f} us")
    print(f"{'cache scope digest':<44} {await _best(scope, 2000):9.2f} us")
    print(f"{'ResponseCache lookup, a miss':<44} {await _best(lookup, 500):9.2f} us")
    print(f"{'CapToolResult, small result':<44} {await _best(capped(small), 500):9.2f} us")
    print(f"{'CapToolResult, 56 KB result':<44} {await _best(capped(big), 50):9.2f} us")


if __name__ == "__main__":
    asyncio.run(main())
