"""Destinations as a reader sees them: the ways of writing one undone before it is read.

A browser, a mail client or a person reading a text reaches the same host whether it is
written plainly or escaped, so the destination scan and the grounding of the trusted side
both read the text :func:`revealed`: HTML markup taken out as a renderer shows the text
(an inline tag joins its neighbours: ``acct<b></b>.example`` is ``acct.example``; a tag's
attributes and a comment's text kept after it, so none escapes the scan); HTML character
references (``&#46;``, ``&period;``)
and JSON escapes (``\\/``, ``\\u002e``) decoded; RFC 2047 encoded-words
(``=?utf-8?B?...?=``, ``=?utf-8?Q?...?=``, as a mail client shows a subject) decoded;
NFKC-folded (full-width letters and dots);
an ideographic full stop between two ASCII label characters read as the dot it stands for
in a host (IDNA/UTS-46 maps U+3002, U+FF0E and U+FF61 to ``.``); and defanged forms
refanged: ``hxxp(s)``, ``fxp``, and a dot, colon, slash or at sign in brackets (``[.]``,
``(.)``, ``{.}``, ``[dot]``, ``(at)``, ``[:]``), and any one word in brackets between
labels read as the at and dots it stands for (``tom (snabel-a) evil (punkt) example``: the
same word each time is a dot, a first word unlike the rest the at). A spelled-out dot is
read only in a chain of at least three labels (``a dot b dot example``, then `` slash ``
path parts), or of two followed by a path (``evil dot example slash login``, its first
label not a word that begins prose): a single ``dot`` between two words is too common in
prose (``the dot com era``) to be read as a host; after a spelled ``at`` it is an address's
(``billing at pay-desk dot example`` is ``billing@pay-desk.example``): a word, `` at ``,
then labels joined by `` dot ``. A host or an address spelled in the NATO alphabet (at
least four of its words, with ``dash``, ``dot``, ``at`` and ``slash`` for marks) is written
as it spells, and so is one in Morse code (at least eight characters). A number read out
digit by digit (at least 7 digit words, ``plus four four
two zero ...``) is written in digits, so it is found as the phone number it spells. A
``mailto:`` URI's addresses are percent-decoded (RFC 6068), and an address's comments
beside its ``@`` dropped (``billing(finance)@host`` is ``billing@host``, RFC 5322). Case is kept:
a path compares case-sensitively.

Every step is one linear-time pass, run only when a cheap check finds its trigger.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import unicodedata
from typing import Final
from urllib.parse import unquote

from .numerals import numerals

#: Format characters (zero-width, bidi controls, soft hyphen) and lone surrogates.
FORMAT: Final = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    # variation selectors and the enclosing marks of keycaps and circles (``4\ufe0f\u20e3``
    # is a 4 drawn as a key)
    "\ufe00-\ufe0f\u20dd-\u20e4\U000e0100-\U000e01ef]"
)
_SPACES: Final = re.compile(r"\s+")
#: Unicode tag characters (U+E0020 to U+E007E), which a display does not draw and a model
#: reads as the ASCII they shadow; a flag's tag sequence (U+1F3F4, tag letters or digits,
#: U+E007F, the flag of Scotland) is an emoji, kept whole.
_TAGS: Final = re.compile("[\U000e0020-\U000e007f]+")
_FLAG: Final = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,8}\U000e007f")
#: A right-to-left override (U+202E) and what it governs: to a pop (U+202C) or a line end.
_OVERRIDE: Final = re.compile("\u202e([^\u202c\n\u2029]*)\u202c?")
#: JSON, JavaScript and C escapes: ``\u002e``, ``\x2e``, ``\/``, and three-digit octal
#: ``\056`` (as git quotes a path and a database writes bytes).
_ESCAPE: Final = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(/)|([0-3][0-7]{2}))")
#: An RFC 2047 encoded-word (charset, ``B`` or ``Q``, text); the whitespace between two of
#: them is dropped when shown (RFC 2047 6.2). The text is bounded, so the scan is linear.
_ENCODED_WORD: Final = re.compile(
    r"=\?([\w\-*]{1,40})\?([bq])\?([^?\s]{0,2048})\?=(?:\s+(?==\?[\w\-*]{1,40}\?[bq]\?))?",
    re.IGNORECASE,
)
_Q_BYTE: Final = re.compile(rb"=([0-9a-fA-F]{2})")
#: Rounds of decoding: ``&amp;#46;`` is a reference written inside a reference.
_ROUNDS: Final = 2
#: After NFKC, U+FF0E is ``.`` and U+FF61 is U+3002: the ideographic stop is what is left.
_IDEOGRAPHIC_DOT: Final = re.compile(r"(?<=[a-z0-9\-])\u3002(?=[a-z0-9\-])", re.IGNORECASE)
#: ``dot`` and ``at`` as other languages write them in an address: German and the Nordic
#: languages' ``punkt``, Spanish and Italian ``punto``, French ``point``, Portuguese
#: ``ponto``, Dutch ``punt``; ``arroba``, ``arobase``, ``chiocciola``, ``klammeraffe`` and
#: German's spoken ``ät``.
_DOT_WORDS: Final = ("dot", "punkt", "punto", "point", "ponto", "punt")
_AT_WORDS: Final = ("at", "\u00e4t", "arroba", "arobase", "chiocciola", "klammeraffe")
#: In brackets, every word but ``point`` (``the (point) is`` is English prose).
_BRACKET_WORDS: Final = tuple(w for w in _DOT_WORDS + _AT_WORDS if w != "point")
_BRACKETED: Final = re.compile(
    rf" ?[\[({{] ?(\.|:|/|@|{'|'.join(_BRACKET_WORDS)}) ?[\])}}] ?", re.IGNORECASE
)
_BRACKETED_AS = {".": ".", ":": ":", "/": "/", "@": "@"} | dict.fromkeys(_DOT_WORDS, ".")
_BRACKETED_AS |= dict.fromkeys(_AT_WORDS, "@")
#: Any one word in brackets between the labels of a host or an address, as a writer of
#: any language spells ``at`` and ``dot`` (``tom (snabel-a) evil (punkt) example``,
#: ``desk [kropka] pay [kropka] example``): at least two such words, or one before a host
#: written with its dots; the last label a word of letters (a top-level domain).
_ANY_WORD: Final = r" ?[\[({] ?[^\W\d_][\w\-]{0,15} ?[\])}] ?"
_WORD_SPELLED: Final = re.compile(
    rf"(?<![\w.+\-])[\w+\-]{{1,64}}(?:(?:{_ANY_WORD}[a-z0-9\-]{{1,63}}){{2,}}"
    rf"|{_ANY_WORD}[a-z0-9\-]{{1,63}}(?:\.[a-z0-9\-]{{1,63}})+)(?![\w\-])",
    re.IGNORECASE,
)
_WORD_SEP: Final = re.compile(_ANY_WORD)
_HXXP: Final = re.compile(r"(?<![a-z])(?:h(?:xx|\*\*)p(s?)|(fxp))(?=:)", re.IGNORECASE)
_DOT_WORD: Final = f"(?:{'|'.join(_DOT_WORDS)})"
_AT_WORD: Final = f"(?:{'|'.join(_AT_WORDS)})"
_SPELLED: Final = re.compile(
    rf"(?<![\w\-])[a-z0-9\-]{{1,63}}(?:(?: {_DOT_WORD} [a-z0-9\-]{{1,63}}){{2,}}"
    r"(?: slash [\w\-.~%]{1,63})*"
    # two labels only with a path after them: ``evil dot example slash login``
    rf"| {_DOT_WORD} [a-z]{{2,24}}(?: slash [\w\-.~%]{{1,63}})+)",
    re.IGNORECASE,
)
_SPELLED_PART: Final = re.compile(rf" ({_DOT_WORD}|slash) ", re.IGNORECASE)
_SPELLED_DOT: Final = re.compile(rf" {_DOT_WORD} ", re.IGNORECASE)
#: An address spelled out: a local part, `` at ``, a host of labels joined by `` dot ``.
_SPELLED_ADDRESS: Final = re.compile(
    rf"(?<![\w.+\-])([\w.+\-]{{1,64}}) {_AT_WORD} "
    rf"([a-z0-9\-]{{1,63}}(?: {_DOT_WORD} [a-z0-9\-]{{1,63}})+)(?![\w\-])",
    re.IGNORECASE,
)
#: Digits as words: ``zero`` (or ``oh``) to ``nine``, one word per digit.
_DIGIT_WORDS: Final = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_DIGIT_WORD: Final = "(?:" + "|".join(_DIGIT_WORDS) + ")"
#: A number read out digit by digit: at least 7 digit words (a phone number's shortest
#: local part), apart by spaces, commas or dashes, after an optional ``plus``.
_SPELLED_DIGITS: Final = re.compile(
    rf"(?<![\w\-])(plus[ ,\-]+)?{_DIGIT_WORD}(?:[ ,\-]+{_DIGIT_WORD}){{6,}}(?![\w\-])",
    re.IGNORECASE,
)
_DIGIT_WORD_PART: Final = re.compile(_DIGIT_WORD, re.IGNORECASE)
#: The NATO phonetic alphabet (and its common variants), the words a speller says for an
#: address's marks, and digit words: a host or an address spelled out over the phone.
_PHONETIC: Final = {
    "alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
    "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliett": "j", "juliet": "j",
    "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
    "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u", "victor": "v",
    "whiskey": "w", "whisky": "w", "x-ray": "x", "xray": "x", "yankee": "y", "zulu": "z",
}  # fmt: skip
_PHONETIC_MARKS: Final = {
    "dash": "-", "hyphen": "-", "dot": ".", "period": ".", "at": "@", "slash": "/",
    "underscore": "_",
}  # fmt: skip
_PHONETIC_WORD: Final = "(?:" + "|".join(map(re.escape, _PHONETIC)) + ")"
_PHONETIC_TOKEN: Final = (
    "(?:" + "|".join(map(re.escape, [*_PHONETIC, *_PHONETIC_MARKS, *_DIGIT_WORDS])) + ")"
)
#: At least four words of the alphabet in a run (marks and digit words between them); a
#: mark it ends on joins the plain words after it (``... Mike dot example slash reset``).
_SPELLED_PHONETIC: Final = re.compile(
    rf"(?<![\w\-]){_PHONETIC_TOKEN}(?:[ ,]+{_PHONETIC_TOKEN}){{3,}}(?![\w\-])"
    r"(?P<tail> [a-z0-9\-]{1,63}(?: (?:dot|slash) [a-z0-9\-]{1,63})*(?![\w\-]))?",
    re.IGNORECASE,
)
_PHONETIC_FIND: Final = re.compile(rf"(?<![\w\-]){_PHONETIC_WORD}(?![\w\-])", re.IGNORECASE)
_TAIL_MARK: Final = re.compile(r" (dot|slash) ", re.IGNORECASE)


def _phonetic(m: re.Match[str]) -> str:
    tail = m.group("tail") or ""
    words = re.split(r"[ ,]+", m.group()[: len(m.group()) - len(tail)])
    if sum(1 for w in words if w.lower() in _PHONETIC) < 4:
        return m.group()
    out = "".join(
        _PHONETIC.get(w.lower())
        or _PHONETIC_MARKS.get(w.lower())
        or _DIGIT_WORDS.get(w.lower())
        or w
        for w in words
    )
    if tail and out[-1:] in "./@-":
        marks = _TAIL_MARK.sub(lambda t: "." if t.group(1).lower() == "dot" else "/", tail)
        return out + marks.strip()
    return out + tail


#: International Morse code (ITU-R M.1677): letters, digits and an address's marks.
_MORSE: Final = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
    "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5",
    "-....": "6", "--...": "7", "---..": "8", "----.": "9",
    ".-.-.-": ".", "--..--": ",", "..--..": "?", "-..-.": "/", "-....-": "-", ".--.-.": "@",
    "---...": ":", "-...-": "=", ".-.-.": "+", "..--.-": "_",
}  # fmt: skip
#: At least eight Morse characters apart by spaces, words apart by `` / `` or three spaces.
_MORSE_RUN: Final = re.compile(r"(?<![\w.\-])[.\-]{1,7}(?:(?: | / |   )[.\-]{1,7}){7,}(?![\w.\-])")


def _morse(m: re.Match[str]) -> str:
    words = re.split(r" / |   ", m.group())
    decoded = [[_MORSE.get(c) for c in w.split(" ")] for w in words]
    if any(c is None for w in decoded for c in w):
        return m.group()
    return " ".join("".join(c for c in w if c) for w in decoded)


#: An IBAN read out with its country letters apart (``L T 6010...``, after digit words are
#: written in digits): the letters joined when an IBAN's digits follow.
_SPELLED_COUNTRY: Final = re.compile(r"(?<![\w\-])([A-Z])[ .\-]([A-Z])[ .,\-]*(?=\d{2}[\d ]{10,})")
#: An IBAN given in labelled parts (``country LT, check digits 60, bank code 10100, account
#: 12345678901``): its parts are written after it as the IBAN they make.
_LABELLED_IBAN: Final = re.compile(
    r"country(?: code)?\W{0,3}(?P<cc>[A-Z]{2})\W{1,4}check digits\W{0,3}(?P<check>\d{2})\W{1,4}"
    r"(?:bank(?: code)?|sort code|blz|bank number)\W{0,3}(?P<bank>[0-9A-Z][0-9A-Z ]{0,15}?)\W{1,4}"
    r"account(?: number| no\.?)?\W{0,3}(?P<account>\d[\d ]{0,30}\d)",
    re.IGNORECASE,
)


#: A ``mailto:`` URI (RFC 6068): its addresses, before the ``?`` and in the ``to``, ``cc``
#: and ``bcc`` header fields, are percent-encoded (``mailto:desk%40host`` is ``desk@host``).
_MAILTO: Final = re.compile(r"(?<![\w.+\-])mailto:([^\s<>\"'`?]*)(\?[^\s<>\"'`]*)?", re.IGNORECASE)
_ADDRESS_FIELDS: Final = frozenset({"to", "cc", "bcc"})


#: An RFC 5322 comment (``(finance)``), one level nested at most, of bounded length.
_COMMENT: Final = r"\((?:[^()\r\n]|\([^()\r\n]{0,64}\)){0,64}\)"
#: Comments and folding space beside an address's ``@`` (RFC 5322 3.4.1: CFWS may stand
#: before and after the local part and the domain): ``billing(finance)@host`` is the
#: mailbox ``billing@host``. Every part is bounded, so each try costs a constant.
_AROUND_AT: Final = re.compile(
    r"(?<=[\w%+\-\"])(?:[ \t]{0,8}" + _COMMENT + r"){0,4}[ \t]{0,8}@"
    r"(?:[ \t]{0,8}" + _COMMENT + r"){0,4}[ \t]{0,8}(?=[\w\[])"
)


#: An HTML comment's start, or a start or end tag (``<b>``, ``</span>``, ``<br/>``,
#: ``<a href="...">``); ``<https://host>`` and ``<desk@host>`` are no tags. The attributes
#: run to the next ``<`` or ``>``, so each try ends where the next one starts.
_MARKUP: Final = re.compile(r"<!--|</?([a-z][a-z0-9\-]{0,30})(\s[^<>]*)?/?>", re.IGNORECASE)
#: Elements a renderer shows apart from the text around them (a line or a cell break);
#: any other element, known or not, is shown inline, joined to its neighbours.
#: HTML's inline elements, which a renderer draws in the run of the text around them; any
#: other tag (a block, a line break, a cell, an XML element such as ``<IBAN>``) stands for
#: a break between words.
_INLINE: Final = frozenset(
    {
        "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em",
        "font", "i", "ins", "kbd", "label", "mark", "nobr", "q", "s", "samp", "small", "span",
        "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
    }
)  # fmt: skip


def _untag(m: re.Match[str]) -> str:
    return "".join(chr(ord(c) - 0xE0000) for c in m.group() if c != "\U000e007f")


def _shadowed(text: str) -> str:
    """Tag characters as the ASCII they shadow (``IT Desk`` followed by a hidden
    instruction reads as both), a flag's tag sequence left an emoji."""
    flags = [m.span() for m in _FLAG.finditer(text)]
    if not flags:
        return _TAGS.sub(_untag, text)
    out, pos = [], 0
    for start, end in flags:
        out += [_TAGS.sub(_untag, text[pos:start]), text[start:end]]
        pos = end
    return "".join([*out, _TAGS.sub(_untag, text[pos:])])


