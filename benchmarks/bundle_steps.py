"""Where the realistic bundle's time goes: microseconds per tool turn, per handler.

Runs the benchmark bundle (``bundles.py``) on a model -> tool -> model turn, warms up, then
sums every decider's step duration (from ``Outcome.steps``) and every observer's time over
300 turns. Usage: ``.venv/bin/python benchmarks/bundle_steps.py``.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import tempfile
import time
from typing import Any

import scenarios  # this folder is sys.path[0]

from adk_lattice import Outcome

TURNS = 300


async def main() -> None:
    """Print decider and observer time per turn, largest first."""
    logging.disable(logging.WARNING)
    setup = scenarios._Setup("bundle", "tool", tempfile.mkdtemp(prefix="bench-"))
    dispatch = setup.runner.plugin_manager.plugins[0]._dispatch
    deciders: collections.Counter[tuple[str, str]] = collections.Counter()
    observers: collections.Counter[str] = collections.Counter()

    async def timed_emit(outcome: Outcome) -> None:
        for step in outcome.steps:
            deciders[(outcome.hook, step.handler)] += step.duration
        for o in dispatch.observers:
            if outcome.partial and not o.partial:
                continue
            start = time.perf_counter()
            result: Any = o.call(outcome)
            if inspect.isawaitable(result):
                await result
            observers[o.name] += time.perf_counter() - start

    dispatch.emit = timed_emit
    for _ in range(50):
        await setup.turn()
    deciders.clear()
    observers.clear()
    for _ in range(TURNS):
        await setup.turn()
    print("deciders (us per turn):")
    for (hook, handler), total in deciders.most_common():
        print(f"  {hook:<14} {handler:<18} {total / TURNS * 1e6:8.1f}")
    print("observers (us per turn):")
    for name, total in observers.most_common():
        print(f"  {name:<33} {total / TURNS * 1e6:8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
