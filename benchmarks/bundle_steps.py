"""Where the realistic bundle's time goes: microseconds per tool turn, per part.

Runs the benchmark bundle (``bundles.py``) on a model -> tool -> model turn, next to bare
ADK, batches interleaved. Per batch it sums every decider's step duration (from
``Outcome.steps``), every observer's time, and the time spent inside the lattice's ADK
callbacks altogether; "dispatch" is what the lattice spends around its handlers and
observers (records, outcomes, the chain loop). It also counts garbage collections per turn
(``gc.callbacks``), in both set-ups: how many objects a turn leaves for the collector is
what sets them off. Each figure is the median over the batches.

Usage: ``.venv/bin/python benchmarks/bundle_steps.py`` (``STEPS_BATCHES``, ``STEPS_TURNS``;
``STEPS_METRICS=1`` also sets a global SDK meter provider with an in-memory reader, so
``Telemetry`` records its metrics, which the benchmark bundle otherwise sends nowhere).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import inspect
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import scenarios  # this folder is sys.path[0]
from bundles import EXPORTER

from adk_lattice import Outcome

BATCHES = int(os.environ.get("STEPS_BATCHES", "7"))
TURNS = int(os.environ.get("STEPS_TURNS", "60"))


class _GcClock:
    """Collections and time in the collector, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.count: collections.Counter[int] = collections.Counter()
        self.seconds = 0.0
        self._start = 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start
            self.count[info["generation"]] += 1

    def reset(self) -> None:
        self.count.clear()
        self.seconds = 0.0


def _instrument(setup: scenarios._Setup, parts: collections.Counter[str]) -> None:
    """Time the lattice's callbacks, deciders and observers of ``setup`` into ``parts``."""
    lattice = setup.runner.plugin_manager.plugins[0]
    dispatch = lattice._dispatch

    async def timed_emit(outcome: Outcome) -> None:
        for step in outcome.steps:
            parts[f"decider  {outcome.hook:<15} {step.handler}"] += step.duration
            parts["deciders"] += step.duration
        for o in dispatch.observers:
            if outcome.partial and not o.partial:
                continue
            start = time.perf_counter()
            result: Any = o.call(outcome)
            if inspect.isawaitable(result):
                await result
            elapsed = time.perf_counter() - start
            parts[f"observer {o.name}"] += elapsed
            parts["observers"] += elapsed

    dispatch.emit = timed_emit

    def wrap(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(**kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await method(**kwargs)
            finally:
                parts["lattice"] += time.perf_counter() - start

        return timed

    for name in dir(lattice):
        if name.endswith("_callback") and callable(getattr(lattice, name)):
            setattr(lattice, name, wrap(getattr(lattice, name)))


async def main() -> None:
    """Print the median microseconds per turn of each part, largest first."""
    logging.disable(logging.WARNING)
    if os.environ.get("STEPS_METRICS"):
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    tmp = tempfile.mkdtemp(prefix="bench-")
    setups = {name: scenarios._Setup(name, "tool", tmp) for name in ("bare", "bundle")}
    parts: collections.Counter[str] = collections.Counter()
    _instrument(setups["bundle"], parts)
    clock = _GcClock()
    samples: dict[str, list[float]] = collections.defaultdict(list)
    for setup in setups.values():
        for _ in range(50):
            await setup.turn()
    for _ in range(BATCHES):
        for name, setup in setups.items():
            EXPORTER.clear()
            gc.collect()
            parts.clear()
            clock.reset()
            start = time.perf_counter()
            for _ in range(TURNS):
                await setup.turn()
            samples[f"{name}: turn"].append((time.perf_counter() - start) / TURNS)
            samples[f"{name}: in the collector"].append(clock.seconds / TURNS)
            for gen in range(3):
                samples[f"{name}: gen{gen} collections"].append(clock.count[gen] / TURNS)
            if name == "bundle":
                for part in {*parts, "lattice", "deciders", "observers"}:
                    samples[part].append(parts[part] / TURNS)
                handlers = parts["deciders"] + parts["observers"]
                samples["dispatch"].append((parts["lattice"] - handlers) / TURNS)
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"median of {BATCHES} batches of {TURNS} tool turns (us per turn)")
    for key in ("turn", "in the collector"):
        bare, bundle = med[f"bare: {key}"], med[f"bundle: {key}"]
        print(f"  {key:<40} bare {bare * 1e6:8.1f}  bundle {bundle * 1e6:8.1f}")
    for gen in range(3):
        bare, bundle = med[f"bare: gen{gen} collections"], med[f"bundle: gen{gen} collections"]
        print(f"  gen{gen} collections per turn{'':<17} bare {bare:8.2f}  bundle {bundle:8.2f}")
    for key in ("lattice", "dispatch", "deciders", "observers"):
        print(f"  {key:<40} {med[key] * 1e6:8.1f}")
    rows = sorted((k for k in med if k.startswith(("decider ", "observer "))), key=med.__getitem__)
    for key in reversed(rows):
        print(f"    {key:<50} {med[key] * 1e6:8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
