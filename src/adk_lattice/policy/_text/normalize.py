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
from collections.abc import Iterable
from typing import AnyStr, Final

from .confusables import FOLD as _LOOKALIKES
from .engine import finditer_spans, re2_bytes, to_re2

#: Zero-width, bidirectional, filler, variation-selector and tag characters: every format
#: (``Cf``) character of Unicode 15 plus invisible fillers that are letters by category.
INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f"
    "\u0890\u0891\u08e2\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
#: Runs of spaces to collapse: two or more, or a lone tab or no-break space (a single
#: space is left alone, so ordinary prose costs no substitution).
_SPACES: Final = re.compile(r"[ \t\u00a0]{2,}|[\t\u00a0]")
_TAG: Final = re.compile(r"</?[a-z][a-z0-9]{0,15}(?:\s[^<>\n]{0,80})?/?>")
_EMPHASIS: Final = re.compile(r"[*~`]+")
_LEET: Final = str.maketrans("013457@$", "oieastas")
_LEET_BYTES: Final = bytes.maketrans(b"013457@$", b"oieastas")
#: A word (a run of ``[a-z0-9@$]``) holding a letter and a digit, ``@`` or ``$`` read as one:
#: found only at a word's start, each look-ahead stays inside the word (linear time).
_LEET_WORD: Final = re.compile(
    r"(?<![a-z0-9@$])(?=[0-9@$]*[a-z])(?=[a-z2689]*[013457@$])[a-z0-9@$]+"
)
#: One letter, one separator, then a lone letter: the separator goes (``i g n o r e``).
_SPELLED: Final = re.compile(r"(?<![a-z0-9])([a-z])[ .\-](?=[a-z](?![a-z0-9]))")

#: With RE2, the same steps on UTF-8 bytes: one linear pass finds the places to rewrite.
#: Tags are matched as UTF-8 (``[^<>\n]{0,80}`` counts characters); the others use only
#: ASCII classes, so they are matched byte by byte (Latin-1), which gives the same places.
_TAG_RUN: Final = re2_bytes(to_re2(_TAG.pattern))
#: A word holding a letter and a digit, ``@`` or ``$`` read as one (lower case, no look-around).
LEET_WORD: Final = (
    r"[a-z0-9@$]*(?:[a-z][a-z0-9@$]*[013457@$]|[013457@$][a-z0-9@$]*[a-z])[a-z0-9@$]*"
)
#: A whole word (with the character either side) that :data:`LEET_WORD` matches, unless it is
#: a timestamp's piece: two or more digits, then one ``t`` or ``z``, then digits (``30t12``,
#: ``00z`` of ``2026-11-30t12:00:00z``), where no word can be spelled. Cases: a letter other
#: than ``t``/``z`` with a leet character; ``@``/``$`` with any letter; digits with two or more
#: ``t``/``z``; digits with one ``t``/``z`` after at most one digit.
_W: Final = "[a-z0-9@$]*"
_E: Final = "[0-9tz]*"
LEET_WORD_NOT_TIME: Final = (
    r"(?:\A|[^a-z0-9@$])(?:"
    f"{_W}(?:[a-su-y]{_W}[013457@$]|[013457@$]{_W}[a-su-y]){_W}"
    f"|{_W}(?:[a-z]{_W}[@$]|[@$]{_W}[a-z]){_W}"
    f"|{_E}[013457]{_E}[tz]{_E}[tz]{_E}|{_E}[tz]{_E}[013457]{_E}[tz]{_E}"
    f"|{_E}[tz]{_E}[tz]{_E}[013457]{_E}"
    r"|[013457][tz][0-9]*|[0-9]?[tz][0-9]*[013457][0-9]*"
    r")(?:[^a-z0-9@$]|\Z)"
)
#: Consecutive words to unleet with what separates them (no digit, ``@`` or ``$`` in it):
#: a window is translated whole.
_LEET_RUN: Final = re2_bytes(f"{LEET_WORD}(?:[^a-z0-9@$]+{LEET_WORD})*", latin1=True)
_SPELLED_RUN: Final = re2_bytes(
    r"(?:\A|[^a-z0-9])(?:[a-z][ .\-])+[a-z](?:[^a-z0-9]|\z)", latin1=True
)
_SPACE_RUN: Final = re2_bytes(r"[ \t]{2,}|\t", latin1=True)


def _class_members(pattern: str) -> list[int]:
    """The code points of a one-class pattern ``[...]`` made of characters and ranges."""
    body, i = pattern[1:-1], 0
    out: list[int] = []
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            out += range(ord(body[i]), ord(body[i + 2]) + 1)
            i += 3
        else:
            out.append(ord(body[i]))
            i += 1
    return out


#: ``str.translate`` table of :func:`clean`: invisible characters deleted, look-alikes folded.
_CLEAN: Final[dict[int, str | None]] = {
    **dict.fromkeys(_class_members(INVISIBLE.pattern)),
    **_LOOKALIKES,
}


