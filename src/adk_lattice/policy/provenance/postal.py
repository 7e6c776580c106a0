"""Postal addresses as destinations: a street and its house number, or a post-office box.

The ``postal`` value kind of :class:`ProvenanceGuard` is read here, to one comparable key.
A street address is read where a house number stands beside a street: before a street
name ending in a street type (``221 Harbour Road``, ``1640 Quarry Ln``, ``5 Rue de la
Paix``), or after a street written as one word with its type (``Lindenstrasse 4``,
``Keizersgracht 12``) or after a type and a name (``Via Roma 10``, ``Calle Mayor 5``,
``Rua Augusta, 27``). A post-office box is read as its number (``P.O. Box 1234``,
``Postfach 1234``). The key is ``<number> <street>``, case folded, ``ß`` as ``ss``, a
street type's abbreviation as the type (``Rd`` is ``Road``, ``Str.`` is ``Strasse``), and
punctuation and spaces as one space; a box is ``pobox <number>``.

What is compared is the street and the number, not the town or the postcode: another
house number or street is another address, the same street and number in another town is
not told apart (the documented limit). An address without a house number
(``Harbour Road, Dover``), and one in a script or a form none of the patterns reads, is
not read.

Every pattern is anchored by a look-behind and bounded in its repeats, so a text is read
in one pass per pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

#: Street types written after the name, and the abbreviations read as them.
_TYPES_AFTER: Final = {
    "street": "street", "st": "street", "road": "road", "rd": "road", "lane": "lane",
    "ln": "lane", "avenue": "avenue", "ave": "avenue", "av": "avenue", "boulevard":
    "boulevard", "blvd": "boulevard", "drive": "drive", "dr": "drive", "way": "way", "court":
    "court", "ct": "court", "place": "place", "pl": "place", "terrace": "terrace", "close":
    "close", "crescent": "crescent", "cres": "crescent", "square": "square", "sq": "square",
    "parkway": "parkway", "pkwy": "parkway", "highway": "highway", "hwy": "highway", "row":
    "row", "mews": "mews", "walk": "walk", "grove": "grove", "gardens": "gardens", "circle":
    "circle", "cir": "circle", "trail": "trail", "quay": "quay", "wharf": "wharf", "hill":
    "hill", "park": "park", "green": "green",
}  # fmt: skip
#: Street types written before the name (French, Italian, Spanish, Portuguese, Polish).
_TYPES_BEFORE: Final = (
    "rue", "avenue", "boulevard", "bd", "chemin", "allée", "allee", "impasse", "quai",
    "cours", "viale", "piazza", "corso", "calle", "avenida", "carrer", "rua",
    "praça", "praca", "plaza", "paseo", "rambla", "ulica", "ul",
)  # fmt: skip
#: Endings of a street written as one word with its type (German, Dutch, Nordic).
_ONE_WORD: Final = (
    "straße", "strasse", "str.", "weg", "gasse", "platz", "allee", "damm", "ufer",
    "gracht", "laan", "straat", "plein", "steeg", "kade", "vej", "gade", "gatan", "vägen",
    "vagen", "veien", "gata",
)  # fmt: skip

#: A word of a street's name: a letter, then letters, digits, apostrophes, dots, dashes; not
#: an article, a conjunction or a preposition of prose (``3 of the road``).
_NAME_WORD: Final = (
    r"(?!(?i:the|a|an|and|or|of|to|in|on|at|for|with|by|per)\s)[^\W\d_][\w'\u2019.\-]{0,30}"
)
_PARTICLE: Final = r"(?:de|du|des|la|le|les|l'|d'|del|della|di|da|do|dos|das|los|las|of|the)"
_PARTICLES: Final = rf"(?:(?i:{_PARTICLE})[ \t]*)*"
_NUMBER: Final = r"\d{1,5}[A-Za-z]?(?:-\d{1,5})?"

#: ``221 Harbour Road``: a number, one to four words, a street type.
_NUMBER_FIRST: Final = re.compile(
    rf"(?<![\w/.,\-])(?P<num>{_NUMBER}),?[ \t]+(?P<name>(?:{_NAME_WORD}[ \t]+){{1,4}}?)"
    rf"(?P<type>(?i:{'|'.join(sorted(_TYPES_AFTER, key=len, reverse=True))}))"
    r"\.?(?![\w'\u2019\-])"
)
#: ``5 Rue de la Paix`` and ``Via Roma 10``: a type before the name, the number either side.
_TYPE_FIRST: Final = re.compile(
    rf"(?<![\w/.,\-])(?:(?P<pre>{_NUMBER})(?:[ \t]?(?:bis|ter))?,?[ \t]+)?"
    rf"(?P<type>(?i:{'|'.join(_TYPES_BEFORE)})|Via|VIA)\.?[ \t]+"
    rf"(?P<name>{_PARTICLES}{_NAME_WORD}(?:[ \t]+{_PARTICLES}{_NAME_WORD}){{0,2}})"
    rf"(?:,?[ \t]+(?:n\.?[ \t]?[º°o]?[ \t]?)?(?P<post>{_NUMBER}))?(?![\w\-])"
)
#: ``Lindenstrasse 4``: one word ending in its street type, then the number.
_WORD_FIRST: Final = re.compile(
    rf"(?<![\w\-])(?P<name>[^\W\d_][\w\-]{{1,40}}(?i:{'|'.join(re.escape(e) for e in _ONE_WORD)}))"
    rf"[ \t]*,?[ \t]+(?P<num>{_NUMBER})(?![\w\-]|[.,]\d)"
)
#: ``P.O. Box 1234``, ``PO Box 77``, ``Postfach 1234``, ``Apartado 55``.
_BOX: Final = re.compile(
    r"(?<![\w])(?:p\.?\s?o\.?\s?box|post\s+office\s+box|postfach|apartado|caixa\s+postal|"
    r"bo[iî]te\s+postale|b\.?p\.?(?=[\s.]))[\s.:#]*(?P<num>\d{1,8})(?!\w)",
    re.IGNORECASE,
)
#: A year, or a range of years, and the cue of a copyright line before one.
_YEARS: Final = re.compile(r"(?:19|20)\d\d(?:-(?:19|20)\d\d)?")
_COPYRIGHT: Final = re.compile(r"copyright|\(c\)|\u00a9", re.IGNORECASE)
_COPYRIGHT_WINDOW: Final = 40
#: A mailbox just after a name (``2016 Iain Lane <iain@example.org>``): a person, not a
#: street.
_MAILBOX_AFTER: Final = re.compile(r"[ \t]*<[^<>\s]{1,64}@")


def _copyright(text: str, number: str, start: int) -> bool:
    """Whether a number is the year of a copyright line (``Copyright 2016 Iain Lane``,
    ``(c) 1998-2003 VIA Technologies``) or a range of years, not a house number."""
    if not _YEARS.fullmatch(number):
        return False
    if "-" in number:
        return True
    return _COPYRIGHT.search(text, max(0, start - _COPYRIGHT_WINDOW), start) is not None


_PUNCT: Final = re.compile(r"[\s.,'\u2019\-]+")


def _street(words: str) -> str:
    """A street's words in their compared form: case folded, ``ß`` as ``ss``, an abbreviated
    type as the type, punctuation and spaces as one space."""
    folded = words.casefold().replace("ß", "ss").replace("str.", "strasse")
    parts = [p for p in _PUNCT.split(folded) if p]
    if parts and parts[-1] in _TYPES_AFTER:
        parts[-1] = _TYPES_AFTER[parts[-1]]
    if parts and parts[0] in ("bd",):
        parts[0] = "boulevard"
    if parts and parts[0] in ("ul",):
        parts[0] = "ulica"
    return " ".join(parts)


def _number(raw: str) -> str:
    return raw.casefold()


#: A place written as a code a map or a courier's app resolves: a what3words address
#: (``///lamp.orbit.fancy``: three words of letters, not after a scheme's colon, as
#: ``https:///host`` is a link), an Open Location Code (``9F4MGCH2+4Q``, its alphabet), a
#: ``geo:`` URI (RFC 5870, its latitude and longitude).
_WHAT3WORDS: Final = re.compile(
    r"(?<![\w:/])///([^\W\d_]{1,30}\.[^\W\d_]{1,30}\.[^\W\d_]{1,30})(?![\w.\-/])"
)
_PLUS_CODE: Final = re.compile(
    r"(?<![\w+])([23456789CFGHJMPQRVWX]{4,8}\+[23456789CFGHJMPQRVWX]{2,3})(?![\w+])",
    re.IGNORECASE,
)
_GEO: Final = re.compile(r"(?<![\w])geo:(-?\d{1,3}(?:\.\d+)?),(-?\d{1,3}(?:\.\d+)?)", re.IGNORECASE)


def locations(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The places in a text written as location codes: ``(span, key)``."""
    if "///" in text:
        for m in _WHAT3WORDS.finditer(text):
            yield m.span(), f"w3w {m[1].casefold()}"
    if "+" in text:
        for m in _PLUS_CODE.finditer(text):
            yield m.span(), f"plus {m[1].upper()}"
    if "geo:" in text.lower():
        for m in _GEO.finditer(text):
            yield m.span(), f"geo {float(m[1])},{float(m[2])}"


