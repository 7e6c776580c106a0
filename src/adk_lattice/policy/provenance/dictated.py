"""Content a consequential call copies word for word from untrusted output.

An injection that cannot redirect a call can still write what it sends: a grounded
recipient gets the attacker's paragraph. With ``ProvenanceGuard(dictated_content=True)``,
a free-text argument that repeats a long run of an untrusted output's words, in order, is
flagged. A run is :data:`MIN_WORDS` words after normalisation (NFKC, case and format
characters folded, punctuation dropped): long enough that a summary, a greeting or a
phrase two texts share by chance does not reach it, short enough that a planted sentence
does. A run the trusted text also holds (the user typed it) is not dictated.

An identifier copied the same way (a payee of a scheme the guard has no reader for) is a
destination: :mod:`.opaque` reads it, and it must be grounded like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from .values import clean

#: The shortest run of an untrusted output's words, in order, that counts as dictated.
MIN_WORDS: Final = 8
_WORD = re.compile(r"\w+")
Run = tuple[str, ...]


def words(text: str) -> list[str]:
    """The words of a text, normalised: NFKC, case and format characters folded."""
    return _WORD.findall(clean(text))


def _runs(seq: list[str], n: int = MIN_WORDS) -> Iterator[Run]:
    for i in range(len(seq) - n + 1):
        yield tuple(seq[i : i + n])


def copied_runs(argument: Iterable[str], trusted: Iterable[str]) -> set[Run]:
    """The runs of an argument's words the trusted texts do not hold: what it could have
    copied from elsewhere. Empty for an argument shorter than :data:`MIN_WORDS` words."""
    runs = {run for text in argument for run in _runs(words(text))}
    if runs:
        for text in trusted:
            runs.difference_update(_runs(words(text)))
            if not runs:
                break
    return runs


def dictated(runs: set[Run], untrusted: Iterable[str]) -> bool:
    """Whether an untrusted text holds one of the runs (one pass over each text)."""
    if not runs:
        return False
    return any(run in runs for text in untrusted for run in _runs(words(text)))
