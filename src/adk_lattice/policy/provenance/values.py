"""Kinds of sensitive values for :class:`ProvenanceGuard`: normalise, extract, ground.

A value is *grounded* when its normalised form appears in trusted text: for the structured
kinds (``email``, ``iban``, ``url``, ``number``, ``id``, ``phone``) the trusted text is cut
into normalised tokens of that kind and the value must equal one of them; for ``text`` the
normalised value must be a substring of the normalised trusted text. Every pattern here is
anchored with a look-behind so each run of candidate characters is scanned once (linear
time), and every input is capped in size before it is scanned.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Context, Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import urlsplit

from cachetools import LRUCache

#: Every kind a sensitive argument may be declared as.
KINDS: Final = frozenset({"email", "iban", "url", "number", "id", "phone", "text"})
#: Longest scalar value checked; a longer one is never grounded (fail safe).
MAX_VALUE_CHARS: Final = 10_000
#: Most scalar leaves in one argument (a list of recipients); more is never grounded.
MAX_LEAVES: Final = 256
_MAX_DEPTH: Final = 8

_EMAIL: Final = re.compile(r"(?<![\w.%+\-])[\w.%+\-]{1,64}@[\w\-]+(?:\.[\w\-]+)+")
_EMAIL_VALUE: Final = re.compile(r"[\w.%+\-]{1,64}@[\w\-]+(?:\.[\w\-]+)+")
_IBAN: Final = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?:[ \-]?[A-Z0-9]){10,30}")
_IBAN_VALUE: Final = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{10,30}")
_URL: Final = re.compile(
    r"(?<![\w@.\-/])(?:[a-z][a-z0-9+.\-]{1,15}://)?[\w\-]+(?:\.[\w\-]+)+(?::\d{1,5})?"
    r"(?:[/?#][^\s<>\"'`()\[\]{}]*)?"
)
_NUMBER: Final = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\d.,])\d+(?:\.\d+)?")
_PHONE: Final = re.compile(r"(?<![\d+])\+?\d[\d ().\-]{4,24}\d")
_TOKEN: Final = re.compile(r"\S+")
_SPACES: Final = re.compile(r"\s+")
#: Format characters (zero-width, bidi controls, soft hyphen) and lone surrogates.
_FORMAT: Final = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_STRIP: Final = ".,;:!?\"'`()[]{}<>*"
_CURRENCY: Final = re.compile(r"^(?:[A-Z]{3}|[$€£¥])\s*|\s*(?:[A-Z]{3}|[$€£¥])$")


class Malformed(ValueError):
    """An argument value that is not a value of its declared kind: never grounded."""


def clean(text: str) -> str:
    """NFKC-fold, drop format characters (zero-width, bidi), fold case, collapse spaces."""
    text = _FORMAT.sub("", unicodedata.normalize("NFKC", text))
    return _SPACES.sub(" ", text.casefold()).strip()


def _decimal(text: str) -> str | None:
    text = _CURRENCY.sub("", text.strip().upper()).replace(",", "").replace("_", "")
    try:
        value = Decimal(text.replace(" ", ""))
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    digits, exponent = value.as_tuple()[1:]
    if len(digits) + abs(int(exponent)) > MAX_VALUE_CHARS:
        return None  # its plain form would be longer than any value checked
    # Exact: the default context would round to 28 digits (two long numbers the same).
    normal = value.normalize(Context(prec=len(digits)))
    return format(normal, "f") if normal == normal.to_integral() else str(normal)


def _url_key(text: str) -> str | None:
    text = text.strip().rstrip(".,;:!?")
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return None
    if not host or "." not in host:
        return None
    if host.startswith("www."):
        host = host[4:]
    netloc = host if port in (None, 80, 443) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def normalise(kind: str, value: str) -> str:
    """The comparable form of one scalar value of ``kind``.

    Raises:
        Malformed: when the value is not a value of that kind.
    """
    if kind == "text":
        return clean(value)
    text = clean(value)
    if not text:
        raise Malformed(kind)
    if kind == "email":
        text = text.removeprefix("mailto:")
        if not _EMAIL_VALUE.fullmatch(text):
            raise Malformed(kind)
        return text
    if kind == "iban":
        compact = text.upper().replace(" ", "").replace("-", "")
        if not _IBAN_VALUE.fullmatch(compact):
            raise Malformed(kind)
        return compact
    if kind == "url":
        key = _url_key(text)
        if key is None:
            raise Malformed(kind)
        return key
    if kind == "number":
        number = _decimal(text)
        if number is None:
            raise Malformed(kind)
        return number
    if kind == "phone":
        digits = _digits(text)
        if len(digits) < 5 or len(digits) > 20:
            raise Malformed(kind)
        return digits.lstrip("0") or "0"
    return text.replace(" ", "").strip(_STRIP).lstrip("#@")  # id


def _tokens_iban(text: str) -> Iterator[str]:
    text, pos = text.upper(), 0
    # A match may swallow the start of the next IBAN: search again from just past its start.
    while (m := _IBAN.search(text, pos)) is not None:
        pos, raw = m.start() + 1, m.group()
        # The match may run into following words ("... 0130 00 PLEASE"): every prefix that
        # ends where a group ends is a candidate.
        ends = [i for i, c in enumerate(raw) if c in " -"] + [len(raw)]
        found = [raw[:end].replace(" ", "").replace("-", "") for end in ends]
        found = [c for c in found if _IBAN_VALUE.fullmatch(c)]
        # Prefer the checksum-valid candidates; an account number the user typed that is not
        # a valid IBAN still grounds itself (all candidates).
        valid = [c for c in found if _iban_valid(c)]
        yield from valid or found


def _iban_valid(compact: str) -> bool:
    """The ISO 13616 mod-97 check."""
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _tokens_id(text: str) -> Iterator[str]:
    for m in _TOKEN.finditer(text):
        token = m.group().strip(_STRIP).lstrip("#@")
        if token:
            yield token
            # "ch_1/refund" or "c-1,c-2": the parts are ids too.
            for part in re.split(r"[/,;|=]", token):
                part = part.strip(_STRIP)
                if part and part != token:
                    yield part


def _extract(kind: str, text: str) -> Iterator[str]:
    if kind == "email":
        yield from (m.group().rstrip(".") for m in _EMAIL.finditer(text))
    elif kind == "iban":
        yield from _tokens_iban(text)
    elif kind == "url":
        for m in _URL.finditer(text):
            key = _url_key(m.group())
            if key is not None:
                yield key
    elif kind == "number":
        for m in _NUMBER.finditer(text):
            number = _decimal(m.group())
            if number is not None:
                yield number
    elif kind == "phone":
        for m in _PHONE.finditer(text):
            digits = _digits(m.group())
            if 5 <= len(digits) <= 20:
                yield digits.lstrip("0") or "0"
    elif kind == "id":
        yield from _tokens_id(text)


#: Token sets are remembered per (kind, text): every check of a session re-reads the same
#: history. Bounded by an estimate of the characters held; long texts are not remembered.
_MEMO: LRUCache[tuple[str, bool, str], tuple[int, frozenset[str] | str]] = LRUCache(
    maxsize=8_000_000, getsizeof=lambda entry: entry[0]
)
_MEMO_LOCK: Final = threading.Lock()
_MEMO_MAX_TEXT: Final = 131_072


def tokens_of(kind: str, text: str, whole: bool = False) -> frozenset[str] | str:
    """The normalised tokens of ``kind`` in one trusted text (for ``text``: the clean text).

    Args:
        kind: the kind of value.
        text: one trusted text.
        whole: the text is a trusted field's value: it is also one token as a whole.
    """
    key = (kind, whole and kind != "text", text)
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
    if hit is not None:
        return hit[1]
    cleaned = clean(text)
    found: frozenset[str] | str
    if kind == "text":
        found = cleaned
    else:
        bag = set(_extract(kind, cleaned))
        if whole:
            with contextlib.suppress(Malformed):
                bag.add(normalise(kind, text))
        found = frozenset(bag)
    if len(text) <= _MEMO_MAX_TEXT:
        with _MEMO_LOCK:
            _MEMO[key] = (3 * len(text) + 200, found)
    return found


class Grounding:
    """The trusted texts of one check; tokens are extracted per text, and remembered.

    Args:
        texts: trusted texts (already capped by the caller).
        whole: trusted scalar values taken whole (a trusted field's string), so an id with
            spaces in a structured output is still one token.
        fields: ``(value, echo)`` pairs: a trusted tool's field value, taken whole too, and
            the arguments of the call that produced it; a token also found in those
            arguments does not count from that value (a tool echoing its input).
        hashed: ``{salt: hashes}`` of tokens trusted elsewhere (a caller's), checked with
            ``hasher(salt, kind, normal)`` for every kind but ``text``.
        hasher: the salted hash function the hashes were made with.
    """

    def __init__(
        self,
        texts: Iterable[str],
        whole: Iterable[str] = (),
        *,
        fields: Iterable[tuple[str, Sequence[str]]] = (),
        hashed: Mapping[str, frozenset[str]] | None = None,
        hasher: Callable[[str, str, str], str] | None = None,
    ) -> None:
        none: tuple[str, ...] = ()
        self._sources: list[tuple[str, bool, Sequence[str]]] = [
            *((t, False, none) for t in texts if t),
            *((t, True, none) for t in whole if t),
            *((t, True, echo) for t, echo in fields if t),
        ]
        self._hashed = dict(hashed or {}) if hasher is not None else {}
        self._hasher = hasher

    def tokens(self, kind: str) -> frozenset[str]:
        """Every normalised token of ``kind`` found in the trusted texts (echoes excluded)."""
        bag: set[str] = set()
        for text, whole, echo in self._sources:
            found = tokens_of(kind, text, whole)
            if isinstance(found, frozenset):
                bag |= found - _echoed(kind, echo)
        return frozenset(bag)

    def grounded(self, kind: str, value: str) -> bool:
        """Whether one scalar value of ``kind`` appears in the trusted texts.

        Raises:
            Malformed: when the value is not a value of that kind.
        """
        normal = normalise(kind, value)
        if kind != "text" and self._hasher is not None:
            hasher = self._hasher
            if any(hasher(salt, kind, normal) in hs for salt, hs in self._hashed.items()):
                return True
        for text, whole, echo in self._sources:
            if _holds(kind, normal, tokens_of(kind, text, whole)) and not any(
                _holds(kind, normal, tokens_of(kind, e, True)) for e in echo
            ):
                return True
        return False


def _holds(kind: str, normal: str, found: frozenset[str] | str) -> bool:
    """Whether a text's tokens (or, for ``text``, its clean form) hold the value."""
    if normal in found:  # a token of the set, or a substring of the clean text
        return True
    return kind == "phone" and any(_same_phone(normal, t) for t in found)


def _echoed(kind: str, echo: Sequence[str]) -> frozenset[str]:
    found = [tokens_of(kind, e, True) for e in echo]
    return frozenset(t for f in found if isinstance(f, frozenset) for t in f)


def _same_phone(a: str, b: str) -> bool:
    """A national and an international form of one number (``030 1234567`` / ``+49 30 ...``)."""
    short, long = sorted((a, b), key=len)
    return len(short) >= 7 and long.endswith(short) and len(long) - len(short) <= 3


def leaves(value: Any, depth: int = 0) -> Iterator[str | None]:
    """The scalar values of an argument as strings; None stands for a malformed leaf.

    Lists and tuples are walked (every recipient must be grounded); a mapping, a bool, a
    non-finite number, an over-long string, a string with lone surrogates (no valid text
    holds one) or nesting deeper than a few levels is malformed.
    """
    if value is None:
        return
    if isinstance(value, list | tuple):
        if depth >= _MAX_DEPTH:
            yield None
            return
        for item in value:
            yield from leaves(item, depth + 1)
    elif isinstance(value, str):
        ok = len(value) <= MAX_VALUE_CHARS and not _SURROGATE.search(value)
        yield value if ok else None
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value) if value.bit_length() < 200 else None
    elif isinstance(value, float):
        yield repr(value) if math.isfinite(value) else None
    else:
        yield None


def ungrounded(grounding: Grounding, kind: str, value: Any) -> bool:
    """Whether any leaf of an argument value is malformed or not grounded (fail safe)."""
    for count, leaf in enumerate(leaves(value), 1):
        if leaf is None or count > MAX_LEAVES:
            return True
        try:
            if not grounding.grounded(kind, leaf):
                return True
        except Malformed:
            return True
    return False
