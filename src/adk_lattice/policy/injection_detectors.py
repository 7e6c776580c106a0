"""The detector protocol ``InjectionGuard`` runs, and the pattern detector built on it.

A detector turns one text into a :class:`Finding` or None. The guard runs its detectors in
order, cheapest first, and the first finding decides. Three ship with the package:
:class:`RulesDetector` (patterns, here), ``ClassifierDetector`` (a local sequence
classifier) and ``JudgeDetector`` (asks a model).
"""

from __future__ import annotations

import base64
import binascii
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from cachetools import LRUCache

from ._normalize import clean, fold
from .injection_rules import RULES, SQUASHED_OVERRIDE, Rule

#: A plain-function detector: ``(text, source) -> truthy verdict or None``, sync or async.
UserDetector = Callable[[str, str], Any]

_CODE: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")
_SPACES: Final = re.compile(r"[ \t]+")
_NOT_LETTER: Final = re.compile(r"[^a-z]+")
_B64: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX: Final = re.compile(r"(?:\\x[0-9a-fA-F]{2}){8,}|\b(?:[0-9a-fA-F]{2}[ :]?){12,}\b")
#: Verdicts on texts up to this long are remembered: each model call of a turn re-sends the
#: same user turn and tool results.
_MEMO_CHARS: Final = 8_192


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a text was flagged: a content-free family code, the rule or detector names.

    Attributes:
        family: what kind of attack (``instruction_override``, ``classifier``...): a code.
        rules: the rules or detectors that fired (names, never text).
        source: ``user`` or ``tool:<name>`` (several tools joined with ``+``).
        encoded: the attack was found inside base64 or hex.
    """

    family: str
    rules: tuple[str, ...] = ()
    source: str = "user"
    encoded: bool = False

    @property
    def code(self) -> str:
        """The family as a reason code; ``detector`` when it is not a plain code."""
        return self.family if _CODE.match(self.family) else "detector"


@runtime_checkable
class Detector(Protocol):
    """One way of recognising an attack: ``await detector.detect(text, source)``.

    ``name`` is a short code (letters, digits, ``_.:-``) used as the reason when the
    detector has no family of its own. ``source`` is ``"user"`` or ``"tool:<name>"``.
    """

    name: str

    async def detect(self, text: str, source: str = "user") -> Finding | None:
        """A :class:`Finding` when ``text`` looks like an attack, else None."""


class RulesDetector:
    """The built-in pattern detector: weighted rules per family, on three views of the text.

    Each text is matched as written (NFKC, invisible characters dropped, look-alike letters
    folded), then de-obfuscated (markdown and HTML removed, ``1gn0re`` and ``i g n o r e``
    read as words), then with every non-letter removed for the override phrase alone; base64
    and hex runs are decoded and matched too. Every pattern is linear-time.

    Args:
        rules: the rules (default: the built-in set).
        decode: also look inside base64 and hex runs.
        name: the detector name.
    """

    def __init__(
        self, rules: Iterable[Rule] = RULES, *, decode: bool = True, name: str = "rules"
    ) -> None:
        self.rules = tuple(rules)
        self.decode = decode
        self.name = name
        # A benign verdict is stored as "" (None would read as a miss).
        self._memo: LRUCache[tuple[str, str], Finding | str] = LRUCache(maxsize=1_024)

    async def detect(self, text: str, source: str = "user") -> Finding | None:
        """The verdict on one text (see :meth:`scan`)."""
        return self.scan(text, source)

    def scan(self, text: str, source: str = "user") -> Finding | None:
        """The verdict on one text, synchronously: a :class:`Finding` or None."""
        if len(text) > _MEMO_CHARS:
            return self._scan(text, source, 0)
        key = (source, text)
        known = self._memo.get(key)
        if known is None:
            known = self._scan(text, source, 0) or ""
            self._memo[key] = known
        return known if isinstance(known, Finding) else None

    def _scan(self, text: str, source: str, depth: int) -> Finding | None:
        # Tool output has no business addressing the assistant: weak signals count double.
        boost = 2.0 if source.startswith("tool:") else 1.0
        plain = _SPACES.sub(" ", clean(text))
        found = self._match(plain, source, boost)
        if found is None:
            folded = fold(text)
            # The rules ignore case: a fold that only lower-cased would find nothing new.
            if folded != plain.lower():
                found = self._match(folded, source, boost)
            if found is None and SQUASHED_OVERRIDE.search(_NOT_LETTER.sub("", folded)):
                found = Finding("instruction_override", ("squashed_override",), source)
        if found is None and depth == 0 and self.decode and self.rules:
            for hidden in decoded(plain):
                inner = self._scan(hidden, source, 1)
                if inner is not None:
                    return Finding("encoded_payload", inner.rules, source, encoded=True)
        return found

    def _match(self, text: str, source: str, boost: float) -> Finding | None:
        score: dict[str, float] = {}
        hits: dict[str, list[str]] = {}
        for rule in self.rules:
            if rule.pattern.search(text):
                score[rule.family] = score.get(rule.family, 0.0) + rule.weight * boost
                hits.setdefault(rule.family, []).append(rule.name)
        if sum(score.values()) < 1.0:
            return None
        family = max(score, key=lambda f: score[f])
        return Finding(family, tuple(n for f in hits for n in hits[f]), source)


class CallableDetector:
    """A plain function as a :class:`Detector`: a truthy verdict flags under its name.

    The verdict's text is never used (it may quote the input): the finding's family is the
    function's name.

    Args:
        fn: ``(text, source) -> verdict or None``, sync or async.
        name: the code to report (default: the function's ``__name__``).

    Raises:
        TypeError: when ``fn`` is not callable.
    """

    def __init__(self, fn: UserDetector, name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"detector {fn!r} is not callable and has no detect() method")
        self.fn = fn
        raw = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.name: str = raw if isinstance(raw, str) and _CODE.match(raw) else "detector"

    async def detect(self, text: str, source: str = "user") -> Finding | None:
        """Call the function; a truthy verdict is a finding named after the detector."""
        verdict = self.fn(text, source)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return Finding(self.name, (self.name,), source) if verdict else None


def as_detector(value: Detector | UserDetector) -> Detector:
    """``value`` itself when it has ``detect`` and ``name``, else wrapped in CallableDetector.

    Raises:
        TypeError: when ``value`` is neither a detector nor callable, or its name is not a
            short code.
    """
    if callable(getattr(value, "detect", None)):
        name = getattr(value, "name", None)
        if not isinstance(name, str) or not _CODE.match(name):
            raise TypeError(
                f"detector {type(value).__name__} needs a .name made of letters, digits and "
                f"_.:- (1-80 characters), used as its reason code; got {name!r}"
            )
        return value  # type: ignore[return-value]
    return CallableDetector(value)  # type: ignore[arg-type]


def decoded(text: str) -> Iterable[str]:
    """Printable text hidden in base64 or hex runs of ``text``."""
    for m in _B64.finditer(text):
        token = m.group(0)
        if token.isalpha() or token.isdigit():
            continue  # plain words and numbers are not encodings
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=False)
        except (binascii.Error, ValueError):
            continue
        yield from _printable(raw)
    for m in _HEX.finditer(text):
        digits = re.sub(r"\\x|[ :]", "", m.group(0))
        try:
            yield from _printable(bytes.fromhex(digits))
        except ValueError:
            continue


def _printable(raw: bytes) -> Iterable[str]:
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    if s and sum(c.isprintable() or c.isspace() for c in s) / len(s) > 0.95:
        yield s
