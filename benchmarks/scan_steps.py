"""Where a small text's scan goes: microseconds per step of both guards on 1 KB texts.

The scan benchmark (``scan.py``) divides each guard's time by BLAKE2b of the same bytes.
At 1 KB hashing costs about a microsecond, so the guards' fixed cost per call decides the
ratio; this prints that cost step by step (the best of five rounds of 20,000 calls each),
for the 1 KB prose and JSON texts of ``scan.py``.

Usage: ``.venv/bin/python benchmarks/scan_steps.py``
"""

from __future__ import annotations

import hashlib
import timeit
from collections.abc import Callable

from scan import PROSE, _fill, _json  # this folder is sys.path[0]

from adk_lattice.policy import RedactPII
from adk_lattice.policy._text.normalize import fold
from adk_lattice.policy.injection.detectors import RulesDetector
from adk_lattice.policy.pii._phone import _windows
from adk_lattice.policy.pii.detectors import opened

CALLS = 20_000


def _us(fn: Callable[[], object]) -> float:
    return round(min(timeit.repeat(fn, number=CALLS, repeat=5)) / CALLS * 1e6, 2)


def steps(text: str) -> dict[str, float]:
    """Microseconds per call of each step (and of each guard whole) on ``text``."""
    rules, redact = RulesDetector(), RedactPII()
    hits = rules._hits(text)
    return {
        "BLAKE2b": _us(lambda: hashlib.blake2b(text.encode()).digest()),
        "InjectionGuard, whole scan": _us(lambda: rules._scan(text, "tool:bench", 0)),
        "  one rule pass (RE2 set)": _us(lambda: rules._hits(text)),
        "  fold": _us(lambda: fold(text, leet=False, spelled=False, cleaned=text)),
        "  score the matches": _us(lambda: rules._match(hits, "tool:bench", 2.0)),
        "RedactPII, whole scrub": _us(lambda: redact.scrub(text)),
        "  gate pass (RE2 set)": _us(lambda: opened(text)),
        "  phone digit chains": _us(lambda: list(_windows(text))),
    }


def main() -> None:
    """Print one table: each step on the 1 KB prose and JSON texts."""
    texts = {"prose 1 KB": _fill(PROSE, 1_000), "JSON 1 KB": _json(1_000)}
    columns = {name: steps(text) for name, text in texts.items()}
    print("| step (µs per call) | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for step in next(iter(columns.values())):
        print(f"| {step} | " + " | ".join(str(c[step]) for c in columns.values()) + " |")


if __name__ == "__main__":
    main()
