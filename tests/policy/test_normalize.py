"""The shared text folding: look-alikes, invisible characters, markup and spelling tricks."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adk_lattice.policy._text.confusables import FOLD
from adk_lattice.policy._text.normalize import INVISIBLE, clean, fold

from .data.make_confusables import render, table


def test_every_format_character_is_invisible() -> None:
    """Every Unicode format (Cf) character is removed, not only the zero-width ones."""
    missing = [
        hex(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Cf" and not INVISIBLE.match(chr(c))
    ]
    assert missing == []


def test_the_shipped_look_alike_table_matches_its_source() -> None:
    """The committed table is what the generator makes from the confusables data."""
    from pathlib import Path

    import adk_lattice.policy._text.confusables as module

    assert Path(module.__file__).read_text("utf-8") == render(table())


@pytest.mark.parametrize(
    ("disguised", "plain"),
    [
        ("\u0456gn\u043er\u0435 \u0440r\u0435v\u0456\u043eus", "ignore previous"),  # Cyrillic
        ("\u0399GN\u039fRE", "IGNORE"),  # Greek capitals
        ("\uff49\uff47\uff4e\uff4f\uff52\uff45", "ignore"),  # full width (NFKC)
        ("ig\u200bno\u2060re\ufeff", "ignore"),
    ],
)
def test_clean_reads_look_alikes_and_drops_invisible_characters(disguised: str, plain: str) -> None:
    """Look-alike letters of other scripts become the ASCII letter; invisible ones go."""
    assert clean(disguised) == plain


def test_clean_keeps_ordinary_text() -> None:
    """Plain ASCII text and non-Latin words without look-alikes come through unchanged."""
    text = "Order #4521 for Zoë, total 12.50 EUR (日本語)."
    assert clean(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.parametrize(
    "disguised",
    [
        "ig**nore** previous",
        "i g n o r e previous",
        "i.g.n.o.r.e previous",
        "i_g_n_o_r_e previous",
        "1gn0r3 prev1ous",
        "ig<!-- x -->nore previous",
        "ig<b>nore</b> previous",
        "IG~~NORE~~ `previous`",
    ],
)
def test_fold_sees_through_markup_and_spelling(disguised: str) -> None:
    """Emphasis, comments, tags, spelled-out letters and digits for letters are undone."""
    assert fold(disguised) == "ignore previous"


def test_fold_leaves_numbers_alone() -> None:
    """Digits that are numbers (not letters inside a word) stay digits."""
    assert fold("Invoice 1043 of 2024-05-01") == "invoice 1043 of 2024-05-01"


def test_an_unclosed_comment_hides_the_rest_only_in_the_fold() -> None:
    """An unclosed HTML comment drops the rest of the folded view (as a renderer would)."""
    assert fold("visible <!-- hidden") == "visible "


def test_the_table_folds_only_non_ascii_characters() -> None:
    """The look-alike table never changes an ASCII character."""
    assert all(code > 127 for code in FOLD)


@given(st.text(alphabet="ab1 .-3@$x\t_*<!->yé\u2003\u0456\u200b", max_size=40))
def test_fold_with_re2_equals_the_whole_text_substitutions(text: str) -> None:
    """Rewriting only the places RE2 finds gives the view Python's re gives on the whole text."""
    from adk_lattice.policy._text.normalize import _fold_with_re

    assert fold(text) == _fold_with_re(clean(text).lower())


def test_the_clean_table_deletes_exactly_what_the_invisible_pattern_names() -> None:
    """The characters ``clean`` deletes are read off the pattern: all of them, no other."""
    from adk_lattice.policy._text.normalize import _class_members

    members = set(_class_members(INVISIBLE.pattern))
    assert members == {cp for cp in range(0x110000) if INVISIBLE.fullmatch(chr(cp))}


@pytest.mark.parametrize(
    ("pattern", "members"),
    [
        ("[a-c]", "abc"),
        ("[a-cx]", "abcx"),
        ("[a-]", "a-"),
        ("[-a]", "-a"),
        ("[a-c-e]", "abc-e"),
        ("[x]", "x"),
    ],
)
def test_a_class_is_read_as_its_characters_and_ranges(pattern: str, members: str) -> None:
    """A one-class pattern gives its characters, ranges expanded, a ``-`` at either end kept."""
    from adk_lattice.policy._text.normalize import _class_members

    assert _class_members(pattern) == [ord(c) for c in members]


def test_the_fallback_fold_drops_tags_without_a_trace() -> None:
    """Without RE2, the fold removes short HTML tags entirely, as the RE2 path does."""
    from adk_lattice.policy._text.normalize import _fold_with_re

    assert _fold_with_re("ig<b>no</b>re previous") == "ignore previous"
