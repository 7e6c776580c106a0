"""Every pattern and step ``RedactPII`` runs on model- or tool-made text costs linear time.

The same check as ``test_linear_time.py`` (8x the text costs at most 20x the CPU time, best
of five, measured up to three times), at 5,000 and 40,000 characters, over shapes that stall
backtracking patterns and per-place steps of the PII detectors: runs of digit groups,
separators, ``@`` and dots, key prefixes, markdown marks, look-alikes and invisible
characters, obfuscated ``(at)``. Each detector runs ungated (as if every gate opened), each
step of the scan on its own (both folded views, place by place), then the whole scan, the
phone finder's candidate pattern and the stream's hold.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from adk_lattice.policy.pii import _fold, _phone, _stream
from adk_lattice.policy.pii import detectors as pii
from adk_lattice.policy.pii.detectors import BUILTIN, Detector

from .test_linear_time import _scales_linearly

#: Smaller than the injection check's texts: the per-place steps run on their own here.
SIZE = 40_000


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


HOSTILE: dict[str, str] = {
    "digits": _fill("1"),
    "digit groups": _fill("1234 "),
    "dashed groups": _fill("123-45-"),
    "phone-like": _fill("(415) 555-01 "),
    "plus digits": _fill("+1 "),
    "dotted quads": _fill("1.2.3."),
    "hex colons": _fill("a:"),
    "at signs": _fill("a@"),
    "dots": _fill("a."),
    "email near-misses": _fill("jane.doe@example."),
    "obfuscated at": _fill("a (at) "),
    "percent escapes": _fill("%40"),
    "underscores": _fill("_a"),
    "emphasis": _fill("ig**"),
    "key prefixes": _fill("sk-"),
    "jwt prefixes": _fill("eyJ"),
    "jwt near-misses": _fill("eyJabcdefgh."),
    "base64 words": _fill("AAAAAAAAAAAAAAAA "),
    "base64 run": _fill("A"),
    "secret names": _fill("password="),
    "key blocks": _fill("-----BEGIN "),
    "iban-like": _fill("DE89 "),
    "look-alikes": _fill("\u0456gn\u043er\u0435 "),
    "no-break spaces": _fill("1\u00a0"),
    "zero-width": _fill("a\u200b"),
    "full-width digits": _fill("\uff11 "),
    "newlines": _fill("\n"),
    "quotes and brackets": _fill("'(a"),
}

#: Every built-in detector, the phone finder (libphonenumber) and its fallback pattern.
DETECTORS: tuple[Detector, ...] = (
    *(d for group in BUILTIN.values() for d in group),
    _phone.phone_detector(None),
    Detector("SECRET", _stream.long_token(8192)),
)


def _every_step(text: str) -> object:
    """Each detector ungated, each step of the scan, the whole scan and the stream's hold."""
    out: list[object] = [list(d.spans(text)) for d in DETECTORS]
    out += [
        _fold._fold_places(text, " "),
        _fold._fold_places(text, ""),
        _fold.fold(text),
        list(pii._b64_runs(text)),
        list(_phone._CANDIDATE.finditer(text)),
        list(_phone._windows(text)),
        pii.scan(text, DETECTORS),
        _stream._cut(text, [], 96),
        _stream._cut(text, [], 0, True),
        _stream._lean_cut(text, len(text), 96),
    ]
    return out


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_pii_patterns_scan_hostile_input_in_linear_time(shape: str) -> None:
    """8x more of a hostile shape costs at most 20x the time (linear, not quadratic)."""
    scan: Callable[[str], object] = _every_step
    assert _scales_linearly(scan, HOSTILE[shape])
