"""Content a consequential call copies word for word from untrusted output.

An injection that cannot redirect a call can still write what it sends: a grounded
recipient gets the attacker's paragraph. With ``ProvenanceGuard(dictated_content=True)``,
a free-text argument that repeats a long run of an untrusted output's words, in order, is
flagged. A run is :data:`MIN_WORDS` words after normalisation (NFKC, case and format
characters folded, punctuation dropped): long enough that a summary, a greeting or a
phrase two texts share by chance does not reach it, short enough that a planted sentence
does. A run the trusted text also holds (the user typed it) is not dictated.

With ``ProvenanceGuard(copied_identifiers=True)``, a free-text argument that carries an
opaque identifier (a run of at least :data:`MIN_IDENTIFIER` letters and digits, both kinds
in it: a wallet, a creditor id, a payment request, a key of any scheme) that an untrusted
output holds and no trusted text does is flagged too: whatever the identifier's kind, the
guard need not know its format to see where it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from .values import clean

#: The shortest run of an untrusted output's words, in order, that counts as dictated.
MIN_WORDS: Final = 8
_WORD = re.compile(r"\w+")
#: The shortest opaque identifier :func:`copied_identifiers` looks for.
MIN_IDENTIFIER: Final = 16
_IDENTIFIER = re.compile(
    rf"(?<![A-Za-z0-9])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{{{MIN_IDENTIFIER},}}(?![A-Za-z0-9])"
)

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


def identifiers(text: str) -> set[str]:
    """The opaque identifiers in a text: runs of at least :data:`MIN_IDENTIFIER` letters
    and digits with both kinds in them."""
    return set(_IDENTIFIER.findall(text))


def copied_identifiers(
    argument: Iterable[str], trusted: Iterable[str], untrusted: Iterable[str]
) -> set[str]:
    """The opaque identifiers of an argument that an untrusted text holds and no trusted
    text does, each text read as :func:`~.values.clean` reads it (format characters such
    as a zero-width space dropped, case folded)."""
    found = {token.casefold() for text in argument for token in identifiers(clean(text))}
    for text in trusted:
        if not found:
            break
        folded = clean(text)
        found = {token for token in found if token not in folded}
    if not found:
        return found
    seen = [clean(text) for text in untrusted]  # a copy with a zero-width space dropped
    return {token for token in found if any(token in text for text in seen)}
