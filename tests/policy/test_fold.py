"""The folded view: what it undoes, and spans mapping back to the original text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii._fold import fold


def test_plain_text_needs_no_view() -> None:
    """Text with nothing to fold gives no view, so it is scanned once."""
    assert fold("plain text, nothing hidden: jane.doe@example.com") is None


def test_a_folded_span_maps_to_the_obfuscated_original() -> None:
    """A span of the folded text maps back over the characters that produced it."""
    text = "x jane (at) exa\u200bmple (dot) com y"
    view = fold(text)
    assert view is not None
    assert view.text == "x jane@example.com y"
    start = view.text.index("jane")
    a, b = view.original(start, start + len("jane@example.com"))
    assert text[a:b] == "jane (at) exa\u200bmple (dot) com"


def test_spaces_can_be_dropped_instead_of_kept() -> None:
    """With spaces="", a no-break space inside a value disappears from the view."""
    view = fold("jane.doe@example\u00a0.com", spaces="")
    assert view is not None and view.text == "jane.doe@example.com"


def test_word_underscores_are_kept_and_markdown_ones_dropped() -> None:
    """An underscore inside a word stays; one at a word edge (markdown) goes."""
    view = fold("__4111__ sk_live_x")
    assert view is not None and view.text == "4111 sk_live_x"


@given(st.text(max_size=200))
def test_every_span_maps_inside_the_original(text: str) -> None:
    """Any folded span maps to a non-empty, in-bounds span of the original text."""
    view = fold(text)
    if view is None:
        return
    for start in range(len(view.text)):
        for end in (start + 1, len(view.text)):
            a, b = view.original(start, end)
            assert 0 <= a < b <= len(text)


@given(st.text(alphabet="ab_ (at)[dot]%40z\t\n*`~x", max_size=40), st.sampled_from([" ", ""]))
def test_the_re2_pass_folds_exactly_as_the_pattern_alone(text: str, spaces: str) -> None:
    """Finding the places to rewrite with RE2 first gives the view the pattern alone gives."""
    from adk_lattice.policy.pii import _fold

    got = fold(text, spaces=spaces)
    with_re2 = _fold._specials
    try:
        _fold._specials = _fold._SPECIAL.finditer  # type: ignore[assignment]
        expected = fold(text, spaces=spaces)
    finally:
        _fold._specials = with_re2  # type: ignore[assignment]
    assert got == expected


@pytest.mark.parametrize(
    ("char", "kept"),
    [
        ("\u061c", ""),  # Arabic letter mark (format)
        ("\U000e0041", ""),  # a tag character (format)
        ("\u2028", " "),  # line separator
        ("\u2029", " "),  # paragraph separator
        ("\u3000", " "),  # ideographic space
    ],
)
def test_format_characters_go_and_unicode_separators_read_as_spaces(char: str, kept: str) -> None:
    """In the view, a format character is dropped and a line, paragraph or wide space is a space."""
    view = fold(f"a{char}b")
    assert view is not None and view.text == f"a{kept}b"
    assert view.original(0, len(view.text)) == (0, 3)


@given(
    st.text(
        alphabet="ab1 _.(at)%4\t\n\r\x0b\x1c\x85*\u00a0\u2009\u200b\u0430\u0301\u017f", max_size=40
    ),
    st.sampled_from([" ", ""]),
)
def test_the_in_place_view_equals_the_place_by_place_fold(text: str, spaces: str) -> None:
    """Folding text whose offsets cannot move (line breaks as spaces) gives the full fold."""
    from adk_lattice.policy.pii import _fold

    got, expected = fold(text, spaces=spaces), _fold._fold_places(text, spaces)
    assert (got is None) == (expected is None)
    if got is None or expected is None:
        return
    assert got.text == expected.text
    for start in range(len(got.text)):
        assert got.original(start, start + 1) == expected.original(start, start + 1)
        assert got.original(start, len(got.text)) == expected.original(start, len(got.text))


def test_line_breaks_fold_in_place() -> None:
    """Line breaks and tabs become spaces without moving an offset."""
    view = fold("card\n4111\t1111")
    assert view is not None and view.text == "card 4111 1111"
    assert view.original(5, 14) == (5, 14)


@given(st.text(alphabet="ab1 _*`~\n\t.x", max_size=40))
def test_dropping_mark_runs_equals_the_place_by_place_fold(text: str) -> None:
    """Markdown marks dropped run by run give the view and spans of the full fold."""
    from adk_lattice.policy.pii import _fold

    got, expected = fold(text), _fold._fold_places(text, " ")
    assert (got is None) == (expected is None)
    if got is None or expected is None:
        return
    assert got.text == expected.text
    for start in range(len(got.text)):
        for end in (start + 1, len(got.text)):
            assert got.original(start, end) == expected.original(start, end)


def test_a_value_broken_by_marks_is_redacted_and_capitals_around_it_kept() -> None:
    """Markdown marks inside a value do not hide it, and the text around it stays as written."""
    from adk_lattice.policy import RedactPII

    redacted, _ = RedactPII().scrub("MAX jane.d**oe@example.com XX")
    assert redacted == "MAX [REDACTED:EMAIL] XX"


def test_an_escape_left_as_written_maps_one_to_one() -> None:
    """%0A is not decoded, so a span inside it maps to those characters, not the whole escape."""
    view = fold("%0A\u200bx")
    assert view is not None and view.text == "%0Ax"
    assert view.original(1, 3) == (1, 3)


def test_a_full_width_address_is_redacted() -> None:
    """An address in full-width letters (NFKC folds them) is found and redacted."""
    wide = "".join(chr(ord(c) + 0xFEE0) for c in "jane@example.com")
    assert RedactPII().scrub(f"mail {wide} please")[0] == "mail [REDACTED:EMAIL] please"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("mail jane%0A%40example.com", "mail [REDACTED:EMAIL]"),
        ("to %0Ajane%40example.com", "to [REDACTED:EMAIL]"),
    ],
)
def test_an_encoded_control_character_stays_part_of_an_encoded_address(
    text: str, redacted: str
) -> None:
    """%0A is left as written (not a line break), so the %40 address around it is redacted whole."""
    assert RedactPII().scrub(text)[0] == redacted


def test_a_lone_surrogate_beside_a_line_separator_is_scanned() -> None:
    """Text holding a lone surrogate and a line separator is folded, its address redacted."""
    out, _ = RedactPII().scrub("a\u2028b \ud800 jane@example.com")
    assert out == "a\u2028b \ud800 [REDACTED:EMAIL]"
