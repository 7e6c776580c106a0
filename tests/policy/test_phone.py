"""Phone numbers with libphonenumber: regions, look-alikes, the work budget, the fallback."""

from __future__ import annotations

import re

import phonenumbers
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii import _phone

from .test_linear_time import _scales_linearly

SAMPLE_REGIONS = ["AR", "AU", "BR", "CN", "DE", "EG", "ES", "FR", "GB", "IN", "JP", "KE",
                  "MX", "NG", "NL", "PL", "RU", "SE", "TR", "ZA"]  # fmt: skip


def test_a_berlin_number_is_caught_with_region_de() -> None:
    """A German national number is read when DE is among the regions."""
    out, _ = RedactPII(phone_regions=["DE"]).scrub("Ruf an: 030 12345678, danke.")
    assert out == "Ruf an: [REDACTED:PHONE], danke."


def test_a_french_mobile_is_caught_with_region_fr() -> None:
    """A French mobile in national format is read when FR is among the regions."""
    out, _ = RedactPII(phone_regions=["US", "FR"]).scrub("Mon portable : 06 12 34 56 78.")
    assert out == "Mon portable : [REDACTED:PHONE]."


def test_a_national_number_of_an_unconfigured_region_is_not_read() -> None:
    """National formats are read only for the configured regions."""
    text = "Mon portable : 06 12 34 56 78."
    assert RedactPII(phone_regions=["US"]).scrub(text)[0] == text


@pytest.mark.parametrize("region", SAMPLE_REGIONS)
def test_international_numbers_are_caught_whatever_the_regions(region: str) -> None:
    """A +CC number of any region is caught with the default regions."""
    for kind in (phonenumbers.PhoneNumberType.FIXED_LINE, phonenumbers.PhoneNumberType.MOBILE):
        number = phonenumbers.example_number_for_type(region, kind)
        text = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        assert RedactPII().scrub(f"Call {text} today.")[0] == "Call [REDACTED:PHONE] today."


@pytest.mark.parametrize(
    "text",
    [
        "Your order #123-456-7890 has shipped.",
        "Order ORD-2024-000123 is ready.",
        "Delivered on 2024-01-02 at 10:30.",
        "Due 04.05.1998, version 15.25.697.5372.",
        "Total EUR 1 234 567,00 charged.",
        "Invoice INV 2029 0400 33 and account 09133088.",
        "Meet at 26.0857, -168.1258 today.",
    ],
)
def test_lookalikes_are_not_phone_numbers(text: str) -> None:
    """Order ids, dates, versions, amounts and coordinates are left alone, in many regions."""
    r = RedactPII(kinds=["phone"], phone_regions=["US", "GB", "DE", "FR", "IN", "BR", "JP"])
    assert r.scrub(text)[0] == text


def test_two_numbers_side_by_side_are_both_caught() -> None:
    """Two numbers separated by a space are read as two numbers."""
    out, _ = RedactPII().scrub("lines 415 555 0132 415 555 0199 ok")
    assert out == "lines [REDACTED:PHONE] [REDACTED:PHONE] ok"


def test_an_unknown_region_fails_at_construction() -> None:
    """A region libphonenumber does not know raises ValueError naming it."""
    with pytest.raises(ValueError, match="XX"):
        RedactPII(phone_regions=["XX"])


def test_past_the_work_budget_candidates_are_redacted() -> None:
    """A text with more candidates than the budget allows is redacted, not released raw."""
    text = "x 1234567 " * 3000
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert "1234567" in out  # within the budget: read, and not a number
    assert out.count("[REDACTED:PHONE]") > 1000  # past it: withheld as numbers


@pytest.mark.parametrize(
    "text",
    [
        "created 2026-11-30 12:00:00 by the job",
        '{"created": "2026-11-30 12:00:00", "id": 7}',
        "logged 2024/01/02 08:15 UTC",
        "at 2024-01-02  23:59 sharp",
        "am 2026-11-30 12:00 Uhr",
    ],
)
def test_a_date_and_time_is_not_a_phone_number(text: str) -> None:
    """A timestamp (date, hour, ``:mm``) is left alone, though its digits dial in the US."""
    assert RedactPII(kinds=["phone"]).scrub(text)[0] == text


def test_a_number_beside_a_timestamp_is_still_caught() -> None:
    """Only the timestamp is spared: a phone number written just before it is redacted."""
    out, _ = RedactPII(kinds=["phone"]).scrub("call 415-555-0132 2026-11-30 12:00 now")
    assert out == "call [REDACTED:PHONE] 2026-11-30 12:00 now"


