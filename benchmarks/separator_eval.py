"""False positives of the digit-group detectors (cards, SSNs, IBANs, secrets) on benign text.

Usage: ``python benchmarks/separator_eval.py``. Deterministic (seeded); prints a markdown
table. Run it against two versions of the package (``PYTHONPATH``) to compare them.

Sets: the benign requests of ``tests/policy/data/benign.txt``; the phone look-alikes of
``phone_eval.py`` (order ids, dotted, dashed and slashed dates, versions, amounts, ISBN and
ZIP+4 codes, coordinates; both seeds); and dotted look-alikes drawn here: version numbers
with build numbers, dotted dates with times, two dotted dates side by side, decimal numbers
and floats as a program prints them, IPv4 addresses, object identifiers. A text counts
when ``RedactPII(kinds=["card", "ssn", "iban", "secret"])`` changes it at all.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

from phone_eval import _lookalikes

from adk_lattice.policy import RedactPII

BENIGN = Path(__file__).resolve().parent.parent / "tests" / "policy" / "data" / "benign.txt"


def _dotted(seed: int, n: int = 600) -> list[str]:
    rng = random.Random(seed)

    def r(lo: int, hi: int) -> int:
        return rng.randint(lo, hi)

    makers: list[Callable[[], str]] = [
        lambda: f"Upgrade to version {r(0, 30)}.{r(0, 99)}.{r(0, 99999)}.{r(0, 99999)} today.",
        lambda: f"Build {r(1, 20)}.{r(0, 9)}.{r(10000, 99999)}.{r(1000, 9999)} passed.",
        lambda: (
            f"Seen {r(1, 28):02d}.{r(1, 12):02d}.{r(1990, 2030)} {r(0, 23):02d}.{r(0, 59):02d}."
        ),
        lambda: (
            f"From {r(1990, 2030)}.{r(1, 12):02d}.{r(1, 28):02d} "
            f"{r(1990, 2030)}.{r(1, 12):02d}.{r(1, 28):02d} inclusive."
        ),
        lambda: (
            f"Valid {r(1, 28):02d}/{r(1, 12):02d}/{r(1990, 2030)} {r(1, 28):02d}/{r(1, 12):02d}."
        ),
        lambda: f'{{"score": {rng.random()!r}, "n": {r(1, 99)}}}',
        lambda: f"The ratio is {rng.uniform(0, 1000):.12f} overall.",
        lambda: f"Host {r(1, 254)}.{r(0, 255)}.{r(0, 255)}.{r(1, 254)} {r(1, 254)}.{r(0, 255)} up.",
        lambda: f"OID 1.2.840.{r(10000, 999999)}.{r(1, 9)}.{r(1, 99)}.{r(1, 99)} signed.",
        lambda: f"Section {r(1, 20)}.{r(1, 20)}.{r(1, 20)}.{r(1, 20)}.{r(1, 20)}.{r(1, 20)} says.",
    ]
    return [rng.choice(makers)() for _ in range(n)]


def main() -> int:
    """Print, per set, how many texts the detectors change."""
    redactor = RedactPII(kinds=["card", "ssn", "iban", "secret"])
    benign = [line for line in BENIGN.read_text().splitlines() if line.strip()]
    sets = {
        "benign.txt": benign,
        "phone look-alikes, seed 1000": _lookalikes(seed=1000),
        "phone look-alikes, seed 1001": _lookalikes(seed=1001),
        "dotted look-alikes, seed 2000": _dotted(seed=2000),
        "dotted look-alikes, seed 2001": _dotted(seed=2001),
    }
    print("| set | texts changed |")
    print("|---|---|")
    for name, texts in sets.items():
        changed = [t for t in texts if redactor.scrub(t)[0] != t]
        print(f"| {name} | {len(changed)}/{len(texts)} = {len(changed) / len(texts):.1%} |")
        for text in changed[: int(sys.argv[1]) if len(sys.argv) > 1 else 0]:
            print(f"|   {text!r} | {redactor.scrub(text)[0]!r} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
