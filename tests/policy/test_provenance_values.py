"""Kinds of sensitive values: what counts as the same value, and what never grounds."""

from __future__ import annotations

import pytest

from adk_lattice.policy.provenance import values as provenance_values
from adk_lattice.policy.provenance.values import (
    MAX_LEAVES,
    Grounding,
    Malformed,
    normalise,
    tokens_of,
    ungrounded,
)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test extracts its own tokens: the module's memo would hand it earlier results."""
    provenance_values._MEMO.clear()


TRUSTED = (
    "Pay 1,500.00 EUR to DE89 3704 0044 0532 0130 00 please, or GB29NWBK60161331926819. "
    "Mail Bob@Example.com, see https://Docs.Example.com/Guide/ and www.foo.org/x, "
    "call +49 30 1234567, post in #General about ticket TK-42. Say 'Thanks  for the help'."
)


@pytest.fixture(scope="module")
def grounding() -> Grounding:
    """The trusted text above, indexed."""
    return Grounding([TRUSTED])


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("iban", "DE89370400440532013000"),
        ("iban", "de89 3704 0044 0532 0130 00"),
        ("iban", "GB29 NWBK 6016 1331 9268 19"),
        ("number", "1500"),
        ("number", 1500.0),
        ("number", "1,500"),
        ("number", "EUR 1500.00"),
        ("email", "bob@example.com"),
        ("email", "mailto:BOB@EXAMPLE.COM"),
        ("url", "HTTPS://docs.example.com/Guide"),
        ("url", "docs.example.com/Guide/"),
        ("url", "https://foo.org/x/"),
        ("url", "http://www.foo.org/x"),
        ("phone", "030 1234567"),
        ("phone", "+49 (30) 123-4567"),
        ("id", "general"),
        ("id", "tk-42"),
        ("text", "thanks for the help"),
    ],
)
def test_equivalent_forms_are_grounded(grounding: Grounding, kind: str, value: object) -> None:
    """Differently formatted forms of a trusted value are grounded."""
    assert not ungrounded(grounding, kind, value)


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("iban", "DE8937040044053201300"),  # the user's IBAN less its last digit
        ("iban", "DE89370400440532"),  # a prefix ending on a group boundary
        ("number", "15000"),
        ("email", "bob@example.co"),
        ("email", "eve@example.com"),
        ("url", "https://docs.example.com/Guide/evil"),
        ("url", "https://docs.example.com.evil.test/Guide"),
        ("url", "https://docs.example.com/Guide?to=attacker"),
        ("url", "https://docs.example.com/Guide#to=attacker"),
        ("url", "https://docs.example.com/guide"),
        ("url", "http://docs.example.com/Guide"),
        ("url", "ftp://docs.example.com/Guide"),
        ("phone", "+1 555 0100"),
        ("id", "gen"),
        ("id", "tk-4"),
        ("text", "thanks for the help, and wire money"),
    ],
)
def test_near_misses_are_not_grounded(grounding: Grounding, kind: str, value: object) -> None:
    """A value that differs from every trusted one, even slightly, is not grounded."""
    assert ungrounded(grounding, kind, value)


@pytest.mark.parametrize(
    ("kind", "value"),
    [("email", "not-an-address"), ("iban", "12"), ("url", "nohost"), ("number", "1e9999x")],
)
def test_values_not_of_their_kind_are_malformed(kind: str, value: str) -> None:
    """A value that is not of its declared kind raises Malformed (and is never grounded)."""
    with pytest.raises(Malformed):
        normalise(kind, value)


def test_number_forms_share_one_normal_form() -> None:
    """1,500.00, 1500 and 1500.0 normalise to the same amount."""
    assert {normalise("number", v) for v in ("1,500.00", "1500", "1500.0")} == {"1500"}


def test_invisible_characters_are_folded() -> None:
    """Zero-width characters inside a trusted address do not hide it."""
    assert not ungrounded(Grounding(["write to bob\u200b@example.com"]), "email", "bob@example.com")


def test_whole_values_ground_ids_with_spaces() -> None:
    """A trusted field's whole string is one id even when it holds a space."""
    assert not ungrounded(Grounding([], whole=["Team Room"]), "id", "team room")


def test_empty_value_carries_nothing() -> None:
    """An omitted (None) or empty-list argument has nothing to ground."""
    grounding = Grounding([])
    assert not ungrounded(grounding, "email", None)
    assert not ungrounded(grounding, "email", [])


def test_text_kind_is_a_normalised_substring() -> None:
    """A free-text value is grounded when it is part of trusted text, case and spaces folded."""
    assert not ungrounded(Grounding(["Subject: Quarterly   REPORT"]), "text", "quarterly report")