def _overridden(m: re.Match[str]) -> str:
    return m.group(1)[::-1]


#: Six-dot braille cells (U+2800 to U+283F) as the Braille ASCII table reads them: a
#: braille display, its screen reader and a model read a name written in them as text.
_BRAILLE: Final = re.compile("[\u2800-\u283f]")
_BRAILLE_ASCII: Final = str.maketrans(
    {
        chr(0x2800 + i): c
        for i, c in enumerate(" A1B'K2L@CIF/MSP\"E3H9O6R^DJG>NTQ,*5<-U8V.%[$+X!&;:4\\0Z7(_?W]#Y)=")
    }
)


def shown(text: str) -> str:
    """Tag characters read as the ASCII they shadow, braille cells as the Braille ASCII
    characters they stand for, a right-to-left override's run in the order it is displayed
    (reversed), NFKC-fold, drop format characters (zero-width, bidi), collapse spaces; case
    kept."""
    if any("\U000e0020" <= c <= "\U000e007f" for c in text):
        text = _shadowed(text)
    if _BRAILLE.search(text):
        text = text.translate(_BRAILLE_ASCII)
    if "\u202e" in text:
        text = _OVERRIDE.sub(_overridden, text)
    text = FORMAT.sub("", unicodedata.normalize("NFKC", text))
    return _SPACES.sub(" ", text).strip()


