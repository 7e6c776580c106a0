"""Text folding shared by the detectors: what a pattern should see of attacker-made text.

Two views, both computed in linear time:

- :func:`clean`: NFKC, invisible and format characters removed, look-alike letters of other
  scripts folded to the ASCII letter they imitate (Unicode's confusables data, see
  ``_confusables.py``). Meaning is kept; only disguise is removed.
- :func:`fold`: :func:`clean`, lower-cased, then the obfuscations a renderer or a reader
  sees through: HTML comments and short tags dropped, markdown emphasis marks dropped,
  underscores read as spaces, digits and ``@ $`` inside words read as letters (``1gn0re``),
  and letters spelled out one by one (``i g n o r e``, ``i.g.n.o.r.e``) joined.

Matching runs on both views, so the fold can only add detections.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from ._confusables import FOLD as _LOOKALIKES

#: Zero-width, bidirectional, filler, variation-selector and tag characters: every format
#: (``Cf``) character of Unicode 15 plus invisible fillers that are letters by category.
INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f"
    "\u0890\u0891\u08e2\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_SPACES: Final = re.compile(r"[ \t\u00a0]+")
_TAG: Final = re.compile(r"</?[a-z][a-z0-9]{0,15}(?:\s[^<>\n]{0,80})?/?>")
_EMPHASIS: Final = re.compile(r"[*~`]+")
_WORD: Final = re.compile(r"[a-z0-9@$]+")
_LEET: Final = str.maketrans("013457@$", "oieastas")
_HAS_LEET: Final = re.compile(r"[013457@$]")
#: One letter, one separator, then a lone letter: the separator goes (``i g n o r e``).
_SPELLED: Final = re.compile(r"(?<![a-z0-9])([a-z])[ .\-](?=[a-z](?![a-z0-9]))")


def clean(text: str) -> str:
    """NFKC-fold, drop invisible characters, fold look-alike letters to ASCII.

    Args:
        text: any text.

    Returns:
        The text as a reader sees it, in plain letters (case kept, spacing kept).
    """
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub("", text)
    return text.translate(_LOOKALIKES)


def fold(text: str) -> str:
    """The de-obfuscated, lower-case view of ``text`` that patterns are also run on.

    Args:
        text: any text.

    Returns:
        :func:`clean` of the text, lower-cased, with comments, tags and emphasis marks
        removed, underscores as spaces, in-word digits as letters and spelled-out letters
        joined, runs of spaces collapsed.
    """
    text = _drop_comments(clean(text).lower())
    text = _TAG.sub("", text)
    text = _EMPHASIS.sub("", text).replace("_", " ")
    text = _WORD.sub(_unleet, text)
    text = _SPELLED.sub(r"\1", text)
    return _SPACES.sub(" ", text)


def _unleet(m: re.Match[str]) -> str:
    word = m.group(0)
    if word.isdigit() or not _HAS_LEET.search(word) or not any(c.isalpha() for c in word):
        return word
    return word.translate(_LEET)


def _drop_comments(text: str) -> str:
    """``text`` without ``<!-- ... -->`` comments; an unclosed one runs to the end."""
    start = text.find("<!--")
    if start < 0:
        return text
    out: list[str] = []
    pos = 0
    while start >= 0:
        out.append(text[pos:start])
        end = text.find("-->", start + 4)
        if end < 0:
            return "".join(out)
        pos = end + 3
        start = text.find("<!--", pos)
    out.append(text[pos:])
    return "".join(out)
