"""Near-miss guards: why two similar questions must not share an answer.

An embedding scores a question and its negation, or the same words in another order, as
near neighbours. The guards compare what an embedding blurs: negation and polarity,
numbers, dates and amounts, named entities and ids, comparison words, the question's frame
(question word, tense, modality, person, quantifiers, direction), the order of the words
that carry meaning, and the share of content words that differ. A hit is refused when any
guard finds a difference; each refusal names its guards.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

from . import _lexicon as lx
from ._lexicon import words as _words

#: The guard names, in the order they are checked (and reported).
GUARDS: Final = ("negation", "number", "entity", "comparison", "frame", "order", "content")

#: The longest text the guards read; longer questions are only ever served exactly.
MAX_GUARDED_CHARS: Final = 2000

_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_EDGE: Final = "\"'()[]{}<>,;:!?.\u201c\u201d\u00ab\u00bb*_~"
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^\W\d_]{2,}")
_URL: Final = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://\S+|www\.\S+|[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?:/\S*)?)"
)
_PIECE: Final = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+(?:[.,:/-]\d+)*|[^\w\s']")
_NUMBER_UNIT: Final = re.compile(r"(\d+(?:[.,]\d+)*)([^\W\d_]+)")
_ORDINAL: Final = frozenset({"st", "nd", "rd", "th"})
_ORDINAL_WORDS: Final = {
    str(i): w
    for i, w in enumerate(
        _words("first second third fourth fifth sixth seventh eighth ninth tenth"), 1
    )
}
_THOUSANDS: Final = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
#: A quoted span ('bread', "Hello there"): compared whole, as a name is.
_QUOTED: Final = re.compile(
    r"(?:^|(?<=\s))['\"\u201c\u2018]([^'\"\u201d\u2019]{1,80})['\"\u201d\u2019](?=[\s.,;:!?]|$)"
)
#: Skipped when reading the word after a question word ("what is the way" -> "way").
_FILLER: Final = frozenset({"is", "'s", "the", "a", "are", "was"})
_SENTENCE_END: Final = frozenset(".!?")
_CONTRACTIONS: Final = {"'re": "are", "'ve": "have", "'m": "am", "'d": "would", "'ll": "'ll"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # word, number, entity, symbol
    text: str  # folded
    capital: bool = False  # written with a capital letter where a sentence does not start


@dataclass(frozen=True, slots=True)
class Parsed:
    """What the guards read from one text (made once per text, then compared)."""

    negations: int
    polarity: tuple[tuple[int, int, int], ...]
    reversals: frozenset[str]
    amounts: tuple[str, ...]
    entities: frozenset[str]
    names: frozenset[str]
    comparisons: frozenset[str]
    frame: tuple[frozenset[Any], ...]
    modality: frozenset[str]
    sequence: tuple[str, ...]
    positions: tuple[int, ...]
    content: frozenset[str]
    words: frozenset[str]


def fold(text: str) -> str:
    """NFKC, format characters dropped, one kind of apostrophe, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.split())


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _number(text: str) -> str:
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    if "." in text and text.replace(".", "", 1).isdigit():
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text.lstrip("0") or "0"


def _expand(word: str) -> list[str]:
    """A folded word with its contractions spelled out (``isn't`` -> ``is``, ``not``)."""
    if word in lx.NEGATED_AUX:
        return [lx.NEGATED_AUX[word], "not"]
    if word.endswith("n't"):
        return [word[:-3], "not"]
    if word.endswith("'s"):  # possessive or "is": the bare word is what both share
        return [word[:-2], "'s"]
    for suffix, full in _CONTRACTIONS.items():
        if word.endswith(suffix):
            return [word[: -len(suffix)], full]
    return [word]


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    start = True  # at the start of a sentence
    for chunk in text.split():
        core = chunk.strip(_EDGE)
        low = core.casefold()
        if core and _EMAIL.fullmatch(low):
            out.append(_Token("entity", low))
        elif core and not low.replace(".", "").isdigit() and _URL.fullmatch(low):
            out.append(_Token("entity", low.rstrip("/")))
        else:
            for piece in _PIECE.findall(chunk):
                out.extend(_piece(piece, start))
                start = False
        start = chunk[-1:] in _SENTENCE_END
    return out