def untagged(text: str) -> str:
    """HTML markup taken out of the text as a renderer shows it: an inline tag
    (``acct<b></b>.example``, ``docs<span>.</span>example``) joins its neighbours, any other
    tag (``<p>``, ``<br>``, ``<td>``, an XML element such as ``<IBAN>``) stands for a space,
    and a comment (``<!-- -->``, to the end when unclosed) shows nothing. Nothing is lost to
    the scan: every tag with attributes (an ``href``) and every comment's text is kept after
    the shown text."""
    if "<" not in text:
        return text
    shown_parts: list[str] = []
    kept: list[str] = []
    pos = 0
    while (m := _MARKUP.search(text, pos)) is not None:
        shown_parts.append(text[pos : m.start()])
        if m.group() == "<!--":
            end = text.find("-->", m.end())
            end = len(text) if end < 0 else end
            kept.append(text[m.end() : end])
            pos = min(len(text), end + 3)
            continue
        name, attributes = m.group(1).lower(), m.group(2)
        shown_parts.append("" if name in _INLINE else " ")
        if attributes and attributes.strip():
            kept.append(m.group())
        pos = m.end()
    shown_parts.append(text[pos:])
    return " ".join(["".join(shown_parts), *kept])


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1) or m.group(2)
    if m.group(4):
        return chr(int(m.group(4), 8))
    return chr(int(code, 16)) if code else "/"


