"""PII detectors: obfuscated forms, whole private keys, and linear time on hostile input."""

from __future__ import annotations

import base64
import re
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii.detectors import BUILTIN, EMAIL, Detector, runnable, scan

DETECTORS = tuple(d for family in BUILTIN.values() for d in family)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("mail jane\u200b.doe@exam\u200cple.com now", "EMAIL"),
        ("mail jane.doe@example\u00a0.com now", "EMAIL"),
        ("card 4111\n1111\n1111\n1111 ok", "CARD"),
        ("card **4111** 1111 1111 1111 ok", "CARD"),
        ("card `4111 1111` 1111 1111 ok", "CARD"),
        ("card 4111\u00a01111\u00a01111\u00a01111 ok", "CARD"),
        ("write jane (at) example (dot) com please", "EMAIL"),
        ("write jane [at] example [dot] com please", "EMAIL"),
        ("to=jane%2Edoe%40example.com&x=1", "EMAIL"),
        ("blob " + base64.b64encode(b"contact jane.doe@example.com").decode() + " end", "EMAIL"),
        ("blob " + base64.urlsafe_b64encode(b"ssn: 123-45-6789!?").decode() + " end", "SSN"),
        ("key AKIA\u200bIOSFODNN7EXAMPLE ok", "SECRET"),
        ("ssn 123 45 6789 ok", "SSN"),
        ("ssn 123\u00a045\u00a06789 ok", "SSN"),
        ("full-width \uff14\uff11\uff11\uff11 1111 1111 1111 ok", "CARD"),
    ],
)
def test_obfuscated_values_are_redacted_in_the_original(text: str, kind: str) -> None:
    """An obfuscated value is found and its whole original span, obfuscation included, goes."""
    out, _ = RedactPII().scrub(text)
    assert f"[REDACTED:{kind}]" in out
    for fragment in ("jane", "4111", "AKIA", "6789", "\uff14", "\u200b"):
        assert fragment not in out, out


def test_text_around_an_obfuscated_value_is_kept() -> None:
    """Folding changes what is found, never the text around it."""
    out, _ = RedactPII().scrub("Hi *there*,\n\nwrite jane (at) example (dot) com today.")
    assert out == "Hi *there*,\n\nwrite [REDACTED:EMAIL] today."


def test_a_private_key_is_redacted_from_begin_to_end() -> None:
    """A PEM private key goes whole: header, body and footer."""
    key = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\nq0Z4Lh==\n"
        "-----END RSA PRIVATE KEY-----"
    )
    assert RedactPII().scrub(f"key:\n{key}\ndone")[0] == "key:\n[REDACTED:SECRET]\ndone"


def test_a_truncated_private_key_is_redacted_to_the_end_of_its_body() -> None:
    """A key block cut off before END is redacted through its base64 run."""
    text = "key: -----BEGIN PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\nq0Z4Lh, sorry, cut off"
    assert RedactPII().scrub(text)[0] == "key: [REDACTED:SECRET], sorry, cut off"


def test_a_key_longer_than_its_pattern_is_redacted_whole() -> None:
    """A key longer than the pattern's bound is redacted to the end of its token."""
    key = "sk-" + "a1" * 400
    assert RedactPII().scrub(f"use {key} now")[0] == "use [REDACTED:SECRET] now"


def test_a_certificate_is_not_a_secret() -> None:
    """A public certificate block is not redacted as a private key."""
    text = "-----BEGIN CERTIFICATE-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END CERTIFICATE-----"
    assert RedactPII(kinds=["secret"]).scrub(text)[0] == text


HOSTILE_PREFIXES = [
    "eyJ", "eyJa.", "eyJaaaaaaaaaaaa.eyJaaaaaaaaaaaaa.", "a", "1", "1 ", "1-", "1.", "a@",
    "a.", ":", "a:", "sk-", "AKIA", "ghp_", "xoxa-", "password=", "password ", "api_key:",
    "GB82", "+1", "(12) ", "-----BEGIN PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\na ",
    " (at) ", "%40", "\u200b", "\u00a0", "*", "_", "123 45 ", "\n", "aGVsbG8gd29ybGQh",
]  # fmt: skip


