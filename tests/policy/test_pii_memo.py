"""RedactPII remembers the spans of short texts it read, and nothing it must read again."""

from __future__ import annotations

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii import _scrubber


def test_a_repeated_text_is_redacted_the_same_every_time() -> None:
    """The second scrub of a text (served from the memo) redacts exactly as the first."""
    r = RedactPII()
    text = "mail jane.doe@example.com or call +1 415 555 0132"
    first = r.scrub(text)
    assert "jane.doe@example.com" not in first[0]
    assert r.scrub(text) == first


def test_a_repeated_text_counts_its_redactions_each_time() -> None:
    """Counters count every redaction, also of a text whose spans were remembered."""
    r = RedactPII()
    for _ in range(3):
        r.scrub("ssn 123-45-6789")
    assert r.counts["redacted:SSN"] == 3


def test_a_callable_detector_is_asked_on_every_text() -> None:
    """A detector of one's own that is a callable runs on every scan, repeated texts too."""
    seen: list[str] = []

    def finder(text: str) -> list[tuple[int, int]]:
        seen.append(text)
        return [(0, 3)] if text.startswith("ORD") else []

    r = RedactPII(custom={"ORDER": finder}, kinds=[])
    assert r.scrub("ORD-1")[0] == "[REDACTED:ORDER]-1"
    assert r.scrub("ORD-1")[0] == "[REDACTED:ORDER]-1"
    assert seen == ["ORD-1", "ORD-1"]


def test_the_memo_is_bounded() -> None:
    """However many distinct short texts are read, the memo keeps at most its bound."""
    r = RedactPII(kinds=["email"])
    for i in range(_scrubber.MEMO_ENTRIES + 50):
        r.scrub(f"note {i}")
    memo = r._memo
    assert memo is not None and len(memo) == _scrubber.MEMO_ENTRIES


def test_a_long_text_is_not_remembered() -> None:
    """A text longer than the memo's bound is scanned and not kept (memory stays small)."""
    r = RedactPII(kinds=["email"])
    r.scrub("x" * (_scrubber.MEMO_CHARS + 1))
    memo = r._memo
    assert memo is not None and len(memo) == 0
