"""Opaque identifiers: the destinations of schemes the guard has no reader for.

The destination scan reads the kinds it knows (links, email addresses, IBANs, wallets,
accounts, phone numbers, handles). A payee can be named in a scheme it does not know: a
coin's address, a creditor id, a payment network's key. Such an identifier is a long run of
letters and digits with no meaning as words, so while the session is tainted a free-text
argument of a consequential call that carries one must find it in trusted text, as a
destination must (``ProvenanceGuard(opaque_identifiers=True)``, the default): whatever its
scheme, the guard need not know its format to see that nobody trusted wrote it.

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

import re
from collections.abc import Iterator
from typing import Final

from .reveal import shown

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