def test_a_field_does_not_ground_what_its_call_was_given() -> None:
    """A trusted field holding its own call's argument (an echo) does not ground it."""
    echo = Grounding(
        [], fields=[("no payee GB29NWBK60161331926819", "text", ("GB29NWBK60161331926819",))]
    )
    assert ungrounded(echo, "iban", "GB29NWBK60161331926819")
    fresh = Grounding([], fields=[("payee GB29NWBK60161331926819", "text", ("landlord",))])
    assert not ungrounded(fresh, "iban", "GB29NWBK60161331926819")


def test_a_national_number_grounds_its_international_form_whatever_the_digits() -> None:
    """07700 900123 and +44 7700 900123 are one number, though the national one sorts last."""
    assert not ungrounded(Grounding(["call me on +44 7700 900123"]), "phone", "07700 900123")


def test_a_phone_number_longer_than_twenty_digits_is_never_grounded() -> None:
    """A 21-digit "phone number" is malformed, even when a trusted field holds it whole."""
    digits = "123456789012345678901"
    assert ungrounded(Grounding([], whole=[digits]), "phone", digits)


def test_an_iban_at_the_start_of_a_text_is_found() -> None:
    """An IBAN opening a trusted text grounds like one in the middle."""
    assert not ungrounded(
        Grounding(["DE89 3704 0044 0532 0130 00 is mine"]), "iban", "DE89370400440532013000"
    )


def test_the_valid_iban_is_preferred_to_a_longer_run() -> None:
    """An IBAN followed by more digits grounds the checksum-valid IBAN, not the longer run."""
    grounding = Grounding(["pay GB29 NWBK 6016 1331 9268 19 1234 now"])
    assert not ungrounded(grounding, "iban", "GB29NWBK60161331926819")
    assert ungrounded(grounding, "iban", "GB29NWBK601613319268191234")


def test_hyphenated_ibans_in_text_are_found() -> None:
    """An IBAN written with hyphens in trusted text grounds its compact form."""
    assert not ungrounded(
        Grounding(["acct GB29-NWBK-6016-1331-9268-19."]), "iban", "GB29NWBK60161331926819"
    )


def test_numbers_in_text_are_grounded() -> None:
    """An amount written in trusted text grounds the same amount."""
    assert not ungrounded(Grounding(["the invoice says 1,234.50 due"]), "number", 1234.5)


def test_the_leaf_limit_counts_every_leaf() -> None:
    """MAX_LEAVES grounded recipients pass; one more is never grounded."""
    emails = [f"u{n}@example.com" for n in range(MAX_LEAVES + 1)]
    grounding = Grounding([" ".join(emails)])
    assert not ungrounded(grounding, "email", emails[:MAX_LEAVES])
    assert ungrounded(grounding, "email", emails)


def test_an_echoed_id_with_spaces_does_not_ground_itself() -> None:
    """A trusted field echoing its call's id argument ("Team Room") does not ground it."""
    echo = Grounding([], fields=[("Team Room", None, ("Team Room",))])
    assert ungrounded(echo, "id", "team room")


def test_the_tokens_exclude_what_a_field_echoes() -> None:
    """The tokens handed on leave out a trusted field's echo of its own call's argument."""
    grounding = Grounding(
        [],
        fields=[
            (
                "GB29NWBK60161331926819 or DE89370400440532013000",
                "text",
                ("GB29NWBK60161331926819",),
            )
        ],
    )
    assert grounding.tokens("iban") == frozenset({"DE89370400440532013000"})


def test_a_whole_field_is_one_token_besides_its_parts() -> None:
    """A trusted field's value is a token as a whole, besides the tokens found in it."""
    assert tokens_of("id", "Team Room", whole=True) == frozenset({"team", "room", "teamroom"})


def test_the_memo_accounts_for_the_characters_it_holds() -> None:
    """Remembered token sets count their text's length, so the memo's bound limits memory."""
    text = "x " * 5_000
    tokens_of("id", text)
    assert provenance_values._MEMO.currsize >= 3 * len(text)


@pytest.mark.parametrize(
    ("kind", "text", "tokens"),
    [
        (
            "url",
            "see https://Docs.Example.com:8443/Guide/?q=1",
            {"https://docs.example.com:8443/Guide?q=1", "//docs.example.com:8443/Guide?q=1"},
        ),
        (
            "url",
            "http://example.com:80/a and https://example.org:443/b",
            {"http://example.com/a", "//example.com/a", "https://example.org/b", "//example.org/b"},
        ),
        (
            "url",
            "https://example.com/a, then https://example.com/a?b=2.",
            {
                "https://example.com/a",
                "//example.com/a",
                "https://example.com/a?b=2",
                "//example.com/a?b=2",
            },
        ),
        ("url", "www.foo.org/x", {"//foo.org/x", "http://foo.org/x", "https://foo.org/x"}),
        ("email", "mail bob@example.com. or a.b@x.co.", {"bob@example.com", "a.b@x.co"}),
        ("phone", "call 000-0000 or 0044 20 7946 0958", {"0", "+442079460958"}),
        ("phone", "12-345 and 1234-5678-9012-3456-7890", {"12345", "12345678901234567890"}),
        (
            "id",
            "refund ch_1/re_2,c-3; #tag",
            {"ch_1/re_2,c-3", "ch_1", "re_2", "c-3", "#tag"},  # "refund" is a word
        ),
    ],
    ids=[
        "port-query",
        "default-ports",
        "query-or-none",
        "no-scheme",
        "email-dots",
        "phone-zeros",
        "phone-lengths",
        "id-parts",
    ],
)
def test_tokens_are_found_in_their_normal_form(kind: str, text: str, tokens: set[str]) -> None:
    """Each kind's tokens are read out of text in the one form values are compared in."""
    assert tokens_of(kind, text) == frozenset(tokens)


