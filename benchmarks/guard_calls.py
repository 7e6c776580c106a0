"""Instructions per text-guard call on a new text, counted by valgrind (whatever the load).

The texts are those of the benchmark's tool turn (``scenarios.py``), new on every call as
they are there: the user's question and the tool's strings as ``InjectionGuard``'s rules read
them, the answer and a call argument as ``RedactPII`` reads them. Each case runs twice under
``valgrind --tool=callgrind``, ``N`` and ``2N`` calls after the same warm-up, and the
difference over ``N`` is one call (start-up and imports cancelled out). Each figure includes
building its text (about the same in every case); compare a case before and after a change,
not one case with another. Resolves a change of a few thousand instructions a call in a few
minutes, where ``instructions.py`` needs 40 whole turns and still moves by 10% between runs.

Usage::

    python benchmarks/guard_calls.py [N]           # every case, JSON out
    python benchmarks/guard_calls.py --child CASE N   # one run (under valgrind)

Before and after a change: run it with ``PYTHONPATH=<export of the previous src/>`` too.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

CASES = ("injection_user", "injection_tool", "pii_answer", "pii_argument")
WARM_UP = 100
COLLECTED = re.compile(r"Collected : (\d+)")


def _case(name: str) -> Callable[[int], Any]:
    from adk_lattice.policy import RedactPII
    from adk_lattice.policy.injection import memory
    from adk_lattice.policy.injection.detectors import RulesDetector

    rules, redact = RulesDetector(), RedactPII()

    def result(i: int) -> str:
        charge = {"charge_id": f"ch_{i}", "amount": 10.5, "currency": "EUR"}
        return memory.scan_text(charge)[0]

    cases: dict[str, Callable[[int], Any]] = {
        "injection_user": lambda i: rules.scan(f"What is on charge ch_{i}?", "user"),
        "injection_tool": lambda i: rules.scan(result(i), "tool:lookup_charge"),
        "pii_answer": lambda i: redact.scrub(f"Charge ch_{i} is EUR {10 + i % 90 + 0.5:.2f}."),
        "pii_argument": lambda i: redact.scrub(f"ch_{i}"),
    }
    return cases[name]


def _count(case: str, calls: int) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(Path(__file__)),
            "--child",
            case,
            str(calls),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = COLLECTED.search(out.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no count: {out.stderr[-500:]}")
    return int(found.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        call, calls = _case(sys.argv[2]), int(sys.argv[3])
        for i in range(1, WARM_UP + 1):
            call(-i)  # texts the counted calls never read again
        for i in range(1, calls + 1):
            call(i)
        return 0
    if shutil.which("valgrind") is None:
        print(json.dumps({"scenario": "guard_calls", "error": "valgrind is not on PATH"}))
        return 0
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    results = {
        case: round((_count(case, 2 * calls) - _count(case, calls)) / calls) for case in CASES
    }
    print(json.dumps({"scenario": "guard_calls", "calls": calls, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