def test_a_long_tool_output_keeps_every_numeric_timestamp() -> None:
    """The work budget grows with the text: 2,000 records' epoch times are read, not lost."""
    rows = [
        f'{{"id": "evt_{i:05d}", "kind": "refund", "ok": true, "ts": {1764504000 + 37 * i}}}'
        for i in range(2_000)
    ]
    text = "[" + ", ".join(rows) + "]"
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert "[REDACTED" not in out
    assert out == text


@pytest.mark.parametrize(
    "prefix", ["030 12345678 ", "1 ", "(12) ", "2024-01-02 ", "+1 415-555-0132 "]
)
def test_hostile_digit_runs_scan_in_linear_time(prefix: str) -> None:
    """Repeated numbers or digit runs cost time linear in their length, regions set."""
    r = RedactPII(phone_regions=["US", "DE", "FR"])
    text = (prefix * (40_000 // len(prefix) + 1))[:40_000]
    assert _scales_linearly(r.scrub, text)


def test_without_the_extra_the_pattern_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libphonenumber, the built-in pattern finds phones; regions ask for the extra."""
    monkeypatch.setattr(_phone, "_pn", None)
    assert RedactPII().scrub("call +1 415-555-0132 now")[0] == "call [REDACTED:PHONE] now"
    with pytest.raises(ValueError, match=r"adk-lattice\[pii\]"):
        RedactPII(phone_regions=["DE"])


@given(st.text(alphabet="0123456789 .-/()+#_aZ\u00a0", max_size=40))
def test_the_one_pass_gate_never_skips_a_phone_candidate(text: str) -> None:
    """Whenever the candidate pattern can match, the RE2 gate lets the finder run."""
    from adk_lattice.policy.pii._phone import _CANDIDATE, _SEVEN_DIGITS

    assert _SEVEN_DIGITS.found(text) or _CANDIDATE.search(text) is None


@pytest.mark.parametrize(
    "number", ["4155550132", "415 555 0132", "+1 4 1 5 5 5 5 0 1 3 2", "(415) 555-0132"]
)
def test_reading_one_number_leaves_the_budget_for_the_rest(number: str) -> None:
    """A number read once does not use up the work budget: a later non-number stays."""
    out, _ = RedactPII(kinds=["phone"]).scrub(f"call {number} now, then 1234567")
    assert out.endswith(" now, then 1234567")


def test_regions_without_the_extra_say_how_to_fix_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libphonenumber, phone_regions fails with both fixes: install, or leave it unset."""
    monkeypatch.setattr(_phone, "_pn", None)
    message = (
        "phone_regions needs libphonenumber: pip install 'adk-lattice[pii]' "
        "(or leave phone_regions unset to use the built-in phone pattern)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        RedactPII(phone_regions=["DE"])


def test_an_unknown_region_is_named_with_an_example_of_a_code() -> None:
    """An unknown region's error names it and shows what a region code looks like."""
    message = "unknown phone regions ['XX']; use ISO 3166 codes such as 'DE'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        RedactPII(phone_regions=["xx"])


@given(st.text(alphabet="0123456789 .-/()+#:_aZ\u00a0\u0660\u00e9", max_size=60))
@example("2026-11-30 12:00:00 1234567 2026/11/30 12:61 +2026-11-30 12:00")
def test_reading_only_the_digit_chains_finds_every_candidate(text: str) -> None:
    """The candidates found chain by chain (dates, timestamps skipped) are the whole text's."""
    from adk_lattice.policy.pii._phone import _CANDIDATE, _not_a_number, _windows

    windowed = [
        m.span()
        for w in _windows(text)
        for m in _CANDIDATE.finditer(text, *w)
        if not _not_a_number(text, *m.span())
    ]
    assert windowed == [
        m.span() for m in _CANDIDATE.finditer(text) if not _not_a_number(text, *m.span())
    ]


def test_every_valid_example_number_passes_the_general_pattern_shortcut() -> None:
    """The cheap pre-check before full validation rejects no valid number of any region."""
    from adk_lattice.policy.pii._phone import _general

    numbers = [
        phonenumbers.example_number_for_type(region, kind)
        for region in phonenumbers.SUPPORTED_REGIONS
        for kind in phonenumbers.PhoneNumberType.values()
    ]
    numbers += [
        phonenumbers.example_number_for_non_geo_entity(code)
        for code in phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS
    ]
    valid = [n for n in numbers if n is not None and phonenumbers.is_valid_number(n)]
    assert len(valid) > 1_000
    rejected = [
        n
        for n in valid
        if (general := _general(n.country_code)) is not None
        and not general.fullmatch(phonenumbers.national_significant_number(n))
    ]
    assert rejected == []


def test_an_epoch_timestamp_is_not_a_phone_number() -> None:
    """Ten digits that no region's numbering plan allows (``1764504000``) are left alone."""
    text = '{"ts": 1764504000, "next": 1764590400}'
    assert RedactPII(kinds=["phone"], phone_regions=["US", "DE", "FR"]).scrub(text)[0] == text


@pytest.mark.parametrize("groups", [8, 9])
def test_a_number_after_a_long_run_of_digit_groups_is_caught(groups: int) -> None:
    """A number at the end of a run of digit groups is read whole, wherever the 41-digit
    candidate pattern cuts the run."""
    out, _ = RedactPII(kinds=["phone"]).scrub("1234 " * groups + "415 555 0132")
    assert out == "1234 " * groups + "[REDACTED:PHONE]"


def test_a_number_in_a_run_the_budget_ran_out_in_is_withheld() -> None:
    """When the work budget runs out partway through a run of digit groups, the unread rest
    of the run, the number at its end included, is redacted, not released."""
    redact = RedactPII(kinds=["phone"])
    for groups in range(1_500, 1_530):
        out, _ = redact.scrub("1234 " * groups + "415 555 0132")
        assert not out.endswith("0132"), groups


def test_the_work_budget_is_one_parse_per_region_for_each_candidate() -> None:
    """With one region, exactly 1,500 non-numbers are read before the rest are withheld."""
    out, _ = RedactPII(kinds=["phone"]).scrub("x 1234567 " * 3_000)
    assert out.count("1234567") == 1_500


def test_a_confirmed_number_costs_two_more_parses_per_region() -> None:
    """With two regions, 100 numbers (6 units each) leave 900 units: 450 non-numbers read."""
    text = "call 415 555 0132 ok " * 100 + "x 1234567 " * 600
    out, _ = RedactPII(kinds=["phone"], phone_regions=["US", "DE"]).scrub(text)
    assert out.count("[REDACTED:PHONE] ok") == 100
    assert out.count("1234567") == 450


def test_a_long_text_gets_one_parse_per_64_characters() -> None:
    """A 120,010-character text gets 1,875 parses (whole ones), not 1,500."""
    text = "x 1234567 " * 12_001
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert out.count("1234567") == len(text) // 64


def test_a_number_of_seventeen_digits_with_an_international_prefix_is_caught() -> None:
    """``011 49 177 99 1234567`` (US exit code, a German mobile: 17 digits) is one number."""
    out, _ = RedactPII(kinds=["phone"]).scrub("call 011 49 177 99 1234567 now")
    assert out == "call [REDACTED:PHONE] now"


def test_a_labelled_number_at_the_start_of_a_text_is_left_alone() -> None:
    """A label at the very start (``Order 415 555 0132``) still marks the digits as an id."""
    assert RedactPII(kinds=["phone"]).scrub("Order 415 555 0132")[0] == "Order 415 555 0132"


def test_a_labelled_id_does_not_stop_the_numbers_after_it() -> None:
    """After an order number is skipped, a phone number later in the text is still caught."""
    out, _ = RedactPII(kinds=["phone"]).scrub("order 1234567, call 415 555 0132")
    assert out == "order 1234567, call [REDACTED:PHONE]"


def test_a_number_followed_by_a_colon_and_two_digits_is_caught() -> None:
    """Only a date and an hour before ``:mm`` is a timestamp: ``415 555 0132:12`` is not."""
    out, _ = RedactPII(kinds=["phone"]).scrub("call 415 555 0132:12 today")
    assert out == "call [REDACTED:PHONE]:12 today"


def test_a_number_cut_off_before_a_decimal_is_still_read() -> None:
    """A run whose chain goes on into a decimal number (``12.345678``) is read up to it."""
    text = "415 555 0132 " + "1234 " * 7 + "123 12.345678"
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert out == "[REDACTED:PHONE] " + "1234 " * 7 + "123 12.345678"


def test_a_budget_spent_to_zero_withholds_the_next_piece() -> None:
    """A budget that reaches exactly zero inside a run reads no further piece of it."""
    out, _ = RedactPII(kinds=["phone"]).scrub("x 1234567 " * 1_498 + "y 1234567 1234567")
    assert out.endswith("y 1234567 [REDACTED:PHONE]")
    assert out.count("1234567") == 1_499


def test_the_phone_finder_runs_only_on_text_with_seven_digits() -> None:
    """The libphonenumber detector is gated: a text without a 7-digit chain never runs it."""
    from adk_lattice.policy.pii._phone import phone_detector
    from adk_lattice.policy.pii.detectors import runnable

    detector = phone_detector(["US"])
    assert runnable([detector], "call me at six, ext. 12-34") == []
    assert runnable([detector], "call 415 555 0132") == [detector]


def test_numbers_either_side_of_a_run_too_long_to_be_one_are_both_caught() -> None:
    """A 50-digit run between two numbers splits them; each is still read and redacted."""
    text = "415 555 0132 " + "9" * 50 + " 415 555 0199 ok"
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert out == "[REDACTED:PHONE] " + "9" * 50 + " [REDACTED:PHONE] ok"


def test_a_labelled_id_does_not_hide_a_number_later_in_its_chain() -> None:
    """After a skipped order number, a number further along the same digit chain is caught."""
    text = "order 1234567 " + "9" * 50 + " 415 555 0132 ok"
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert out == "order 1234567 " + "9" * 50 + " [REDACTED:PHONE] ok"


def test_a_number_one_region_cannot_parse_is_read_in_the_next() -> None:
    """011 opens an international call in the US but a Sapporo number in JP: JP still reads it."""
    out, _ = RedactPII(phone_regions=["US", "JP"]).scrub("Sapporo office: 011-214-5678.")
    assert out == "Sapporo office: [REDACTED:PHONE]."


def test_a_decimal_followed_by_a_digit_is_not_a_dotted_number() -> None:
    """A decimal number is left alone even when more digits follow it in the same chain."""
    text = "Scores 415.5550132 7 points"
    assert RedactPII(kinds=["phone"]).scrub(text)[0] == text


def test_a_labelled_number_stays_when_a_later_chain_is_split() -> None:
    """An order number is left alone though a later chain holds numbers a long run splits."""
    text = "Order 415 555 0132 shipped; call 212 555 0147 " + "9" * 50 + " 415 555 0199 ok"
    out, _ = RedactPII(kinds=["phone"]).scrub(text)
    assert out == "Order 415 555 0132 shipped; call [REDACTED:PHONE] " + "9" * 50 + (
        " [REDACTED:PHONE] ok"
    )


def test_without_re2_a_number_at_the_start_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With Python's re alone (no RE2), a number opening the text is read from its first digit."""
    monkeypatch.setattr(_phone, "_CHAIN", None)
    out, _ = RedactPII(kinds=["phone"]).scrub("4155550132 is my number")
    assert out == "[REDACTED:PHONE] is my number"


def test_a_lone_surrogate_does_not_stop_the_phone_scan() -> None:
    """A text holding a lone surrogate (a str can) still has its phone number redacted."""
    out, _ = RedactPII(kinds=["phone"]).scrub("call 415 555 0132 \ud800")
    assert out == "call [REDACTED:PHONE] \ud800"


def test_every_number_in_non_ascii_text_is_caught() -> None:
    """Past a non-ASCII character, the second number is found at its own offset too."""
    out, _ = RedactPII(kinds=["phone"]).scrub("é call 415 555 0132 or 212 555 0147")
    assert out == "é call [REDACTED:PHONE] or [REDACTED:PHONE]"


@pytest.mark.parametrize("text", ["call {} today", ":30 left. Call {} now."])
def test_a_number_shaped_like_a_date_and_hour_without_minutes_is_caught(text: str) -> None:
    """Digits that read as a date and hour but have no :mm after them are a number."""
    out, _ = RedactPII(kinds=["phone"]).scrub(text.format("21251013 12"))
    assert out == text.format("[REDACTED:PHONE]")


def test_without_the_pii_extra_redact_pii_warns_once_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without phonenumbers, the US-only fallback is announced once, with the extra to install."""
    monkeypatch.setattr(_phone, "_pn", None)
    monkeypatch.setattr(_phone, "_warned", False)
    with caplog.at_level("WARNING", logger="adk_lattice.policy"):
        RedactPII()
        RedactPII()
    warned = [r.getMessage() for r in caplog.records if "US-only" in r.getMessage()]
    assert len(warned) == 1
    assert "adk-lattice[pii]" in warned[0]