_CLEAN_CHARS: Final = frozenset(map(chr, _CLEAN))


def clean(text: str) -> str:
    """NFKC-fold, drop invisible characters, fold look-alike letters to ASCII.

    Args:
        text: any text.

    Returns:
        The text as a reader sees it, in plain letters (case kept, spacing kept).
    """
    if text.isascii():
        return text  # NFKC, the invisible and the look-alike characters are all non-ASCII
    text = unicodedata.normalize("NFKC", text)
    # One translate drops the invisible characters and folds the look-alikes, when a linear
    # scan finds any (a table look-up per character costs more than the scan).
    return text if _CLEAN_CHARS.isdisjoint(text) else text.translate(_CLEAN)


def fold(text: str, *, leet: bool = True, spelled: bool = True, cleaned: str | None = None) -> str:
    """The de-obfuscated, lower-case view of ``text`` that patterns are also run on.

    Args:
        text: any text.
        leet: look for in-word digits to read as letters; False only when a caller knows
            the text holds none (the step then changes nothing, and costs no pass).
        spelled: look for letters spelled out one by one; False likewise.
        cleaned: :func:`clean` of ``text``, when the caller has it (not computed twice).

    Returns:
        :func:`clean` of the text, lower-cased, with comments, tags and emphasis marks
        removed, underscores as spaces, in-word digits as letters and spelled-out letters
        joined, runs of spaces collapsed.
    """
    text = (clean(text) if cleaned is None else cleaned).lower()
    if _TAG_RUN is None:
        return _fold_with_re(text)
    # On the UTF-8 bytes: one linear RE2 pass per step finds the few places to rewrite,
    # and whole-text steps are C loops (find, translate, replace), so no step costs more
    # per character however many marks an attacker packs in.
    raw = _drop_comments(text.encode("utf-8", "surrogatepass"))
    if b"<" in raw:
        raw = _cut(raw, finditer_spans(_TAG_RUN, raw))
    raw = raw.translate(None, b"*~`").replace(b"_", b" ")
    if leet:
        raw = _unleet(raw)
    if spelled:
        raw = _join_spelled(raw)
    if b"  " in raw or b"\t" in raw:
        raw = _cut(raw, finditer_spans(_SPACE_RUN, raw), b" ")
    return raw.decode("utf-8", "surrogatepass")


def _fold_with_re(text: str) -> str:
    """:func:`fold` after lower-casing, with Python's ``re`` (without RE2)."""
    text = _EMPHASIS.sub("", _TAG.sub("", _drop_comments(text))).replace("_", " ")
    text = _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)
    return _SPACES.sub(" ", _SPELLED.sub(r"\1", text))


def _cut(raw: bytes, spans: Iterable[tuple[int, int]], put: bytes = b"") -> bytes:
    """``raw`` with each of the given spans (ascending, not overlapping) replaced by ``put``."""
    out: list[bytes] = []
    done = 0
    for start, end in spans:
        out += (raw[done:start], put)
        done = end
    return b"".join((*out, raw[done:])) if out else raw


def _unleet(raw: bytes) -> bytes:
    """Words holding letters and ``0 1 3 4 5 7 @ $`` read with letters instead."""
    out: list[bytes] = []
    done = 0
    for start, end in finditer_spans(_LEET_RUN, raw):
        out += (raw[done:start], raw[start:end].translate(_LEET_BYTES))
        done = end
    return b"".join((*out, raw[done:])) if out else raw


def _join_spelled(raw: bytes) -> bytes:
    """Letters spelled out one by one (``i g n o r e``) joined into words."""
    out: list[bytes] = []
    done = pos = 0
    while (found := next(finditer_spans(_SPELLED_RUN, raw, pos), None)) is not None:
        start, end = found
        # A window is a run of lone letters, each but the last followed by one separator,
        # with a context byte before (unless at the start) and after (unless at the end).
        # Every letter of the run is lone, so every separator goes. The context byte a
        # window shares with the previous one is emitted once.
        window = raw[start:end]
        lead = 0 if 97 <= window[0] <= 122 else 1
        trail = len(window) - (0 if 97 <= window[-1] <= 122 else 1)
        piece = window[:lead] + window[lead:trail:2] + window[trail:]
        out += (raw[done : max(start, done)], piece[max(0, done - start) :])
        done = end
        pos = end - 1  # the trailing context may lead the next run
    return b"".join((*out, raw[done:])) if out else raw


def _drop_comments(text: AnyStr) -> AnyStr:
    """``text`` without ``<!-- ... -->`` comments; an unclosed one runs to the end."""
    opening, closing = ("<!--", "-->") if isinstance(text, str) else (b"<!--", b"-->")
    start = text.find(opening)
    if start < 0:
        return text
    out: list[AnyStr] = []
    pos = 0
    while start >= 0:
        out.append(text[pos:start])
        end = text.find(closing, start + 4)
        if end < 0:
            break
        pos = end + 3
        start = text.find(opening, pos)
    else:
        out.append(text[pos:])
    return text[:0].join(out)
