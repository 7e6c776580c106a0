"""Opaque tokens and identifiers: the destinations of schemes the guard has no reader for.

The destination scan reads the kinds it knows (links, email addresses, IBANs, wallets,
accounts, phone numbers, handles). A payee or a place can be named in a scheme it does not
know: a coin's address, a till number, a parcel locker's code, a what3words address, Morse
code. Such a name is no word, date or amount, so while the session is tainted a free-text
argument of a consequential call that carries one must find it in trusted text, as a
destination must (``ProvenanceGuard(opaque_identifiers=True)``, the default): whatever its
scheme, the guard need not know its format to see that nobody trusted wrote it.

:func:`opaque_tokens` (the default) reads every chunk between spaces that no word, date,
time or amount is: five or more digits, letters and digits interleaved, a mark that joins
letters or digits, a handle's sigil, letters spelled apart, Morse code; each is compared as
:func:`fold` writes it, its letters and digits as whole parts of a trusted text's.
:func:`identifiers` (``opaque_identifiers="long"``) reads only long identifiers.

An identifier is (after NFKC, format characters dropped and look-alike letters of other
scripts read as the Latin letters they copy):

- a run of at least :data:`MIN_MIXED` letters and digits with both kinds in it
  (``r4CnJJTGRj3JXkWrZuDDGzJnHC96v9nVdb``);
- the same written in groups (``r4Cn JJTG Rj3J XkWr ZuDD GzJn HC96 v9nV``): at
  least three groups of 2 to 12 letters and digits apart by one space, hyphen, dot or
  underscore, each group capitals and digits alone or one no word is (a digit in it, or a
  capital after a small letter), more than half of them the latter (so a sentence of words
  and numbers, or a headline in capitals, is not one);
- a run of at least :data:`MIN_DIGITS` digits alone, plain or in groups (a CLABE, a
  boleto's digitable line, a long account number): longer than a phone number, a card or an
  order number;

not a run of hexadecimal digits alone with letters in it (a commit hash, a checksum: no
payment scheme writes an address so but Ethereum's, after ``0x``, which the wallet reader
reads), nor part of a destination a reader found in the same text (an IBAN, a
wallet, a link's path: that reader compares it in its own forms), nor a long base64 run
(binary data; base64 that decodes to text is read as that text).

It is compared as its letters and digits alone, case kept (Base58 is case-sensitive): it is
grounded when a trusted text holds those characters in that order with anything but
letters and digits between them (the user may type it grouped and the model write it
whole), or a trusted field's value holds them. Shorter references (``INV-2291``, a
tracking number ``1Z999AA10123456784``), words, dates and amounts are not identifiers.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Final

from .reveal import revealed, shown

#: The shortest run of letters and digits (both kinds in it) read as an identifier: the
#: shortest Bitcoin-family address. Shorter runs are references' lengths (a parcel's
#: tracking number, a vehicle's VIN, a gift card's or a licence's key:
#: ``benchmarks/forwarded_ids.py``), and the payee schemes that short have readers.
MIN_MIXED: Final = 26
#: The shortest run of digits alone read as an identifier (a Mexican CLABE, a boleto's
#: line, a long domestic account): longer than any phone number (15) and than a card or an
#: order number commonly is (16, 17).
MIN_DIGITS: Final = 18

#: Cyrillic and Greek letters that look like Latin ones, both cases, read as those.
_LOOKALIKE: Final = str.maketrans(
    "\u0410\u0412\u0421\u0415\u041d\u0406\u0408\u041a\u041c\u041e\u0420\u0405\u0422\u0425\u04ae"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
    "\u0430\u0441\u0435\u0456\u0458\u043e\u0440\u0455\u0445\u0443\u03bf",
    "ABCEHIJKMOPSTXYABEZHIKMNOPTYXaceijopsxyo",
)
_NOT_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")
#: A run of groups of letters and digits, one separator between two groups.
_RUN: Final = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{2,}(?:[ \-._][A-Za-z0-9]{2,})*")
_GROUP_SEP: Final = re.compile(r"[ \-._]")
_CAPITALS: Final = re.compile(r"[A-Z0-9]+")
_DIGIT: Final = re.compile(r"\d")
_CAMEL: Final = re.compile(r"[a-z][A-Z]")
_HEX: Final = re.compile(r"[0-9a-f]+|[0-9A-F]+")
#: Base64 of binary data: a long run with the alphabet's symbols in it.
_BINARY: Final = re.compile(r"[A-Za-z0-9+/\-_]{64,}={0,2}")


def letters(text: str) -> str:
    """A text as an identifier is compared: NFKC, format characters dropped, look-alike
    letters read as Latin, then its ASCII letters and digits alone, case kept."""
    return _NOT_ALNUM.sub("", shown(text).translate(_LOOKALIKE))


def _mixed(token: str) -> bool:
    if token.isdigit():
        return len(token) >= MIN_DIGITS
    return len(token) >= MIN_MIXED and not token.isalpha() and _HEX.fullmatch(token) is None


def _noisy(group: str) -> bool:
    """A group no word is: one holding a digit, or a capital after a small letter."""
    return _DIGIT.search(group) is not None or _CAMEL.search(group) is not None


def _segments(groups: list[str]) -> Iterator[list[str]]:
    """The maximal runs of groups that may be one identifier written in parts: each group
    capitals and digits alone or noisy (:func:`_noisy`)."""
    run: list[str] = []
    for group in groups:
        if _CAPITALS.fullmatch(group) or _noisy(group):
            run.append(group)
            continue
        yield run
        run = []
    yield run


def _grouped(groups: list[str]) -> bool:
    """Whether groups read as one identifier written in parts, not as words: at least
    three, each at most 12 long, more than half of them noisy (a headline in capitals with
    a year in it is words)."""
    if len(groups) < 3 or any(len(g) > 12 for g in groups):
        return False
    return 2 * sum(1 for g in groups if _noisy(g)) > len(groups)


def identifiers(text: str) -> Iterator[str]:
    """The opaque identifiers of a text, each as :func:`letters` writes it."""
    if len(text) < min(MIN_MIXED, MIN_DIGITS):
        return
    seen = shown(text).translate(_LOOKALIKE)
    if len(seen) >= 64:
        seen = _BINARY.sub(lambda m: m.group() if m.group().isalnum() else " ", seen)
    for m in _RUN.finditer(seen):
        groups = _GROUP_SEP.split(m.group())
        yield from (group for group in groups if _mixed(group))
        if len(groups) < 3:
            continue
        for segment in _segments(groups):
            whole = "".join(segment)
            if _grouped(segment) and _mixed(whole):
                yield whole


# -- opaque tokens: every token no word, date or amount is ---------------------------------

#: Marks a chunk's edges may carry in prose (quotes, brackets, sentence punctuation); the
#: guard strips the same around a chunk that holds a destination.
EDGE: Final = (
    "\"'`()[]{}<>,;!?.:*_~|\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201a\u2039\u203a\u2026"
)
#: A word: letters of any script, joined by apostrophes or hyphens (``don't``, ``e-mail``).
_WORD: Final = re.compile(r"[^\W\d_]+(?:['\u2019\-][^\W\d_]+)*")
#: Numbers that are no one's address: a date, a time (or a range of them), a year or a
#: year's range, an amount (thousands grouped alike, two decimals at most, a currency sign
#: or a percent), an ordinal, a short number with a unit.
_NUMBERISH: Final = re.compile(
    r"""(?x)
    \d{4}-\d{1,2}-\d{1,2}(?:T\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?)?   # ISO date, time
    | \d{1,2}[./-]\d{1,2}[./-](?:\d{2}|\d{4}) | \d{4}/\d{1,2}/\d{1,2}  # other dates
    | \d{1,2}[:.h]\d{2}(?:[:.]\d{2})?(?:[ap]\.?m\.?)?                 # a time
      (?:[-\u2013]\d{1,2}[:.h]\d{2}(?:[ap]\.?m\.?)?)?
    | (?:1[89]|2[01])\d{2}(?:[-\u2013/](?:(?:1[89]|2[01])?\d{2}))?    # a year, a range
    | [-+\u2212]?[$\u20ac\u00a3\u00a5\u20b9\u20bd\u20a9]?
      (?:\d{1,3}(?:(,)\d{3})+|\d{1,3}(?:(\.)\d{3})+|\d{1,3}(?:(')\d{3})+|\d{1,4})
      (?:[.,]\d{1,2})?(?:%|[kKmM]|bn)?                                # an amount
      [$\u20ac\u00a3\u00a5\u20b9\u20bd\u20a9]?
    | \d{1,4}(?:st|nd|rd|th|[a-zA-Z\u00b0\u00b5]{1,3}\d?)             # ordinal, unit
    """
)
#: Marks that make a chunk an address or a code when they join two letters or digits.
_JOINING: Final = frozenset("@:=+*\\|^~$#%/_.&;!?,")
#: Sigils that make a chunk a handle, a path or a pointer when a letter or digit follows.
_SIGILS: Final = frozenset("@$~\\/")
#: The fewest chunks of marks alone (Morse code, a tap code), of single characters, and of
#: digit groups, read as one written token.
MIN_SYMBOL_RUN: Final = 4
MIN_LETTER_RUN: Final = 5
#: The fewest digits that make a number or a digit-bearing chunk an opaque token.
MIN_TOKEN_DIGITS: Final = 5
#: A group of a number written in groups: up to four digits, or such groups joined by a
#: hyphen or a dot (``31-3``), not a date, a time or an amount.
_DIGIT_GROUP: Final = re.compile(r"\+?\d{1,4}(?:[\-.\u2010\u2011]\d{1,4})*")
#: A word with a number of at most four digits after or before it.
_AFFIXED: Final = re.compile(r"[^\W\d_]+\d{1,4}|\d{1,4}[^\W\d_]+")
_ALNUM_RUN: Final = re.compile(r"[^\W_]+")
_SYMBOLS: Final = re.compile(r"[.\-_*/|\u2022\u00b7\u2013\u2014]+")


#: A text as tokens are compared (:func:`fold`): its letters and digits, and its breaks.
Folded = tuple[str, frozenset[int]]


#: The longest text whose fold is cached (a typed message, a name): longer ones (a whole
#: instruction) are folded when asked, so the cache holds at most 1,024 short texts.
MAX_CACHED_FOLD: Final = 4096


def fold(text: str) -> Folded:
    """A text as tokens are compared: :func:`revealed`, look-alikes read as Latin, letters
    case-folded, every decimal digit of any script as its ASCII digit, everything else a
    break; the joined letters and digits, and the offsets where a break was."""
    return _fold_cached(text) if len(text) <= MAX_CACHED_FOLD else _fold(text)


@functools.lru_cache(maxsize=1024)  # a session's trusted texts are folded at every check
def _fold_cached(text: str) -> Folded:
    return _fold(text)


def _fold(text: str) -> Folded:
    parts = _ALNUM_RUN.findall(revealed(text).translate(_LOOKALIKE).casefold())
    parts = [p if p.isascii() else _ascii_digits(p) for p in parts]
    breaks = [0]
    for part in parts:
        breaks.append(breaks[-1] + len(part))
    return "".join(parts), frozenset(breaks)


def _ascii_digits(part: str) -> str:
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in part)


def _coded(part: str) -> bool:
    """Whether a part of a chunk (between hyphens) is a code: at least six characters,
    two or more of them digits, letters and digits interleaved (``XK7Q2P``, ``KRK01M``;
    not a word with a number after or before it, ``base64``, ``sha256``, ``64bit``, nor
    ``COVID-19``, ``INV-2291`` or ``LH454``)."""
    digits = sum(1 for c in part if c.isdecimal())
    if len(part) < 6 or digits < 2 or _AFFIXED.fullmatch(part):
        return False
    return any(c.isalpha() for c in part)


def _specific(core: str) -> bool:
    """Whether one chunk, its edge marks stripped, is an opaque token."""
    parts = core.split("-")
    if len(parts) >= 3 and all(len(p) == 1 for p in parts):
        return True  # spelled letter by letter: e-v-i-l
    if _WORD.fullmatch(core) or _NUMBERISH.fullmatch(core):
        return False
    digits = sum(1 for c in core if c.isdecimal())
    if digits >= MIN_TOKEN_DIGITS:
        return True
    if core[0] in _SIGILS and len(core) > 1 and core[1].isalnum():
        return True
    if any(_coded(part) for part in core.split("-")):
        return True  # letters and digits together: a code, a key, a password
    alnum = [c.isalnum() for c in core]
    joined = [
        c
        for i, c in enumerate(core)
        if c in _JOINING and 0 < i < len(core) - 1 and alnum[i - 1] and alnum[i + 1]
    ]
    if not joined:
        return False
    segments = re.split(r"[^\w]+|_", core)
    if set(joined) == {"."} and all(len(s) <= 1 for s in segments if s):
        return False  # an abbreviation: e.g., U.S.A.
    # and/or, input/output: two words either way.
    return not (set(joined) == {"/"} and len(segments) == 2 and all(s.isalpha() for s in segments))


def opaque_tokens(text: str) -> Iterator[str]:
    """The opaque tokens of a text as a reader takes it (:func:`revealed`): each chunk between
    spaces that no word, date, time or amount is (digits with letters, five or more
    digits, a mark inside it that joins letters or digits, a handle's or a path's sigil),
    and each run of chunks that together write one (digit groups holding five or more
    digits, at least :data:`MIN_LETTER_RUN` single characters, at least
    :data:`MIN_SYMBOL_RUN` chunks of marks alone in three or more forms: Morse code)."""
    run: list[str] = []
    run_kind = ""
    labelled = False
    for chunk in [*revealed(text).translate(_LOOKALIKE).split(" "), ""]:
        core = chunk.strip(EDGE)
        if chunk and _SYMBOLS.fullmatch(chunk):
            kind, core = "symbols", chunk
        elif _DIGIT_GROUP.fullmatch(core) and (
            core.lstrip("+").isdecimal() or not _NUMBERISH.fullmatch(core)
        ):
            kind = "digits"
        elif len(core) == 1 and core.isalnum():
            kind = "letters"
        else:
            kind = ""
        if kind != run_kind or (kind == "digits" and core.startswith("+")):
            if _run_token(run_kind, run):
                yield " ".join(run)
            run, run_kind = [], kind
        if kind:
            run.append(core)
        elif core and (_specific(core) or (labelled and _LABELLED.fullmatch(core))):
            yield core
        labelled = core.casefold() in _ID_LABELS


#: Labels after which a word with a digit is an identifier however it is written
#: (``LINE ID: refunddesk88``).
_ID_LABELS: Final = frozenset({"id", "username", "handle", "nick", "nickname", "user-id", "userid"})
_LABELLED: Final = re.compile(r"[\w.\-]*\d[\w.\-]*")


def _run_token(kind: str, run: list[str]) -> bool:
    if kind == "digits":
        return len(run) >= 2 and sum(c.isdecimal() for c in "".join(run)) >= MIN_TOKEN_DIGITS
    if kind == "letters":
        return len(run) >= MIN_LETTER_RUN
    if kind == "symbols":
        return len(run) >= MIN_SYMBOL_RUN and len(set(run)) >= 3
    return False
