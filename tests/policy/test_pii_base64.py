"""PII in base64: which encoded runs are read, and where their redactions land."""

from __future__ import annotations

import base64

import pytest

from adk_lattice.policy import RedactPII
from adk_lattice.policy._text.engine import PatternSet
from adk_lattice.policy.pii import detectors as pii

#: A base64 run whose decoded text holds an e-mail address.
MAIL = base64.b64encode(b"mail jane@example.com").decode()


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode()


def test_base64_values_after_non_ascii_text_are_redacted_in_place() -> None:
    """Redactions of base64 runs land on the runs, however many non-ASCII characters precede."""
    text = f"caf\u00e9 {MAIL} and \u2713\U0001f600 {MAIL} end"
    expected = "caf\u00e9 [REDACTED:EMAIL] and \u2713\U0001f600 [REDACTED:EMAIL] end"
    assert RedactPII().scrub(text)[0] == expected


def test_a_lone_surrogate_does_not_stop_a_base64_value_being_redacted() -> None:
    """Text with a lone surrogate (invalid UTF-8) still has its base64 values redacted."""
    assert RedactPII().scrub(f"\ud800 x {MAIL} end")[0] == "\ud800 x [REDACTED:EMAIL] end"


def test_without_re2_a_base64_value_is_still_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """On Python's ``re`` (no probes in the one pass, no RE2 run finder) base64 is still read."""
    gates = PatternSet(list(pii._GATES.values()), engine="re", ignore_case=False, multiline=False)
    monkeypatch.setattr(pii, "_PROBED", False)
    monkeypatch.setattr(pii, "_GATE_SET", gates)
    monkeypatch.setattr(pii, "_GATE_KEYS", tuple(pii._GATES))
    monkeypatch.setattr(pii, "_B64_RUN", None)
    assert RedactPII().scrub(f"blob {MAIL} end")[0] == "blob [REDACTED:EMAIL] end"


@pytest.mark.parametrize(
    "run",
    [
        _b64("mail jane@example.de"),  # one "=" of padding
        _b64("mail jane@example.de").rstrip("="),  # the padding left out
        _b64("mail jane@example.de") + "=",  # one "=" too many
        _b64("write jane@example.TW"),  # ends in "X", no padding
        base64.urlsafe_b64encode(b"mail jane@example.com >>").decode(),  # url-safe, "-" only
    ],
)
def test_base64_runs_padded_any_way_or_url_safe_are_read(run: str) -> None:
    """A value is found in standard or url-safe base64, with its padding, without, or doubled."""
    assert RedactPII().scrub(f"blob {run} end")[0] == "blob [REDACTED:EMAIL] end"


def test_a_decoded_run_nine_tenths_printable_is_read_as_text() -> None:
    """A run decoding to text with one character in ten unprintable is still read."""
    run = _b64("\x01\x02 jane@example.com!")  # 18 of 20 characters printable
    assert RedactPII().scrub(f"blob {run} end")[0] == "blob [REDACTED:EMAIL] end"


def test_an_obfuscated_value_inside_base64_is_redacted() -> None:
    """A base64 run whose decoded text hides a value with ``(at)``/``(dot)`` is redacted."""
    run = _b64("write jane (at) example (dot) com")
    assert RedactPII().scrub(f"blob {run} end")[0] == "blob [REDACTED:EMAIL] end"


def test_base64_of_plain_text_is_kept() -> None:
    """A base64 run of text holding no value is released as it is."""
    text = f"blob {_b64('plain words, nothing to hide here')} end"
    assert RedactPII().scrub(text)[0] == text


def test_a_base64_run_that_does_not_decode_does_not_hide_a_later_one() -> None:
    """After a run that is not base64 text, the next run is still read."""
    text = f"id {'x' * 17} then {MAIL} end"
    assert RedactPII().scrub(text)[0] == f"id {'x' * 17} then [REDACTED:EMAIL] end"


def test_a_base64_run_over_the_cap_does_not_hide_a_later_one() -> None:
    """A run longer than the decoding cap is skipped, and the runs after it are still read."""
    text = f"data {'A' * (pii._B64_MAX + 4)} then {MAIL} end"
    assert RedactPII().scrub(text)[0].endswith(" then [REDACTED:EMAIL] end")


def test_a_base64_run_as_long_as_the_cap_is_read() -> None:
    """A run exactly as long as the decoding cap is decoded and its value redacted."""
    body = "mail jane@example.com " + "a" * (pii._B64_MAX * 3 // 4 - 22)
    run = _b64(body)
    assert len(run) == pii._B64_MAX
    assert RedactPII().scrub(f"blob {run} end")[0] == "blob [REDACTED:EMAIL] end"


def test_a_base64_value_far_into_a_long_text_is_redacted() -> None:
    """A base64 run starting past the decoding cap's length in the text is still read."""
    prose = "word " * (pii._B64_MAX // 5 + 10)
    assert RedactPII().scrub(f"{prose}{MAIL} end")[0] == f"{prose}[REDACTED:EMAIL] end"
