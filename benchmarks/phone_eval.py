"""Phone detection: recall on libphonenumber's example numbers, false positives on
look-alikes, before (the 0.1.0 pattern) and after (libphonenumber).

Usage: ``python benchmarks/phone_eval.py`` (needs the ``pii`` extra). Prints a markdown
table; deterministic (seeded).

Positives: ``phonenumbers.example_number_for_type`` for every region and the types fixed
line, mobile and toll free, in national and international format, each inside a sentence.
A national number counts as caught when ``RedactPII(phone_regions=[its region])`` redacts
it whole; an international one with the default regions (``US``): ``+CC`` numbers must be
caught whatever the regions. Look-alikes: order ids, dates, times, versions, amounts,
invoice, tracking, ISBN and ZIP+4 codes, coordinates, drawn at random; a false positive is
any PHONE redaction in one. Regions and look-alikes are split into a development half and
a held-out half (alternate regions; two seeds); the detector was written against a few
hand-picked examples, not against either half, and both halves are reported.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator

import phonenumbers as pn

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii.detectors import PHONE

TYPES = {
    "fixed line": pn.PhoneNumberType.FIXED_LINE,
    "mobile": pn.PhoneNumberType.MOBILE,
    "toll free": pn.PhoneNumberType.TOLL_FREE,
}
SENTENCES = ("You can call me on {} after six.", "Office: {}.", "Reach support at {} (all week)")
MANY = ["US", "GB", "DE", "FR", "IN", "BR", "JP"]


def _positives(regions: list[str]) -> Iterator[tuple[str, str, str]]:
    """(region, format, sentence) for every example number of these regions."""
    for i, region in enumerate(regions):
        for kind in TYPES.values():
            number = pn.example_number_for_type(region, kind)
            if number is None:
                continue
            for fmt, name in ((pn.PhoneNumberFormat.NATIONAL, "national"),
                              (pn.PhoneNumberFormat.INTERNATIONAL, "international")):  # fmt: skip
                text = pn.format_number(number, fmt)
                yield region, name, SENTENCES[i % len(SENTENCES)].format(text)


def _lookalikes(seed: int, n: int = 600) -> list[str]:
    rng = random.Random(seed)

    def d(k: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(k))

    makers: list[Callable[[], str]] = [
        lambda: f"Your order #{d(3)}-{d(3)}-{d(4)} has shipped.",
        lambda: f"Order ORD-{d(4)}-{d(6)} is ready.",
        lambda: (
            f"Delivered on {rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d} at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}."
        ),
        lambda: f"Due {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1990, 2030)}.",
        lambda: f"Due {rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.{rng.randint(1990, 2030)}.",
        lambda: (
            f"Version {rng.randint(0, 20)}.{rng.randint(0, 99)}.{rng.randint(0, 999)}"
            f".{d(4)} is out."
        ),
        lambda: f"Total ${rng.randint(1, 999)},{d(3)},{d(3)}.{d(2)} charged.",
        lambda: f"Total EUR {rng.randint(1, 999)} {d(3)} {d(3)},{d(2)} charged.",
        lambda: f"Invoice INV {rng.randint(2000, 2030)} {d(4)} {d(2)} attached.",
        lambda: f"Tracking 1Z{d(3)}AA{d(10)} is in transit.",
        lambda: f"ISBN 978-{d(1)}-{d(2)}-{d(6)}-{d(1)} in stock.",
        lambda: f"Ship to ZIP {d(5)}-{d(4)} please.",
        lambda: f"Meet at {rng.uniform(-90, 90):.4f}, {rng.uniform(-180, 180):.4f} today.",
        lambda: f"Account {d(8)} and reference {d(6)}.",
    ]
    return [rng.choice(makers)() for _ in range(n)]


def evaluate(split: int) -> dict[str, str]:
    """Recall and false positives on one half (0: development, 1: held out)."""
    regions = sorted(pn.SUPPORTED_REGIONS)[split::2]
    old = RedactPII(kinds=[], custom={"PHONE": PHONE.pattern})  # type: ignore[dict-item]
    default = RedactPII(kinds=["phone"])
    per_region = {r: RedactPII(kinds=["phone"], phone_regions=[r]) for r in regions}
    hits: dict[tuple[str, str], list[int]] = {}
    for region, fmt, text in _positives(regions):
        new = per_region[region] if fmt == "national" else default
        for who, redactor in (("before", old), ("after", new)):
            row = hits.setdefault((who, fmt), [0, 0])
            out, _ = redactor.scrub(text)
            # Caught: redacted whole, no digit of the number left (the sentences have none).
            row[0] += "[REDACTED:PHONE]" in out and not any(c.isdigit() for c in out)
            row[1] += 1
    looks = _lookalikes(seed=1000 + split)
    many = RedactPII(kinds=["phone"], phone_regions=MANY)
    fps = {
        who: sum("[REDACTED:PHONE]" in r.scrub(t)[0] for t in looks)
        for who, r in (("before", old), ("after, US", default), ("after, 7 regions", many))
    }
    out = {f"recall {fmt} ({who})": f"{h}/{n} = {h / n:.1%}" for (who, fmt), (h, n) in hits.items()}
    out.update({f"false positives ({who})": f"{v}/{len(looks)} = {v / len(looks):.1%}"
                for who, v in fps.items()})  # fmt: skip
    return out


def main() -> int:
    """Print the table for both halves."""
    halves = [evaluate(0), evaluate(1)]
    print("| measure | development half | held-out half |")
    print("|---|---|---|")
    for key in halves[0]:
        print(f"| {key} | {halves[0][key]} | {halves[1][key]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