def _piece(piece: str, start: bool) -> list[_Token]:
    low = piece.casefold()
    if low[:1].isdigit():
        return [_Token("number", _number(low))]
    if not low[:1].isalpha():
        symbol = lx.CURRENCY_SYMBOLS.get(low)
        return [_Token("word", symbol)] if symbol else []
    upper = piece[:1].isupper()
    acronym = len(piece) > 1 and piece.isupper()
    capital = (upper and not start) or acronym
    return [_Token("word", w, capital and i == 0) for i, w in enumerate(_expand(low)) if w]


def _split_number_units(text: str) -> str:
    """``5km`` -> ``5 km``, ``3pm`` -> ``3 pm``, ``2nd`` -> ``2``; other letter-digit mixes
    (``INV2041``) stay whole and read as ids."""

    def sub(m: re.Match[str]) -> str:
        number, unit = m.group(1), m.group(2).casefold()
        if unit in _ORDINAL:
            return _ORDINAL_WORDS.get(number, m.group(0))
        if unit in lx.UNIT_WORDS or unit in lx.DATE_WORDS or unit in {"k", "m", "bn"}:
            return f"{number} {unit}"
        return m.group(0)

    return _NUMBER_UNIT.sub(sub, text)


def _ids(text: str) -> tuple[str, list[str]]:
    """Pull out ids: a chunk mixing letters and digits (``INV-2041``), or a ``#``/``@``
    handle, that is not an e-mail address or a URL."""
    kept: list[str] = []
    ids: list[str] = []
    for chunk in text.split():
        core = chunk.strip(_EDGE)
        low = core.casefold()
        mixed = any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
        handle = len(core) > 1 and core[0] in "#@"
        if (mixed or handle) and not _EMAIL.fullmatch(low) and not _URL.fullmatch(low):
            ids.append(low)
        else:
            kept.append(chunk)
    return " ".join(kept), ids


def _question(word: str, following: str) -> str:
    """A question word's class, read with the word after it (``how many``, ``what time``)."""
    if word == "how" and following in lx.HOW_QUANTITY:
        return "what" if following == "much" else f"how {following}"
    if word in ("what", "which") and following in lx.WHEN_NOUNS:
        return "when"
    if word == "what" and following in lx.HOW_NOUNS:
        return "how"
    return lx.QUESTION_WORDS[word]


def _is_number(tokens: list[_Token], i: int) -> bool:
    return 0 <= i < len(tokens) and (
        tokens[i].kind == "number" or tokens[i].text in lx.NUMBER_WORDS
    )


