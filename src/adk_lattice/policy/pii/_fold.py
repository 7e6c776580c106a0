"""A folded view of text for PII detection, with a map back to the original offsets.

Obfuscation hides a value from a pattern without hiding it from a reader: a zero-width
space inside an e-mail, a no-break space or a line break inside a card number, markdown
emphasis around its groups, ``jane (at) example (dot) com``, ``%40`` for ``@``, full-width
digits. The folded view undoes these, so the ordinary detectors find the value; every
folded span maps back to the original span that produced it, so the redaction replaces
what the reader would have seen, obfuscation included. Detectors run on the original text
too (folding drops characters some values legitimately contain, such as ``_`` at a word
edge), and the two sets of spans are merged.

One linear pass: a single bounded regex finds what to rewrite, everything between is
copied as it is.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from .._text.engine import finditer_spans, re2_bytes, to_re2

_PRINTABLE_ASCII: Final = frozenset(range(0x21, 0x7F))
#: The non-ASCII spaces (a no-break space may sit inside a value).
_WIDE: Final = "".join(
    chr(c) for c in (0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)
)

# Every alternative is bounded, so the scan is linear in the text.
_SPECIAL: Final = re.compile(
    r"(?P<sep>[ \t]{0,3}[(\[{<][ \t]{0,3}(?P<word>at|dot)[ \t]{0,3}[)\]}>][ \t]{0,3})"
    r"|%(?P<hex>[0-9A-Fa-f]{2})"
    r"|(?P<space>\s{2,}|[\t\n\r\f\v])"
    r"|(?P<mark>[*`~]+|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))"
    r"|(?P<zw>[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]+)"
    r"|(?P<other>[^\x00-\x7f])",
    re.IGNORECASE,
)


#: The same places found by one linear RE2 pass over ASCII text (an ``_`` is then checked
#: for the word edge); each is read again by ``_SPECIAL`` at that offset. Most text has
#: few (line breaks), so the costly per-position scan of ``_SPECIAL`` never runs on it.
_SPECIAL_RUN: Final = re2_bytes(
    to_re2(
        r"[ \t]{0,3}[(\[{<][ \t]{0,3}(?i:at|dot)[ \t]{0,3}[)\]}>][ \t]{0,3}"
        r"|%[0-9A-Fa-f]{2}|\s{2,}|[\t\n\r\f\v]|[*`~]+|_"
    )
)


#: What makes a fold more than line breaks and tabs read as spaces: any other place of
#: ``_SPECIAL`` that rewrites (a bracketed ``at``/``dot``, ``%XX``, a run of spaces, a mark, an
#: ``_`` at a word edge), or a non-ASCII space, format or ``\x85`` character. One RE2 pass
#: over the UTF-8 bytes; where none occurs, the folded text keeps every offset.
SHIFTS: Final = (
    to_re2(
        r"[(\[{<][ \t]{0,3}(?i:at|dot)[ \t]{0,3}[)\]}>]|%[0-9A-Fa-f]{2}|\s{2,}|[*`~]"
        r"|(?:\A|[^A-Za-z0-9])_|_(?:[^A-Za-z0-9]|\z)"
    )
    + r"|[\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\p{Cf}]"
)
_SHIFTS: Final = re2_bytes(SHIFTS)
_LINE_BREAKS: Final = "\t\n\r\f\v"


def _in_place(text: str, shifts: bool | None) -> str | None:
    """The folded text when folding moves no offset (only ``[\\t\\n\\r\\f\\v]`` become
    spaces), else None (folding rewrites more, or RE2 is not installed). ``shifts``: whether
    :data:`SHIFTS` occurs in the text, when the caller has looked (None: look here)."""
    if _SHIFTS is None or shifts:
        return None
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        return None
    if shifts is None and _SHIFTS.search(text.encode("utf-8", "surrogatepass")) is not None:
        return None
    for c in _LINE_BREAKS:
        if c in text:
            text = text.replace(c, " ")
    return text


def _specials(text: str) -> Iterator[re.Match[str]]:
    """``_SPECIAL.finditer(text)``, found with RE2 where it can be."""
    if _SPECIAL_RUN is None or not text.isascii():
        yield from _SPECIAL.finditer(text)
        return
    pos = 0
    for found in _SPECIAL_RUN.finditer(text.encode("ascii")):
        if found.start() < pos:
            continue
        m = _SPECIAL.match(text, found.start())
        if m is not None:
            yield m
            pos = m.end()


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded text and how to map its spans back to the original.

    Attributes:
        text: the folded text.
        starts: the folded offset where each segment starts (sorted).
        segments: per segment, ``(original start, original end, copied)``; a copied
            segment maps one to one, a rewritten one maps as a whole.
    """

    text: str
    starts: tuple[int, ...]
    segments: tuple[tuple[int, int, bool], ...]

    def _at(self, pos: int) -> tuple[int, int, int, bool]:
        i = bisect.bisect_right(self.starts, pos) - 1
        return (self.starts[i], *self.segments[i])

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span that the folded span ``[start, end)`` came from."""
        f0, o0, o1, copied = self._at(start)
        first = o0 + (start - f0) if copied else o0
        f0, o0, o1, copied = self._at(end - 1)
        last = o0 + (end - 1 - f0) + 1 if copied else o1
        return first, last


def _rewrite(m: re.Match[str], spaces: str) -> str:
    if m.group("word") is not None:
        return "@" if m.group("word").lower() == "at" else "."
    if m.group("hex") is not None:
        code = int(m.group("hex"), 16)
        return chr(code) if code in _PRINTABLE_ASCII else m.group(0)
    if m.group("space") is not None:  # a run of only no-break spaces follows ``spaces``
        return " " if m.group("space").strip(_WIDE) else spaces
    if m.group("mark") is not None or m.group("zw") is not None:
        return ""
    char = m.group("other")
    category = unicodedata.category(char)
    if category == "Cf":  # zero-width, bidi controls, soft hyphen
        return ""
    if category in ("Zs", "Zl", "Zp"):
        return spaces
    return unicodedata.normalize("NFKC", char)


def fold(text: str, *, spaces: str = " ", shifts: bool | None = None) -> Folded | None:
    """The folded view of ``text``, or None when folding would change nothing.

    Args:
        text: any text.
        spaces: what a non-ASCII space becomes (a space, or nothing: a no-break space may
            separate groups of a card number or sit inside an e-mail address).
        shifts: whether :data:`SHIFTS` occurs in ``text``, when the caller's own RE2 pass
            looked (None: this function looks).

    Returns:
        A :class:`Folded` view, or None.
    """
    same = _in_place(text, shifts)
    if same is not None:  # most text: one RE2 pass, offsets unchanged
        return Folded(same, (0,), ((0, len(text), True),)) if same != text else None
    if _MOVES is not None and text.isascii() and _MOVES.search(text.encode("ascii")) is None:
        return _drop_marks(text)  # markdown marks the only places that move offsets
    return _fold_places(text, spaces)


#: The places of ``_SPECIAL`` that move offsets, bar runs of ``* ` ~`` (ASCII text).
_MOVES: Final = re2_bytes(
    r"[(\[{<][ \t]{0,3}(?i:at|dot)[ \t]{0,3}[)\]}>]|%[0-9A-Fa-f]{2}|[ \t-\r\x1c-\x1f]{2,}"
    r"|(?:\A|[^A-Za-z0-9])_|_(?:[^A-Za-z0-9]|\z)",
    latin1=True,
)
_MARKS: Final = re2_bytes(r"[*`~]+", latin1=True)


def _drop_marks(text: str) -> Folded | None:
    """:func:`fold` of ASCII text whose only places that move offsets are runs of marks:
    the runs found by RE2, one segment between each two, the rest C loops."""
    raw = text.encode("ascii")
    starts: list[int] = []
    segments: list[tuple[int, int, bool]] = []
    pos = out = 0
    for start, end in finditer_spans(_MARKS, raw):
        if start > pos:
            starts.append(out)
            segments.append((pos, start, True))
            out += start - pos
        pos = end
    if pos < len(text):
        starts.append(out)
        segments.append((pos, len(text), True))
    folded = raw.translate(None, b"*`~").decode("ascii")
    for c in _LINE_BREAKS:
        if c in folded:
            folded = folded.replace(c, " ")
    return None if folded == text else Folded(folded, tuple(starts), tuple(segments))


def _fold_places(text: str, spaces: str) -> Folded | None:
    """:func:`fold` place by place (each rewrite its own segment)."""
    pieces: list[str] = []
    starts: list[int] = []
    segments: list[tuple[int, int, bool]] = []
    pos = out = 0
    changed = False
    for m in _specials(text):
        if m.start() > pos:
            pieces.append(text[pos : m.start()])
            starts.append(out)
            segments.append((pos, m.start(), True))
            out += m.start() - pos
        new = _rewrite(m, spaces)
        if new != m.group(0):
            changed = True
        if new:
            pieces.append(new)
            starts.append(out)
            segments.append((m.start(), m.end(), new == m.group(0)))
            out += len(new)
        pos = m.end()
    if not changed:
        return None
    if pos < len(text):
        pieces.append(text[pos:])
        starts.append(out)
        segments.append((pos, len(text), True))
    return Folded("".join(pieces), tuple(starts), tuple(segments))