def _encoded_word(m: re.Match[str]) -> str:
    charset, encoding, body = m.group(1).split("*", 1)[0], m.group(2).lower(), m.group(3)
    try:
        if encoding == "b":
            raw = base64.b64decode(body + "=" * (-len(body) % 4))
        else:
            spaced = body.encode().replace(b"_", b" ")
            raw = _Q_BYTE.sub(lambda b: bytes([int(b.group(1), 16)]), spaced)
        codecs.lookup(charset)
    except (binascii.Error, ValueError, LookupError, UnicodeEncodeError):
        return m.group()  # not a word a client decodes: shown as written
    return raw.decode(charset, errors="replace")


def decoded(text: str) -> str:
    """HTML character references, JSON escapes and RFC 2047 encoded-words decoded, as a
    reader's client decodes them."""
    for _ in range(_ROUNDS):
        before = text
        if "=?" in text:
            text = _ENCODED_WORD.sub(_encoded_word, text)
        if "&" in text:
            text = html.unescape(text)
        if "\\" in text:
            text = _ESCAPE.sub(_unescape, text)
        if text == before:
            break
    return text


def _bracketed(m: re.Match[str]) -> str:
    return _BRACKETED_AS[m.group(1).lower()]


def _hxxp(m: re.Match[str]) -> str:
    return "ftp" if m.group(2) else "http" + m.group(1)


