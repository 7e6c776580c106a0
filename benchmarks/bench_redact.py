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
    families: dict[str, list[Any]] = {}
    for detector in r.detectors:  # what RedactPII() runs (libphonenumber for PHONE)
        families.setdefault(detector.kind, []).append(detector)
    for kind, detectors in families.items():
        ms = max(
            _median_ms(lambda d=d, p=p: list(d.spans((p * (100_000 // len(p) + 1))[:100_000])), 3)
            for d in detectors
            for p in HOSTILE
        )
        rows[f"{kind} detectors, worst hostile 100 KB"] = {
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
    rows.update(_ner_rows(prose[:10_000]))
    return {"scenario": "redact", "unit": "ms per scrub, median", "results": rows}


def _ner_rows(prose: str) -> dict[str, Any]:
    """RedactPII with and without a Presidio engine on 10 KB of prose.

    No trained spaCy pipeline installs from the package index, so the engine runs a
    pipeline of the small English model's shape (a CNN tok2vec and a transition-based NER)
    with untrained weights: the compute per KB is the same, the entities found are not.
    """
    import tempfile

    try:
        import spacy

        from adk_lattice.policy import PresidioEngine
    except ImportError:
        return {}
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("ner")
    for label in ("PERSON", "ORG", "GPE"):
        ner.add_label(label)  # type: ignore[attr-defined]
    nlp.initialize()
    folder = tempfile.mkdtemp(prefix="bench-ner-")
    nlp.to_disk(folder)
    plain, with_ner = RedactPII(), RedactPII(engine=PresidioEngine(model=folder))
    with_ner.scrub(prose)  # warm up
    base = _median_ms(lambda: plain.scrub(prose))
    ms = _median_ms(lambda: with_ner.scrub(prose))
    return {
        "prose, 10 KB": {"ms": base, "ms_per_kb": round(base / 10, 3), "to_prose": 1.0},
        "prose, 10 KB, with PresidioEngine": {
            "ms": ms,
            "ms_per_kb": round(ms / 10, 3),
            "to_prose": round(ms / base, 2),
        },
    }
