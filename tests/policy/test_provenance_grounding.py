"""Which trusted sources ground a value: texts, whole fields, echoes, a caller's hashes;
and how tokens are cut out of trusted text."""

from __future__ import annotations

import pytest

from adk_lattice.policy.provenance import values as provenance_values
from adk_lattice.policy.provenance.taint import token_hash
from adk_lattice.policy.provenance.values import Grounding, Malformed, normalise, ungrounded


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test extracts its own tokens: the module's memo would hand it earlier results."""
    provenance_values._MEMO.clear()


def test_a_trusted_text_is_not_also_taken_whole() -> None:
    """Two amounts in the user's words are not run together into a third."""
    assert ungrounded(Grounding(["10 20"]), "number", "1020")


def test_a_trusted_tools_field_is_taken_whole() -> None:
    """A trusted tool's field value with a space in it is one id."""
    grounding = Grounding([], fields=[("Team Room", None, ("list rooms",))])
    assert not ungrounded(grounding, "id", "team room")


def test_the_tokens_include_a_whole_value() -> None:
    """The tokens handed on hold a trusted field's whole string besides its parts."""
    tokens = Grounding([], whole=["Team Room"]).tokens("id")
    assert tokens == frozenset({"team", "room", "teamroom"})


def test_a_string_seen_as_text_and_as_a_field_still_grounds_its_whole() -> None:
    """The same string as user text and as a trusted field grounds the field's whole id."""
    grounding = Grounding(["Team Room"], whole=["Team Room"])
    assert not ungrounded(grounding, "id", "team room")


def test_a_callers_hashes_ground_structured_values_but_never_free_text() -> None:
    """Hashed tokens from a caller ground an email; a hashed phrase never grounds text."""
    hashes = {token_hash("s1", "email", "bob@example.com"), token_hash("s1", "text", "wire it")}
    grounding = Grounding([], hashed={"s1": frozenset(hashes)}, hasher=token_hash)
    assert not ungrounded(grounding, "email", "Bob@Example.com")
    assert ungrounded(grounding, "text", "wire it")


def test_an_echoed_phone_number_does_not_ground_its_other_form() -> None:
    """A field echoing a national number its call was given does not ground its +44 form."""
    grounding = Grounding([], fields=[("calling +44 7700 900123", "text", ("07700 900123",))])
    assert ungrounded(grounding, "phone", "+44 7700 900123")


def test_an_address_led_by_a_dot_is_another_address() -> None:
    """'.bob@example.com' in trusted text does not ground bob@example.com."""
    assert ungrounded(Grounding(["write to .bob@example.com"]), "email", "bob@example.com")


def test_an_account_number_is_not_cut_at_a_letter_x() -> None:
    """The part of an unchecked account number before an X is not grounded."""
    grounding = Grounding(["acct AB12CDEFGHIJKLXMNOP"])
    assert not ungrounded(grounding, "iban", "AB12CDEFGHIJKLXMNOP")
    assert ungrounded(grounding, "iban", "AB12CDEFGHIJKL")


def test_ids_in_brackets_in_a_list_are_each_grounded() -> None:
    """'(ch_1),(ch_2)' grounds ch_1 and ch_2, the brackets folded away."""
    grounding = Grounding(["charges (ch_1),(ch_2)"])
    assert not ungrounded(grounding, "id", ["ch_1", "ch_2"])


def test_an_id_of_marks_only_is_never_grounded() -> None:
    """An id that is only punctuation is not grounded by paths and lists in trusted text."""
    assert ungrounded(Grounding(["see a/b/ and x,y,"]), "id", "#")


@pytest.mark.parametrize(("kind", "value"), [("email", "\u200b "), ("number", "twelve")])
def test_an_empty_or_non_numeric_value_names_its_kind(kind: str, value: str) -> None:
    """A value blank after folding, or a number that is none, raises Malformed with its kind."""
    with pytest.raises(Malformed) as caught:
        normalise(kind, value)
    assert caught.value.args == (kind,)