def test_phone_runs_outside_five_to_twenty_digits_are_not_tokens() -> None:
    """A phone-like run of four digits, or of 21, is no phone number."""
    assert tokens_of("phone", "12-34 and 1234-5678-9012-3456-78901") == frozenset()


@pytest.mark.parametrize(
    ("short", "long", "codes", "same"),
    [
        ("07946095", "+447946095", {"44"}, True),  # a trunk zero, the declared code
        ("07946095", "+447946095", set(), False),  # no region: the national form names none
        ("020 7946 0958", "+351 20 7946 0958", {"44"}, False),  # an undeclared code
        ("07946095", "+4417946095", {"44"}, False),  # other digits after the code
        ("06 1234 5678", "+39 06 1234 5678", {"39"}, True),  # Italy keeps the trunk zero
        ("(207) 946-0958", "+1 207 946 0958", {"1"}, True),  # no trunk zero: the US code
        ("(207) 946-0958", "+44 20 7946 0958", {"1", "44"}, False),  # ... not the UK's
        ("+1 207 946 0958", "+44 20 7946 0958", set(), False),  # two country codes differ
        ("020 7946 0958", "207 946 0958", {"44", "1"}, False),  # two national forms differ
    ],
)
def test_a_national_number_grounds_only_its_own_international_forms(
    short: str, long: str, codes: set[str], same: bool
) -> None:
    """A national number grounds its international form only under a declared code."""
    grounding = Grounding([f"call {short}"], phone_codes=frozenset(codes))
    assert grounding.grounded("phone", long) is same


def test_a_whole_field_echoing_its_argument_adds_none_of_its_tokens() -> None:
    """A field echoing its call's argument whole grounds neither the whole nor its parts."""
    grounding = Grounding([], fields=[("Team Room", None, ["Team Room"])])
    assert grounding.tokens("id") == frozenset()


def test_tokens_from_several_texts_are_gathered() -> None:
    """The tokens of every trusted text count, not only the last one's."""
    grounding = Grounding(["pay DE89370400440532013000", "or GB29NWBK60161331926819"])
    assert grounding.tokens("iban") == {"DE89370400440532013000", "GB29NWBK60161331926819"}


def test_a_host_written_with_its_final_dot_is_the_same_host() -> None:
    """https://example.com./docs is the page https://example.com/docs the user gave."""
    assert Grounding(["see https://example.com/docs"]).grounded("url", "https://example.com./docs")


@pytest.mark.parametrize(
    ("kind", "value", "normal"),
    [
        ("number", "1_000", "1000"),
        ("number", "1 000.50", "1000.5"),
        ("number", "12.0", "12"),
        ("number", "EUR 1,500.00", "1500"),
        ("phone", "12345", "12345"),
        ("phone", "1" * 20, "1" * 20),
        ("phone", "00000", "0"),
        ("phone", "+44 20 7946 0958", "+442079460958"),
        ("phone", "0044 20 7946 0958", "+442079460958"),
        ("phone", "020 7946 0958", "02079460958"),
        ("iban", "DE89-3704-0044-0532-0130-00", "DE89370400440532013000"),
        ("id", "@bob", "@bob"),
        ("id", "#ticket-42#", "#ticket-42#"),
        ("id", '  "TK-42"  ', "tk-42"),
    ],
)
def test_a_value_is_compared_in_its_normal_form(kind: str, value: str, normal: str) -> None:
    """Separators, currency, zeros, case and quotes around an id are normalised away; an
    id keeps one leading sigil."""
    assert normalise(kind, value) == normal


@pytest.mark.parametrize(
    ("kind", "value"),
    [("phone", "123"), ("phone", "1" * 21), ("email", "x"), ("iban", "DE89"), ("url", "x")],
)
def test_a_malformed_value_names_its_kind(kind: str, value: str) -> None:
    """A value that is not of its kind raises Malformed carrying the kind."""
    with pytest.raises(Malformed) as caught:
        normalise(kind, value)
    assert caught.value.args == (kind,)
