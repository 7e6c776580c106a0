"""The ``redact`` scenario: what ``RedactPII`` costs per KB, on prose and on hostile text.

Rows in one run, so the ratios hold on any machine: ordinary prose with a few values in it,
then 100 KB of each hostile repeated prefix (the worst of them per detector family), then
the JWT pattern this release replaced, on 72 KB of ``eyJ`` (quadratic: seconds, where the
current one takes milliseconds).
"""

from __future__ import annotations

import re
import statistics
import time
from typing import Any

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii import BUILTIN

PROSE = (
    "Thanks for waiting. The order shipped on 2024-03-02 to the address on file; "
    "you can reach the courier at +1 415-555-0132 or write to jane.doe@example.com. "
    "Your card ending 1111 was charged EUR 42.10, invoice INV-2024-0042, version 1.2.3. "
)
HOSTILE = [
    "eyJ", "eyJa.", "a", "1", "1 ", "1-", "a@", "a.", "sk-", "AKIA", "password=", "+1",
    "-----BEGIN PRIVATE KEY-----", " (at) ", "%40", "\u200b", "\u00a0", "*", "123 45 ",
]  # fmt: skip
#: The JWT alternative as it was in 0.1.0: no token boundary, unbounded segments.
OLD_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")


def _median_ms(fn: Any, reps: int = 5) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1000, 2)


async def redact() -> dict[str, Any]:
    """Per-KB cost of a full scrub on prose and hostile text; each family's worst prefix."""
    r = RedactPII()
    rows: dict[str, Any] = {}
    prose = (PROSE * (100_000 // len(PROSE) + 1))[:100_000]
    base = _median_ms(lambda: r.scrub(prose))
    rows["prose, 100 KB"] = {"ms": base, "ms_per_kb": round(base / 100, 3), "to_prose": 1.0}
    worst = max(
        (_median_ms(lambda p=p: r.scrub((p * (100_000 // len(p) + 1))[:100_000]), 3), p)
        for p in HOSTILE
    )
    rows[f"worst hostile prefix {worst[1]!r}, 100 KB"] = {
        "ms": worst[0],
        "ms_per_kb": round(worst[0] / 100, 3),
        "to_prose": round(worst[0] / base, 2),
    }
    for family, detectors in BUILTIN.items():
        ms = max(
            _median_ms(lambda d=d, p=p: list(d.spans((p * (100_000 // len(p) + 1))[:100_000])), 3)
            for d in detectors
            for p in HOSTILE
        )
        rows[f"{family} patterns, worst hostile 100 KB"] = {
            "ms": ms,
            "ms_per_kb": round(ms / 100, 3),
            "to_prose": round(ms / base, 2),
        }
    jwt = "eyJ" * 24_000
    old = _median_ms(lambda: list(OLD_JWT.finditer(jwt)), 1)
    rows["0.1.0 JWT pattern, 72 KB of eyJ"] = {
        "ms": old,
        "ms_per_kb": round(old / 72, 3),
        "to_prose": round(old / base, 2),
    }
    return {"scenario": "redact", "unit": "ms per scrub, median", "results": rows}