def _spelled(m: re.Match[str]) -> str:
    first = m.group().split(" ", 1)[0].lower()
    if len(_SPELLED_DOT.findall(m.group())) == 1 and first in _PROSE_LABELS:
        return m.group()  # prose: ``the dot com slash burn era``
    return _SPELLED_PART.sub(lambda p: "/" if p.group(1).lower() == "slash" else ".", m.group())


#: Words that begin a phrase of prose, not a host (``we met at the dot com party``).
_PROSE_LABELS: Final = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their", "his",
     "her", "its", "some", "any", "no", "every", "each", "one"}
)  # fmt: skip
#: Words that end a phrase before ``at`` in prose, not a local part (``sign in at``,
#: ``reach me at``, ``look at``, ``available at``).
_PROSE_LOCALS: Final = frozenset(
    {"in", "on", "up", "out", "off", "me", "us", "you", "him", "her", "them", "it", "we",
     "i", "he", "she", "they", "is", "are", "was", "were", "be", "been", "am", "look",
     "looked", "looking", "arrive", "arrived", "available", "here", "there", "online",
     "both", "all", "and", "or", "but", "not", "only", "just", "even", "also", "then",
     "now", "again", "back", "home", "work", "least", "most", "best", "first", "last",
     "once", "stop", "start", "starts", "started", "begin", "begins", "ends", "end", "meet",
     "met", "see", "seen", "visit", "find", "found", "live", "lives", "stay", "stayed"}
)  # fmt: skip


