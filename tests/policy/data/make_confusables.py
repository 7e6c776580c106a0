"""Generate ``src/adk_lattice/policy/_text/confusables.py`` from Unicode's confusables data.

The data comes from the package **confusable-homoglyphs 3.3.1** (MIT licence), which ships
Unicode's ``confusables.txt`` (UTS #39) as JSON. Kept: single characters that look like one
ASCII letter and that NFKC leaves alone (NFKC already folds full-width and mathematical
letters to ASCII). Usage (from the repository root, with the dev extra installed)::

    python tests/policy/data/make_confusables.py > src/adk_lattice/policy/_text/confusables.py
"""

from __future__ import annotations

import json
import string
import sys
import unicodedata
from importlib import resources

HEADER = '''"""Look-alike letters folded to the ASCII letter they imitate (generated; do not edit).

Made by ``tests/policy/data/make_confusables.py`` from Unicode's confusables data (UTS #39)
as shipped in confusable-homoglyphs 3.3.1: characters of other scripts (Cyrillic, Greek,
Cherokee, Armenian, ...) that look like one ASCII letter and that NFKC does not fold.
"""

from typing import Final

#: Pairs: a look-alike character followed by the ASCII letter it imitates.
_PAIRS: Final = (
'''
FOOTER = """)

#: ``str.translate`` table from each look-alike to its ASCII letter.
FOLD: Final[dict[int, str]] = {ord(_PAIRS[i]): _PAIRS[i + 1] for i in range(0, len(_PAIRS), 2)}
"""


def table() -> dict[str, str]:
    """Each look-alike character and the ASCII letter it imitates, in a stable order."""
    data = json.loads(
        resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    )
    candidates: dict[str, list[str]] = {}
    for letter in string.ascii_lowercase + string.ascii_uppercase:
        for entry in data.get(letter, []):
            char = entry["c"]
            if len(char) != 1 or char.isascii():
                continue
            if unicodedata.normalize("NFKC", char) != char:
                continue  # NFKC gets there first
            candidates.setdefault(char, []).append(letter)
    fold: dict[str, str] = {}
    for char, letters in sorted(candidates.items()):
        # Unicode's skeleton of a capital I is "l"; a capital look-alike still means "I".
        same_case = [a for a in letters if a.isupper() == char.isupper()]
        letter = (same_case or letters)[0]
        fold[char] = "I" if letter == "l" and char.isupper() else letter
    return fold


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def render(fold: dict[str, str]) -> str:
    """The module's source text."""
    items = [_escape(c) + a for c, a in fold.items()]
    lines = []
    for i in range(0, len(items), 10):
        lines.append('    "' + "".join(items[i : i + 10]) + '"\n')
    return HEADER + "".join(lines) + FOOTER


if __name__ == "__main__":
    sys.stdout.write(render(table()))