def _hostile(prefix: str, size: int = 100_000) -> str:
    return (prefix * (size // len(prefix) + 1))[:size]


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda d: f"{d.kind}")
def test_each_pattern_is_linear_on_hostile_input(detector: object) -> None:
    """Every built-in pattern scans 100 KB of any repeated prefix in well under 2 s."""
    for prefix in HOSTILE_PREFIXES:
        text = _hostile(prefix)
        started = time.perf_counter()
        list(detector.spans(text))  # type: ignore[attr-defined]
        # Linear is ~20 ms here; the quadratic JWT pattern this replaced took minutes.
        assert time.perf_counter() - started < 2.0, prefix


def test_a_whole_scan_is_linear_on_hostile_input() -> None:
    """Folding, decoding and every detector together stay fast on 100 KB of hostile text."""
    for prefix in HOSTILE_PREFIXES:
        started = time.perf_counter()
        scan(_hostile(prefix), DETECTORS)
        assert time.perf_counter() - started < 2.0, prefix


def test_text_past_the_size_cap_is_withheld() -> None:
    """Past max_chars nothing is released unscanned: the tail is withheld and counted."""
    r = RedactPII(max_chars=1000)
    text = "word " * 150 + "tail " * 100 + "jane.doe@example.com"
    out, _ = r.scrub(text)
    assert "jane" not in out
    assert out.startswith("word word") and out.endswith("characters past the scan limit]")
    assert r.counts["withheld:oversize"] == 1


def test_the_size_cap_never_cuts_a_value_in_two() -> None:
    """A value straddling the cap is withheld whole, not released in part."""
    r = RedactPII(max_chars=24)
    out, _ = r.scrub("0123456789 abcdefghijklmnopqrstuvwxyz")
    assert out.startswith("0123456789 [WITHHELD:26 characters")


INVISIBLE = ["\u200b", "\u00a0", "\u200d", "\ufeff", "\u00ad", "\u2060"]
PLAIN = {
    "EMAIL": "jane.doe@example.com",
    "CARD": "4111111111111111",
    "SSN": "123-45-6789",
    "SECRET": "AKIAIOSFODNN7EXAMPLE",
    "IBAN": "GB82WEST12345698765432",
}


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(sorted(PLAIN)),
    inserts=st.lists(
        st.tuples(st.integers(1, 21), st.sampled_from(INVISIBLE)), min_size=1, max_size=4
    ),
)
def test_invisible_characters_anywhere_in_a_value_do_not_hide_it(
    kind: str, inserts: list[tuple[int, str]]
) -> None:
    """Zero-width or no-break characters at any positions inside a value still redact it."""
    chars = list(PLAIN[kind])
    for pos, char in sorted(inserts, reverse=True):
        chars.insert(min(pos, len(chars) - 1), char)
    out, _ = RedactPII().scrub("see " + "".join(chars) + " ok")
    assert out == f"see [REDACTED:{kind}] ok"


_VALUES = [
    "jane.doe@example.com", "4111 1111 1111 1111", "4111-1111-1111-1111", "123-45-6789",
    "123 45 6789", "DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "+1 415-555-0132",
    "(415) 555-0132", "+14155550132", "192.168.10.1", "2001:db8::1", "fe80::1:2",
    "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a" * 36, "github_pat_" + "b" * 30, "AIza" + "c" * 35,
    "xoxb-1234567890-abc", "sk_live_" + "d" * 24, "sk-" + "e" * 40,
    "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlX2hlcmU",
    "-----BEGIN PRIVATE KEY-----\nMIIBVQ==\n-----END PRIVATE KEY-----",
    "password=hunter2hunter2", "API_KEY: 'abcdefgh12345'",
]  # fmt: skip


@given(
    st.text(alphabet="aZ09 .-:@+()_=\n", max_size=30),
    st.sampled_from(_VALUES),
    st.text(alphabet="aZ09 .-:@+()_=\n", max_size=30),
)
def test_a_detector_skipped_by_its_gate_would_have_found_nothing(
    before: str, value: str, after: str
) -> None:
    """The one-pass gates only skip built-in detectors that cannot match the text."""
    from adk_lattice.policy.pii.detectors import _GATES, BUILTIN, runnable

    text = before + value + after
    gated = [d for ds in BUILTIN.values() for d in ds if id(d) in _GATES]
    kept = runnable(gated, text)
    assert [d.kind for d in gated if d not in kept and list(d.spans(text))] == []


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("5555 5555 5555 4444", "CARD"),  # doubled digits over 4
        ("4222222222222", "CARD"),  # 13 digits, the shortest card
        ("NO9386011117947", "IBAN"),  # 15 characters, the shortest IBAN
    ],
)
def test_valid_values_at_the_edges_of_their_checks_are_redacted(value: str, kind: str) -> None:
    """The checksums accept every valid card and IBAN, the shortest ones included."""
    assert RedactPII().scrub(f"pay {value} now")[0] == f"pay [REDACTED:{kind}] now"


@pytest.mark.parametrize("value", ["5555 5555 5555 4445", "4222222222223"])
def test_a_card_number_failing_luhn_is_left_alone(value: str) -> None:
    """A digit run shaped like a card but failing the Luhn check is not a card."""
    assert RedactPII(kinds=["card"]).scrub(f"ref {value} ok")[0] == f"ref {value} ok"


def test_a_base64_run_of_binary_data_is_not_read_as_text() -> None:
    """A base64 run decoding to mostly control bytes is data, not text: nothing in it is found."""
    binary = base64.b64encode(bytes(range(1, 31)) + b" 10.20.30.40 ").decode()
    assert scan(f"data {binary} end", DETECTORS) == []
    text = base64.b64encode(b"server at 10.20.30.40 is up").decode()
    assert scan(f"data {text} end", DETECTORS) == [(5, 5 + len(text), "IP")]


def test_of_two_values_starting_together_the_longer_names_the_redaction() -> None:
    """A custom value that starts with a built-in one and runs longer is redacted as itself."""
    r = RedactPII(custom={"CONTACT": r"jane@example\.com \(home\)"})
    assert r.scrub("write jane@example.com (home) today")[0] == "write [REDACTED:CONTACT] today"


