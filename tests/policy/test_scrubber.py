"""The text scrubber behind RedactPII: construction errors, strategies, the size cap, notes."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from typing import Any

import pytest

from adk_lattice.policy import RedactPII

from .conftest import noted


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"kinds": ["email", "postcode"]},
            ValueError,
            "unknown PII kinds ['postcode']; expected some of "
            "['secret', 'email', 'iban', 'card', 'ssn', 'ip', 'phone']",
        ),
        (
            {"strategies": {"EMAIL": "shred"}},
            ValueError,
            "unknown strategy 'shred'; expected one of ('redact', 'mask', 'hash', 'block')",
        ),
        ({"custom": {"X": 42}}, TypeError, "custom detector 'X' must be a regex or a callable"),
        ({"max_chars": 0}, ValueError, "max_chars must be >= 1"),
        (
            {"engine": object()},
            TypeError,
            "engine must have analyze(text) -> [(start, end, kind)]",
        ),
    ],
)
def test_a_bad_setting_fails_at_construction_with_the_fix(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Unknown kinds or strategies, a bad custom detector or cap raise, saying what is allowed."""
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        RedactPII(**kwargs)


def test_a_cap_of_one_character_is_allowed() -> None:
    """max_chars=1 is the smallest cap: everything past the first character is withheld."""
    assert RedactPII(max_chars=1).scrub("a b")[0] == "a[WITHHELD:2 characters past the scan limit]"


def test_a_single_token_past_the_cap_is_withheld_from_its_start() -> None:
    """A text that is one token longer than the cap is withheld whole, none of it released."""
    out, _ = RedactPII(max_chars=10).scrub("abcdefghijklmnop")
    assert out == "[WITHHELD:16 characters past the scan limit]"


async def test_withholding_past_the_cap_is_noted_as_oversize(ctx: Any) -> None:
    """A tool result cut at the cap is noted redact oversize and counted."""
    c = await ctx({}, function_call_id="fc-1")
    r = RedactPII(max_chars=10)
    r.after_tool(tool=None, tool_args={}, tool_context=c, result={"note": "word " * 10})
    assert noted(c, "after_tool") == [("redact", "oversize")]
    assert r.counts["withheld:oversize"] == 1


def test_mask_keeps_the_last_four_of_a_long_value_only() -> None:
    """mask keeps the last four characters of a value over 8 long, and none of a shorter one."""
    r = RedactPII(strategy="mask", custom={"PIN": r"PIN-\d{4}"})
    assert r.scrub("card 4111 1111 1111 1111")[0] == "card ***************1111"
    assert r.scrub("pin PIN-1234")[0] == "pin ********"


def test_a_value_holding_a_lone_surrogate_is_hashed() -> None:
    """hash reads a lone surrogate (a str can hold one) instead of failing on it."""
    value = "ID-a\ud800b"
    digest = hmac.new(b"k", value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    r = RedactPII(strategy="hash", salt="k", custom={"ID": r"ID-\S+"}, kinds=[])
    assert r.scrub(f"ref {value} ok")[0] == f"ref [ID:{digest[:12]}] ok"


def test_a_text_exactly_at_the_cap_is_scanned_whole() -> None:
    """A text as long as max_chars is scanned and released in full, nothing withheld."""
    assert RedactPII(max_chars=5).scrub("hello") == ("hello", False)


def test_a_global_block_strategy_flags_the_text_to_withhold() -> None:
    """strategy="block" flags any value found, so the caller withholds the whole text."""
    assert RedactPII(strategy="block").scrub("write to jane.doe@example.com")[1] is True


def test_a_kind_strategy_overrides_the_default_one() -> None:
    """A kind's own strategy applies to its values, the default to the other kinds."""
    r = RedactPII(strategies={"EMAIL": "mask"})
    out, _ = r.scrub("ab@cd.io or SSN 123-45-6789")
    assert out == "******** or SSN [REDACTED:SSN]"


def test_mask_keeps_the_last_four_of_a_nine_character_value() -> None:
    """mask keeps the last four characters of a value just over 8 long."""
    r = RedactPII(strategy="mask", custom={"PIN": r"PIN-\d{5}"}, kinds=[])
    assert r.scrub("pin PIN-12345")[0] == "pin *****2345"


def test_each_value_redacted_is_counted_by_its_kind() -> None:
    """counts has one redacted:<KIND> per value replaced."""
    r = RedactPII()
    r.scrub("a@example.com and b@example.com")
    assert r.counts == {"redacted:EMAIL": 2}


def test_a_full_scrub_leaves_a_long_token_alone() -> None:
    """Only a stream withholds a token past max_hold: a full scrub reads it whole."""
    token = "x" * 200
    assert RedactPII(max_hold=150).scrub(f"see {token} ok") == (f"see {token} ok", False)


def test_the_debug_log_names_the_kinds_found(caplog: pytest.LogCaptureFixture) -> None:
    """The debug line lists the kinds a scrub found, text past the cap as OVERSIZE."""
    caplog.set_level(logging.DEBUG, logger="adk_lattice.policy")
    RedactPII(max_chars=20).scrub("mail a@example.com " + "word " * 10)
    assert caplog.messages == ["adk_lattice: RedactPII found ['EMAIL', 'OVERSIZE']"]
