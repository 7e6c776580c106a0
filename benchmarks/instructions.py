"""Instructions per turn, counted by valgrind: the bundle against bare ADK, whatever the load.

Wall and CPU time on a shared machine move with what else runs (other jobs take the cores
and the caches); the number of instructions a turn executes does not. Each configuration
runs twice under ``valgrind --tool=callgrind``, once with ``N`` turns and once with ``2N``
after the same warm-up, and the difference over ``N`` is what one turn costs, start-up and
imports cancelled out. The ratio to bare ADK is the lattice's cost in instructions; it
leaves out what instructions do not show (cache misses, waiting), so it complements the
time ratios of ``make bench`` rather than replacing them.

Usage::

    python benchmarks/instructions.py [TURNS]          # every configuration below, JSON out
    python benchmarks/instructions.py --child CONFIG KIND TURNS   # one run (under valgrind)

``INSTR_CONFIGS=bare,bundle`` and ``INSTR_KINDS=tool`` run a subset (``bare`` is always
run: the ratios divide by it).

Needs ``valgrind`` on PATH; about forty minutes on one core of a loaded 2-core machine.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = ("bare", "empty", "telemetry", "bundle")
KINDS = ("text", "tool")
WARM_UP = 20
COLLECTED = re.compile(r"Collected : (\d+)")


async def _child(config: str, kind: str, turns: int) -> None:
    import logging

    from scenarios import _Setup

    logging.disable(logging.WARNING)
    setup = _Setup(config, kind, tempfile.mkdtemp(prefix="bench-"))
    for _ in range(WARM_UP + turns):
        await setup.turn()


def _count(config: str, kind: str, turns: int) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(Path(__file__)),
            "--child",
            config,
            kind,
            str(turns),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = COLLECTED.search(out.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no count: {out.stderr[-500:]}")
    return int(found.group(1))


def _subset(variable: str, known: tuple[str, ...]) -> tuple[str, ...]:
    """The names listed in the environment variable (all of ``known`` when it is unset)."""
    import os

    chosen = tuple(n for n in os.environ.get(variable, "").split(",") if n)
    unknown = [n for n in chosen if n not in known]
    if unknown:
        raise SystemExit(f"{variable}: unknown {unknown}; expected some of {list(known)}")
    return chosen or known


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        config, kind, turns = sys.argv[2], sys.argv[3], int(sys.argv[4])
        asyncio.run(_child(config, kind, turns))
        return 0
    if shutil.which("valgrind") is None:
        print(json.dumps({"scenario": "instructions", "error": "valgrind is not on PATH"}))
        return 0
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    kinds = _subset("INSTR_KINDS", KINDS)
    configs = ("bare", *(c for c in _subset("INSTR_CONFIGS", CONFIGS) if c != "bare"))
    per_turn: dict[str, dict[str, float]] = {kind: {} for kind in kinds}
    for kind in kinds:
        for config in configs:
            once, twice = _count(config, kind, turns), _count(config, kind, 2 * turns)
            per_turn[kind][config] = (twice - once) / turns
    results = {
        kind: {
            config: {
                "instructions": round(n),
                "ratio": round(n / per_turn[kind]["bare"], 4),
            }
            for config, n in counts.items()
        }
        for kind, counts in per_turn.items()
    }
    print(json.dumps({"scenario": "instructions", "turns": turns, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