#: Words no host or address is made of, which prose between brackets has.
_PROSE_WORDS: Final = _PROSE_LABELS | frozenset(
    {"and", "or", "of", "to", "in", "for", "with", "on", "by", "from", "as", "is", "are"}
)


def _spelled_address(m: re.Match[str]) -> str:
    labels = _SPELLED_DOT.split(m.group(2))
    tld = labels[-1]
    prose = m.group(1).lower() in _PROSE_LOCALS or labels[0].lower() in _PROSE_LABELS
    if prose or not (tld.isalpha() and tld.isascii()):
        return m.group()  # prose, or a number (``at 5 dot 30``)
    return m.group(1) + "@" + ".".join(labels)


def _word_spelled(m: re.Match[str]) -> str:
    """A host or an address spelled with bracketed words of any language: words all the
    same are dots; a first word unlike the rest, or one word before a host with dots, is
    the ``at``. Left as written when the last label is no word of letters."""
    labels = _WORD_SEP.split(m.group())
    words = [w.strip(" ()[]{}").lower() for w in _WORD_SEP.findall(m.group())]
    tld = labels[-1].rsplit(".", 1)[-1]
    if not (tld.isalpha() and tld.isascii() and 2 <= len(tld) <= 24):
        return m.group()
    lowered = [label.lower() for label in labels]
    if lowered[0] in _PROSE_LOCALS or any(w in _PROSE_WORDS for w in lowered):
        return m.group()  # prose: ``the team (sales) and (marketing) plans``
    if len(words) == 1:
        return labels[0] + "@" + labels[1]
    if all(w == words[0] for w in words):
        return ".".join(labels)
    if all(w == words[1] for w in words[1:]):
        return labels[0] + "@" + ".".join(labels[1:])
    return m.group()


