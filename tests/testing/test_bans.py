"""Banned phrases in model-facing text."""

from __future__ import annotations

import pytest

from adk_lattice.testing import DEFAULT_BANS, Ban, ban_violations


def test_banned_phrase_is_reported_with_its_reason() -> None:
    """A banned phrase in the text gives one message with the phrase and its reason."""
    (message,) = ban_violations("Call this tool generously.")
    assert message.startswith("'generously': ")
    assert "frequency" in message


def test_neutral_text_is_clean() -> None:
    """Text naming what an argument must contain has no violations."""
    assert ban_violations("findings: the evidence found and the change proposed") == []


def test_matching_ignores_case_and_spacing() -> None:
    """Matching is case-insensitive and tolerates line breaks between words."""
    assert len(ban_violations("Write a COMPLETION\n  Summary here")) == 1


def test_phrase_inside_a_longer_word_is_not_a_match() -> None:
    """A banned word inside another word (recap in recapture) does not match."""
    assert ban_violations("recapture the flag") == []


def test_each_found_ban_reports_once() -> None:
    """Two different banned phrases give two messages, each once."""
    found = ban_violations("a status update, a status update, and a one-paragraph recap")
    assert len(found) == 3


def test_custom_bans_replace_the_default() -> None:
    """Passing bans checks those phrases instead of the defaults."""
    bans = [Ban("the codebase", "assumes a repository")]
    assert ban_violations("search the codebase generously", bans) == [
        "'the codebase': assumes a repository"
    ]


def test_empty_phrase_is_refused() -> None:
    """A ban with an empty phrase is a ValueError."""
    with pytest.raises(ValueError, match="phrase"):
        Ban("  ", "nothing")


def test_every_default_ban_has_a_reason_and_matches_itself() -> None:
    """Each default ban explains itself and fires on its own phrase."""
    for ban in DEFAULT_BANS:
        assert ban.reason
        assert ban_violations(f"x {ban.phrase} y", [ban]) != []