def test_overlapping_values_are_redacted_as_one_span_covering_both() -> None:
    """Two overlapping values become one redaction from the first start to the last end."""
    r = RedactPII(custom={"URL": r"example\.com/inbox"})
    assert r.scrub("mail jane@example.com/inbox now")[0] == "mail [REDACTED:EMAIL] now"


@pytest.mark.parametrize(
    ("pattern", "text", "out"),
    [
        (r"\d*", "a 12 b", "a [REDACTED:X] b"),
        (r"\d*", "a1 b2", "a[REDACTED:X] b[REDACTED:X]"),
        (r"(?:ORD-\d+)?", "see ORD-12 ok", "see [REDACTED:X] ok"),
        (r"(?P<v>\d*)x", "x 12x", "x [REDACTED:X]x"),
    ],
)
def test_a_custom_pattern_that_can_match_nothing_redacts_its_values_and_ends(
    pattern: str, text: str, out: str
) -> None:
    """A custom pattern that can match the empty string redacts only its non-empty matches."""
    assert RedactPII(custom={"X": pattern}, kinds=[]).scrub(text)[0] == out


def test_only_the_built_in_detectors_whose_gate_occurs_run() -> None:
    """Prose with no digit, @ or secret word runs no built-in detector; custom ones always run."""
    custom = Detector("X", re.compile("zzz"))
    assert runnable(DETECTORS, "hello there, how are you?") == []
    assert runnable((*DETECTORS, custom), "hello there") == [custom]
    assert runnable(DETECTORS, "mail a@b.co") == [EMAIL]


@pytest.mark.parametrize("extra", ["Z", "ZZ", "ZZZ"])
def test_a_long_key_is_redacted_to_the_end_of_its_token_and_no_further(extra: str) -> None:
    """A key longer than its pattern is redacted up to the next space, the next word kept."""
    out, _ = RedactPII().scrub(f"key AKIAIOSFODNN7EXAMPLE{extra} next word")
    assert out == "key [REDACTED:SECRET] next word"


@given(st.text(alphabet="Ab9+/_-= .\u00e9\u0430\U0001f600", max_size=60))
def test_base64_runs_found_by_re2_are_the_pattern_runs(text: str) -> None:
    """The base64 runs RE2 finds on the bytes are the runs the look-behind pattern finds."""
    from adk_lattice.policy.pii import detectors as pii

    assert list(pii._b64_runs(text)) == [m.span() for m in pii._B64.finditer(text)]


#: The IPv6 candidate pattern before runs without ``::`` or seven colons were left out.
_ANY_HEX_RUN = re.compile(
    r"(?<![\w:.])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)(?=[0-9A-Fa-f:]*[0-9A-Fa-f])"
    r"[0-9A-Fa-f:]{3,39}(?![\w:])"
)


@given(st.text(alphabet="0aF9:. g", max_size=60))
@example("at 12:00:00, 2001:db8::1 and 1:2:3:4:5:6:7:8 or fe80::1:2:3:4:5:6:7")
def test_ipv6_addresses_are_found_where_any_hex_run_was_read(text: str) -> None:
    """Leaving out runs with neither ``::`` nor seven colons loses no address."""
    from adk_lattice.policy.pii._checks import ip_ok
    from adk_lattice.policy.pii.detectors import IPV6

    expected = [m.span() for m in _ANY_HEX_RUN.finditer(text) if ip_ok(m[0])]
    assert [(start, end) for start, end, _ in IPV6.spans(text)] == expected


def test_a_time_of_day_does_not_open_the_address_detector() -> None:
    """``12:00:00`` in a record runs no IPv6 detector: the gate needs ``::`` or 7 colons."""
    from adk_lattice.policy.pii.detectors import IPV6, runnable

    assert runnable([IPV6], '{"created": "2026-11-30 12:00:00"}') == []
    assert runnable([IPV6], "from fe80::1 at 12:00") == [IPV6]


def test_a_card_failing_luhn_does_not_hide_a_valid_card_after_it() -> None:
    """After a digit run that fails the Luhn check, a valid card later on is still redacted."""
    out, _ = RedactPII(kinds=["card"]).scrub("ref 4222222222223 or 4222222222222 ok")
    assert out == "ref 4222222222223 or [REDACTED:CARD] ok"


def test_custom_values_written_back_to_back_are_each_redacted() -> None:
    """Two custom values with nothing between them are both redacted."""
    r = RedactPII(custom={"ORDER": r"ORD-\d{3}"}, kinds=[])
    assert r.scrub("see ORD-123ORD-456 ok")[0] == "see [REDACTED:ORDER][REDACTED:ORDER] ok"


def test_an_empty_span_from_a_custom_finder_redacts_nothing() -> None:
    """A custom finder's empty span marks no redaction; its non-empty spans are redacted."""
    r = RedactPII(custom={"X": lambda text: [(2, 2), (4, 6)]}, kinds=[])
    assert r.scrub("abcdefgh")[0] == "abcd[REDACTED:X]gh"
