"""Banned phrases for model-facing tool text, and the check that finds them.

Tool descriptions and argument schemas reach the model with system-prompt weight, at the
moment it decides what to call, yet they are reviewed as code. Two kinds of phrase in them
push a model against the instructions its app gives it:

- frequency instructions ("use this generously"), which the app's own prompt cannot see
  or countermand;
- genre names for what an argument should hold ("a one-paragraph completion summary"):
  a string argument is a writing prompt, and a genre carries a rhetorical mode that the
  model honours over the persona, because satisfying the schema is a precondition for the
  call to succeed. Name what the text must contain instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ban:
    """One banned phrase and why it is banned.

    Attributes:
        phrase: matched case-insensitively, on word boundaries.
        reason: shown with every finding, so the fix is obvious.
    """

    phrase: str
    reason: str

    def __post_init__(self) -> None:
        if not self.phrase.strip():
            raise ValueError("a ban needs a non-empty phrase")

    def pattern(self) -> re.Pattern[str]:
        """The compiled phrase, on word boundaries, whitespace-tolerant, case-insensitive."""
        words = (re.escape(word) for word in self.phrase.lower().split())
        return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


_FREQUENCY = "a frequency instruction the app's own prompt cannot see or countermand"
_GENRE = "names a genre, not what the text must contain; say what it must contain"

#: The default bans: frequency and genre phrases that push a model against its app's
#: instructions. Extend or replace them: ``bans=(*DEFAULT_BANS, Ban("the codebase", "..."))``.
DEFAULT_BANS: tuple[Ban, ...] = (
    Ban("generously", _FREQUENCY),
    Ban("liberally", _FREQUENCY),
    Ban("as often as possible", _FREQUENCY),
    Ban("as much as possible", _FREQUENCY),
    Ban("at every opportunity", _FREQUENCY),
    Ban("whenever possible", _FREQUENCY),
    Ban("whenever you can", _FREQUENCY),
    Ban("use this tool often", _FREQUENCY),
    Ban("call this tool often", _FREQUENCY),
    Ban("always call this", _FREQUENCY),
    Ban("always use this", _FREQUENCY),
    Ban("never skip", _FREQUENCY),
    Ban("at natural task boundaries", _FREQUENCY),
    Ban("completion summary", _GENRE),
    Ban("executive summary", _GENRE),
    Ban("status update", _GENRE),
    Ban("status report", _GENRE),
    Ban("progress report", _GENRE),
    Ban("progress update", _GENRE),
    Ban("final report", _GENRE),
    Ban("recap", _GENRE),
    Ban("tl;dr", _GENRE),
    Ban("one-paragraph", "prescribes a document shape the app's instructions should choose"),
    Ban("one-sentence", "prescribes a document shape the app's instructions should choose"),
    Ban("one-line summary", "names a genre and a length, not what the text must contain"),
)


def ban_violations(text: str, bans: Iterable[Ban] = DEFAULT_BANS) -> list[str]:
    """One message per banned phrase found in ``text``; empty means clean.

    Args:
        text: model-facing text (see :func:`model_facing_text`).
        bans: the bans to apply (default :data:`DEFAULT_BANS`).

    Returns:
        Messages like ``'"generously": a frequency instruction ...'``, in ban order.
    """
    return [f"{ban.phrase!r}: {ban.reason}" for ban in bans if ban.pattern().search(text)]