def _meaningful(token: _Token) -> bool:
    return token.kind == "word" and token.text not in lx.STOPWORDS


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Parsed:
    """Read one text for the guards (remembered: the same stored question comes back)."""
    text = _split_number_units(fold(text))
    quoted = [q.casefold() for q in _QUOTED.findall(text)]
    text, ids = _ids(text)
    ids += [f"'{q}'" for q in quoted]
    tokens = _tokens(text)
    words = [t.text for t in tokens if t.kind == "word"]
    # "X's Y" reads as "Y of X", so "France's capital" and "the capital of France" agree.
    i = 0
    while i + 2 < len(tokens):
        owner, owned = tokens[i], tokens[i + 2]
        if tokens[i + 1].text == "'s" and _meaningful(owner) and _meaningful(owned):
            tokens[i], tokens[i + 2] = owned, owner
            i += 3
        else:
            i += 1
    amounts: list[str] = []
    entities = set(ids)
    names: set[str] = set()
    sequence: list[str] = []
    positions: list[int] = []
    content: set[str] = set()
    questions: set[str] = set()
    for i, t in enumerate(tokens):
        w = t.text
        if t.kind == "number":
            amounts.append(w)
            sequence.append(w)
            positions.append(i)
            continue
        if t.kind == "entity":
            entities.add(w)
            sequence.append(w)
            positions.append(i)
            continue
        if w in lx.NUMBER_WORDS:
            amounts.append(lx.NUMBER_WORDS[w])
        currency = lx.CURRENCIES.get(w)
        measured = (w in lx.UNIT_WORDS and _is_number(tokens, i - 1)) or (
            currency is not None and (_is_number(tokens, i - 1) or _is_number(tokens, i + 1))
        )
        if measured or w in lx.DATE_WORDS:
            amounts.append(currency or (_stem(w) if measured else w))
            sequence.append(amounts[-1])
            positions.append(i)
        if t.capital and w not in lx.STOPWORDS:
            names.add(w)
        if w in lx.QUESTION_WORDS:
            ahead = [t.text for t in tokens[i + 1 : i + 5] if t.text not in _FILLER]
            questions.add(_question(w, ahead[0] if ahead else ""))
        # Numbers, dates and measured units are the number guard's to compare.
        counted = measured or w in lx.NUMBER_WORDS or w in lx.DATE_WORDS
        if not counted and w not in lx.STOPWORDS and w not in lx.NEGATIONS and w != "'s":
            stem = _stem(w)
            content.add(stem)
            sequence.append(stem)
            positions.append(i)
    comparisons = {w for w in words if w in lx.COMPARISONS}
    # "redder than": a comparative the list lacks.
    comparisons |= {
        words[i - 1]
        for i, w in enumerate(words)
        if w == "than" and i > 0 and words[i - 1].endswith("er")
    }
    frame = (
        frozenset(questions),
        frozenset(lx.TENSE[w] for w in words if w in lx.TENSE),
        frozenset(lx.PERSON[w] for w in words if w in lx.PERSON),
        frozenset(lx.QUANTIFIERS[w] for w in words if w in lx.QUANTIFIERS),
        frozenset(Counter(lx.DIRECTIONS[w] for w in words if w in lx.DIRECTIONS).items()),
    )
    modality = {lx.MODALITY[w] for w in words if w in lx.MODALITY}
    if "have to" in " ".join(words) or "has to" in " ".join(words):
        modality.add("must")
    return Parsed(
        negations=sum(w in lx.NEGATIONS for w in words),
        polarity=_polarity(words),
        reversals=frozenset(w for w in words if w in lx.REVERSALS),
        amounts=tuple(sorted(amounts)),
        entities=frozenset(entities),
        names=frozenset(names),
        comparisons=frozenset(comparisons),
        frame=frame,
        modality=frozenset(modality),
        sequence=tuple(sequence),
        positions=tuple(positions),
        content=frozenset(content),
        words=frozenset(words) | frozenset(content),
    )


def _polarity(words: list[str]) -> tuple[tuple[int, int, int], ...]:
    """For each antonym pair the text uses: its index and how often it uses each side."""
    out = []
    for index, (left, right) in enumerate(lx.ANTONYMS):
        n_left = sum(w in left for w in words)
        n_right = sum(w in right for w in words)
        if n_left or n_right:
            out.append((index, n_left, n_right))
    return tuple(out)


def _opposed(a: Parsed, b: Parsed) -> bool:
    """One text uses a side of an antonym pair the other does not use as often."""
    left = {p[0]: p[1:] for p in a.polarity}
    right = {p[0]: p[1:] for p in b.polarity}
    for index in left.keys() | right.keys():
        x, y = left.get(index), right.get(index)
        if x == y:
            continue
        if index in lx.PARTICLES and (x is None or y is None):
            continue  # "on Sunday" in one text only is no opposition
        return True
    return False


def _in_order(a: Parsed, b: Parsed) -> bool:
    """The meaningful words both texts hold come in the same order, but for neighbours.

    Two words that stand side by side in one of the texts may swap (``password for
    Acme`` and ``Acme password``); any other inversion (``from Paris to Rome`` and ``from
    Rome to Paris``, ``Alice owes Bob`` and ``Bob owes Alice``) is refused.
    """
    if a.sequence == b.sequence:
        return True
    common = set(a.sequence) & set(b.sequence)
    if len(a.sequence) != len(set(a.sequence)) or len(b.sequence) != len(set(b.sequence)):
        # A word said twice: no single position to compare, so the common words in order.
        return [x for x in a.sequence if x in common] == [x for x in b.sequence if x in common]
    pos_a = {x: a.positions[i] for i, x in enumerate(a.sequence) if x in common}
    pos_b = {x: b.positions[i] for i, x in enumerate(b.sequence) if x in common}
    items = sorted(common, key=pos_a.__getitem__)
    for i, x in enumerate(items):
        for y in items[i + 1 :]:
            if pos_b[x] > pos_b[y]:
                near = abs(pos_a[x] - pos_a[y]) == 1 or abs(pos_b[x] - pos_b[y]) == 1
                if not near:
                    return False
    return True