def _digits(m: re.Match[str]) -> str:
    digits = "".join(_DIGIT_WORDS[w.lower()] for w in _DIGIT_WORD_PART.findall(m.group(), 0))
    return ("+" if m.group(1) else "") + digits


def _header(field: str) -> str:
    name, eq, value = field.partition("=")
    return name + eq + unquote(value) if name.lower() in _ADDRESS_FIELDS else field


def _mailto(m: re.Match[str]) -> str:
    query = m.group(2) or ""
    if query:
        query = "?" + "&".join(_header(f) for f in query[1:].split("&"))
    return "mailto:" + unquote(m.group(1)) + query


def _at(m: re.Match[str]) -> str:
    return "@" if "(" in m.group() else m.group()


def uncommented(text: str) -> str:
    """The comments beside an address's ``@`` dropped, as a mail client reads the address
    (``billing(finance)@host``, ``desk@(support)host``: RFC 5322 CFWS); the space beside
    them too. An ``@`` with only spaces beside it is left as written (``meet @ noon``)."""
    if "(" not in text or "@" not in text:
        return text
    return _AROUND_AT.sub(_at, text)


def mailto_decoded(text: str) -> str:
    """Each ``mailto:`` URI's addresses percent-decoded, as a mail client decodes them
    (RFC 6068): the address list before the ``?`` and the ``to``, ``cc`` and ``bcc``
    header fields; the other fields (``subject``, ``body``) are left as written."""
    if "mailto:" not in text.lower():
        return text
    return _MAILTO.sub(_mailto, text)


def refanged(text: str) -> str:
    """Defanged hosts, addresses and schemes written back as a reader takes them, and a
    number read out digit by digit (``plus four four two zero ...``) written in digits."""
    if "\u3002" in text:
        text = _IDEOGRAPHIC_DOT.sub(".", text)
    if _PHONETIC_FIND.search(text):
        text = _SPELLED_PHONETIC.sub(_phonetic, text)
    if "-." in text or ".-" in text:
        text = _MORSE_RUN.sub(_morse, text)
    if any(c in text for c in "[({"):
        text = _BRACKETED.sub(_bracketed, text)
        if any(c in text for c in "[({"):
            text = _WORD_SPELLED.sub(_word_spelled, text)
    lowered = text.lower()
    if "xxp" in lowered or "**p" in lowered or "fxp" in lowered:
        text = _HXXP.sub(_hxxp, text)
    if _SPELLED_DOT.search(lowered):
        if any(f" {word} " in lowered for word in _AT_WORDS):
            text = _SPELLED_ADDRESS.sub(_spelled_address, text)
        text = _SPELLED.sub(_spelled, text)
    text = numerals(_SPELLED_DIGITS.sub(_digits, text))
    if any(c.isupper() for c in text):
        text = _SPELLED_COUNTRY.sub(r"\1\2", text)
    if "check digits" in text.lower():
        text = _LABELLED_IBAN.sub(_labelled_iban, text)
    return text


def _labelled_iban(m: re.Match[str]) -> str:
    parts = (m["cc"].upper(), m["check"], m["bank"], m["account"])
    return m.group() + " (" + "".join(parts).replace(" ", "") + ")"


@functools.lru_cache(maxsize=32)  # the kinds of one check read the same trusted texts
def revealed(text: str) -> str:
    """The text as a reader takes it: :func:`untagged`, decoded, :func:`shown`, refanged, a
    ``mailto:`` URI's addresses percent-decoded, the comments beside an address's ``@``
    dropped (case kept)."""
    return uncommented(mailto_decoded(refanged(shown(decoded(untagged(text))))))
