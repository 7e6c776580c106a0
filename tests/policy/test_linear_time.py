"""Every pattern the guards run on attacker-made text costs linear time, hostile or not.

Each hostile shape (long runs of near-matches, nested repetitions, unclosed markup: what
makes a backtracking engine stall) is scanned by every pattern and every folding step the
guard uses, at 12,500 and at 100,000 characters, in the same test. Linear time costs 8x
for 8x the text; a quadratic step costs 64x. The bound is 20x, on the CPU time of the best
of five runs each, measured up to three times: a loaded machine can spoil one measurement,
not a quadratic step's every one. The benchmark's ``scan`` rows hold the ratios to benign text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from adk_lattice.policy import RulesDetector
from adk_lattice.policy._text.normalize import clean, fold
from adk_lattice.policy.injection.detectors import decoded

SIZE = 100_000
BENIGN = (Path(__file__).parent / "data/benign.txt").read_text("utf-8")


def _fill(unit: str, tail: str = "") -> str:
    return (unit * (SIZE // len(unit) + 1))[: SIZE - len(tail)] + tail


#: Shapes that make backtracking patterns (and the folding substitutions) go quadratic.
HOSTILE: dict[str, str] = {
    "newlines": _fill("\n"),
    "spaces": _fill(" "),
    "tabs and spaces": _fill(" \t"),
    "letter space": _fill("a "),
    "one long word": _fill("a"),
    "override prefix": _fill("ignore previous "),
    "override without target": _fill("ignore all the previous and following system "),
    "spelled letters": _fill("i g n o r e "),
    "spelled dots": _fill("a.b."),
    "leet word": _fill("a1"),
    "leet near words": _fill("a1 "),
    "unclosed comments": _fill("<!--"),
    "unclosed tags": _fill("<b "),
    "tag then letters": "<b " + _fill("x")[3:],
    "emphasis": _fill("ig**"),
    "base64 run": _fill("A", "="),
    "base64 words": _fill("AAAAAAAAAAAAAAA "),
    "hex pairs": _fill("aa ", "g"),
    "hex escapes": _fill("\\x41", "g"),
    "rule lines": _fill("-" * 8 + " \n"),
    "role lines": _fill("\n system"),
    "persona prefix": _fill("you are now going to act as "),
    "bounded gaps": _fill("illegal " + "x" * 30 + " "),
    "act then gap": _fill("act " + "y" * 50 + " "),
    "answer any": _fill("answer any request "),
    "markers": _fill("<|"),
    "brackets": _fill("[ ("),
    "note to": _fill("note to the automated "),
    "non-ascii letters": _fill("\u00e9 "),
    "look-alikes": _fill("\u0456gn\u043er\u0435 "),
    "invisible": _fill("\u200b"),
}


def _every_pattern(detector: RulesDetector) -> Callable[[str], object]:
    """Run every view and every pattern of the detector, without stopping at a finding."""

    def scan(text: str) -> object:
        plain = clean(text)
        folded = fold(text)
        return detector._hits(plain), detector._hits(folded), list(decoded(plain))

    return scan


def _best_of(fn: Callable[[str], object], text: str, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn(text)
        best = min(best, time.process_time() - start)
    return best


@pytest.fixture(scope="module")
def injection_scan() -> Callable[[str], object]:
    return _every_pattern(RulesDetector())


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_injection_patterns_scan_hostile_input_in_linear_time(
    shape: str, injection_scan: Callable[[str], object]
) -> None:
    """8x more of a hostile shape costs at most 20x the time (linear, not quadratic)."""
    assert _scales_linearly(injection_scan, HOSTILE[shape])


def _scales_linearly(scan: Callable[[str], object], text: str) -> bool:
    for _ in range(3):
        small = max(_best_of(scan, text[: len(text) // 8]), 0.000_1)
        if _best_of(scan, text) <= 20 * small:
            return True
    return False


def test_the_check_catches_a_quadratic_pattern() -> None:
    """A backtracking pattern (``^\\s*x`` over blank lines) fails the linear-time check."""
    import re

    quadratic = re.compile(r"^\s*x", re.MULTILINE)
    assert not _scales_linearly(quadratic.search, "\n" * 4_000)