def _same_frame(a: Parsed, b: Parsed) -> bool:
    """Quantifiers and directions match; question word, tense, person and modality match
    where both texts have one (an imperative and its question form agree, and so do
    "show me" and "show")."""
    if a.frame[3:] != b.frame[3:]:
        return False
    pairs = (*zip(a.frame[:3], b.frame[:3], strict=True), (a.modality, b.modality))
    return all(not (x and y) or x == y for x, y in pairs)


def content_change(a: Parsed, b: Parsed) -> float:
    """The share of content words in one text but not the other (0: the same words)."""
    union = a.content | b.content
    return len(a.content ^ b.content) / len(union) if union else 0.0


def content_replaced(a: Parsed, b: Parsed) -> bool:
    """Each text has a content word the other lacks: a word was replaced, not just added
    or dropped ("the heater folder" and "the printer folder")."""
    return bool(a.content - b.content) and bool(b.content - a.content)


@dataclass(frozen=True, slots=True)
class NearMissGuards:
    """The checks that refuse a near hit; each can be turned off, the share tuned.

    Args:
        max_content_change: the largest share of content words (words other than function
            words, stemmed) that one text may add to the other, from 0 (the same content
            words) to 1. A larger share is a refusal named ``content``, and so is any
            content word replaced by another (each text has one the other lacks), whatever
            the share: a synonym the model would accept is refused with a near miss.
        negation: refuse a different count of negations (``not``, ``never``, ``n't``, ...)
            or words of opposite polarity (``open``/``closed``, ``enable``/``disable``).
        number: refuse different numbers, dates, times, periods, units or currencies.
        entity: refuse different e-mail addresses, URLs, ids, or a name (a word written
            with a capital letter where no sentence starts) the other text lacks.
        comparison: refuse different comparison words (more/less, before/after, ``-er
            than``).
        frame: refuse a different question word, tense, person, quantifier, direction
            (to/from, by, with) or modality (may one / must one).
        order: refuse the same meaningful words in another order (``from Paris to Rome``
            and ``from Rome to Paris``).

    Raises:
        ValueError: when ``max_content_change`` is not between 0 and 1.
    """

    max_content_change: float = 0.34
    negation: bool = True
    number: bool = True
    entity: bool = True
    comparison: bool = True
    frame: bool = True
    order: bool = True

    def __post_init__(self) -> None:
        share = self.max_content_change
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            raise ValueError(f"max_content_change must be between 0 and 1, got {share!r}")

    def refusals(self, stored: str, asked: str) -> tuple[str, ...]:
        """The guards that refuse serving ``stored``'s answer to ``asked`` (empty: allowed).

        Args:
            stored: the question whose answer is in the cache.
            asked: the question being asked now.

        Returns:
            The names of the guards that found a difference, in :data:`GUARDS` order.
        """
        if len(stored) > MAX_GUARDED_CHARS or len(asked) > MAX_GUARDED_CHARS:
            return ("content",)
        a, b = parse(stored), parse(asked)
        found: list[str] = []
        if self.negation and (
            a.negations != b.negations or a.reversals != b.reversals or _opposed(a, b)
        ):
            found.append("negation")
        if self.number and a.amounts != b.amounts:
            found.append("number")
        if self.entity and (
            a.entities != b.entities or not a.names <= b.words or not b.names <= a.words
        ):
            found.append("entity")
        if self.comparison and a.comparisons != b.comparisons:
            found.append("comparison")
        if self.frame and not _same_frame(a, b):
            found.append("frame")
        if self.order and not _in_order(a, b):
            found.append("order")
        if content_replaced(a, b) or content_change(a, b) > self.max_content_change:
            found.append("content")
        return tuple(found)