def addresses(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The street addresses, post-office boxes and location codes (:func:`locations`) in a
    text: ``(span, key)``, in text order within each form; an address read by one form is
    not read again by another."""
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(span[0] < end and start < span[1] for start, end in taken)

    found: list[tuple[tuple[int, int], str]] = list(locations(text))
    taken += [span for span, _ in found]
    for m in _BOX.finditer(text):
        taken.append(m.span())
        found.append((m.span(), f"pobox {int(m['num'])}"))
    for m in _TYPE_FIRST.finditer(text):
        number = m["pre"] or m["post"]
        if number is None or not free(m.span()) or _copyright(text, number, m.start()):
            continue
        taken.append(m.span())
        found.append((m.span(), f"{_number(number)} {_street(m['type'] + ' ' + m['name'])}"))
    for m in _NUMBER_FIRST.finditer(text):
        if _copyright(text, m["num"], m.start()) or _MAILBOX_AFTER.match(text, m.end()):
            continue
        if free(m.span()):
            taken.append(m.span())
            street = _street(m["name"] + " " + m["type"])
            found.append((m.span(), f"{_number(m['num'])} {street}"))
    for m in _WORD_FIRST.finditer(text):
        if free(m.span()):
            taken.append(m.span())
            found.append((m.span(), f"{_number(m['num'])} {_street(m['name'])}"))
    yield from sorted(found)


def postal_key(value: str) -> str | None:
    """The key of the one address a declared ``postal`` argument holds, or None when it
    holds none (malformed) or more than one."""
    keys = {key for _, key in addresses(value)}
    return keys.pop() if len(keys) == 1 else None
