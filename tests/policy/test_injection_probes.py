"""The RE2 probes only skip steps that would find nothing: the verdicts are those of running
every step, on the public sample, the benign texts and obfuscated variants of both."""

from __future__ import annotations

import base64
import random

import pytest

from adk_lattice.policy import RulesDetector
from adk_lattice.policy._text.engine import ENGINE
from adk_lattice.policy.injection.detectors import PROBES, Finding

from .test_injection import BENIGN, SAMPLE

LEET = {"a": "4@", "e": "3", "i": "1", "o": "0", "s": "5$", "t": "7"}
SEPARATORS = [" ", ".", "-", "_", "  ", "\t", " . "]


class EveryStep(RulesDetector):
    """The built-in detector running every costly step on every text."""

    def _needs(self, hits: set[int], plain: str) -> set[str]:
        return {name for name, _ in PROBES}


def _texts() -> list[str]:
    return [t[:300] for group in SAMPLE.values() for t in group] + BENIGN


def _variant(text: str, rng: random.Random) -> str:
    """``text`` obfuscated one way: leet, spelled out, joined, stamped, encoded, non-ASCII,
    marked up."""
    chars = []
    for c in text:
        r = rng.random()
        chars.append(rng.choice(LEET[c.lower()]) if c.lower() in LEET and r < 0.25 else c)
    s = "".join(chars)
    way = rng.randrange(9)
    if way == 0:
        words = s.split(" ")
        k = rng.randrange(len(words))
        words[k] = rng.choice(SEPARATORS).join(words[k])
        s = " ".join(words)
    elif way == 1:
        s = s.replace(" ", rng.choice(["_", "__", " _ ", "-"]))
    elif way == 2:
        s = f"2026-11-30T12:00:00Z {s} 30t12 00z"
    elif way == 3:
        s = f"{s} {s[:40].encode().hex(' ')}"
    elif way == 4:
        s = "see " + base64.b64encode(s.encode()).decode()
    elif way == 5:
        s = "\u0130" + s[1:] if s[:1] in "iI" else "é " + s
    elif way == 6:
        s = "\u200b".join(s[:60])
    elif way == 7:
        words = s.split(" ")
        k = rng.randrange(len(words))
        words[k] = rng.choice(["**{}**", "<b>{}</b>", "{}<!-- x -->", "`{}`"]).format(words[k])
        s = " ".join(words)
    else:
        s = s.upper() + " ü"
    return s


def _verdict(found: Finding | None) -> tuple[str, tuple[str, ...]] | None:
    return None if found is None else (found.family, found.rules)


@pytest.mark.skipif(ENGINE != "re2", reason="the probes run only on RE2")
def test_the_probes_never_change_a_verdict() -> None:
    """Skipping the steps the probes rule out gives every text the verdict of running them."""
    rng = random.Random(7)
    probed, every = RulesDetector(), EveryStep()
    texts = _texts()
    texts += [_variant(t, rng) for t in texts for _ in range(8)]
    differ = [
        t for t in texts if _verdict(probed.scan(t, "tool:x")) != _verdict(every.scan(t, "tool:x"))
    ]
    assert differ == []
    assert len(texts) > 1_500
