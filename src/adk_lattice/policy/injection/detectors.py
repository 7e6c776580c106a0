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

from .._text.engine import ENGINE, PatternSet, byte_spans
from .._text.normalize import LEET_WORD_NOT_TIME, clean, fold
from .rules import RULES, SQUASHED_OVERRIDE, Rule

#: A plain-function detector: ``(text, source) -> truthy verdict or None``, sync or async.
UserDetector = Callable[[str, str], Any]

_CODE: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")
_SPACES: Final = re.compile(r"[ \t]{2,}|\t")
_B64_BYTES: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
)
#: A base64 run (standard or URL alphabet) of 16 characters or more; the run must not touch
#: another base64 character or ``=`` on either side (checked on each candidate). Runs of
#: letters alone (words, not encodings) are not matched at all, so a text of long words
#: costs no Python per word; the length is checked per candidate. Both are matched on the
#: text's UTF-8 bytes (ASCII classes only).
_B64: Final = byte_spans(r"[A-Za-z]*[0-9+/_-][A-Za-z0-9+/_-]*={0,2}|[A-Za-z]+={1,2}")
_HEX: Final = byte_spans(r"(?:\\x[0-9a-fA-F]{2}){8,}|\b(?:[0-9a-fA-F]{2}[ :]?){12,}\b")
#: Probes run in the rules' own RE2 pass over the plain view, each a superset of what one
#: costly step can find there: a step whose probe finds nothing would change nothing, so
#: it is skipped (bar one exception: digits in a timestamp's ``30t12`` or ``00z``, which
#: spell no word, are not a reason to read digits as letters). Valid on ASCII text;
#: ``<*~``` (markup the fold removes, which can join letters into new words) opens the
#: fold's steps whatever the probes say.
PROBES: Final = (
    ("markup", r"[<*~`]"),
    ("leet", "(?i:" + LEET_WORD_NOT_TIME + ")"),
    (
        "spelled",
        r"(?i:(?:\A|[^a-z0-9])(?:[a-z013457@$][ .\-_])+[a-z013457@$](?:[^a-z0-9]|\Z))",
    ),
    ("base64", r"[A-Za-z0-9+/_-]{16}"),
    ("hex", r"(?:\\x[0-9a-fA-F]{2}){8}|(?:[0-9a-fA-F]{2}[ :]?){12}"),
)
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


# `make mutation` leaves the protocol alone: its method is a stub that never runs, and a
# mutated copy of it would become a protocol member that isinstance() requires of detectors.
@runtime_checkable
class Detector(Protocol):  # pragma: no mutate block
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
        # One pass per view finds every rule that matches: rules grouped by their flags, the
        # squashed override phrase (spread over the letters) joins the first group.
        self._sets = _rule_sets(self.rules)
        #: The probes' indices in the first set (none on ``re``: each probe would be a pass).
        self._probes = [(name, len(self.rules) + 1 + k) for k, (name, _) in enumerate(PROBES)]
        if ENGINE != "re2":
            self._probes = []
        # A case-sensitive rule of one's own can match the lower-cased view where the text
        # as written did not: the fold is then matched even when it only lower-cased.
        self._all_ignore_case = all(patterns.ignore_case for patterns, _ in self._sets)
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
        plain = cleaned = clean(text)
        if "  " in plain or "\t" in plain:
            plain = _SPACES.sub(" ", plain)
        hits = self._hits(plain)
        found = self._match(hits, source, boost)
        needs = self._needs(hits, plain)
        if found is None:
            folded = fold(text, leet="leet" in needs, spelled="spelled" in needs, cleaned=cleaned)
            # Rules that ignore case: a fold that only lower-cased finds nothing new, bar the
            # squashed phrase, which only ever looks at the folded view.
            if folded != plain.lower() or not self._all_ignore_case:
                hits = self._hits(folded)
                found = self._match(hits, source, boost)
            elif not plain.isascii():
                hits = self._hits(folded)
            # else every set ignores case, the squashed phrase's too, and it was looked for
            # on ``plain`` already: on ASCII text, the same as on the lower-cased text.
            if found is None and len(self.rules) in hits:
                found = Finding("instruction_override", ("squashed_override",), source)
        if found is None and depth == 0 and self.decode and self.rules:
            for hidden in decoded(plain, "base64" in needs, "hex" in needs):
                inner = self._scan(hidden, source, 1)
                if inner is not None:
                    return Finding("encoded_payload", inner.rules, source, encoded=True)
        return found

    def _hits(self, text: str) -> set[int]:
        """Indices of the rules (and ``len(rules)``: the squashed phrase) found in ``text``."""
        found: set[int] = set()
        for patterns, index in self._sets:
            found.update(index[i] for i in patterns.matches(text))
        return found

    def _needs(self, hits: set[int], plain: str) -> set[str]:
        """The costly steps that can find anything in ``plain`` (see :data:`PROBES`)."""
        if not self._probes or not plain.isascii():
            return {name for name, _ in PROBES}
        needs = {name for name, i in self._probes if i in hits}
        if "markup" in needs:
            needs |= {"leet", "spelled"}
        return needs

    def _match(self, hits: set[int], source: str, boost: float) -> Finding | None:
        score: dict[str, float] = {}
        names: dict[str, list[str]] = {}
        count = len(self.rules)
        for i in sorted(i for i in hits if i < count):  # in rule order; probes left out
            rule = self.rules[i]
            score[rule.family] = score.get(rule.family, 0.0) + rule.weight * boost
            names.setdefault(rule.family, []).append(rule.name)
        if sum(score.values()) < 1.0:
            return None
        family = max(score, key=lambda f: score[f])
        return Finding(family, tuple(n for f in names for n in names[f]), source)


def _spread(pattern: str) -> str:
    """``pattern`` (letters and groups only) with any non-letters allowed between letters.

    Matching the result on a text is matching ``pattern`` on the text's letters alone.
    """
    return re.sub(r"[a-z]", lambda m: f"(?:{m.group(0)}[^a-z]*)", pattern)


def _rule_sets(rules: tuple[Rule, ...]) -> list[tuple[PatternSet, list[int]]]:
    """The rules as pattern sets, one per flag combination, with each member's rule index."""
    groups: dict[tuple[bool, bool], tuple[list[str], list[int]]] = {}
    for i, rule in enumerate(rules):
        flags = rule.pattern.flags
        key = (bool(flags & re.IGNORECASE), bool(flags & re.MULTILINE))
        patterns, index = groups.setdefault(key, ([], []))
        patterns.append(rule.pattern.pattern)
        index.append(i)
    # The folded view is lower-case: the squashed phrase joins any group.
    patterns, index = next(iter(groups.values()), None) or groups.setdefault((True, True), ([], []))
    patterns.append(_spread(SQUASHED_OVERRIDE.pattern))
    index.append(len(rules))
    if ENGINE == "re2":  # the probes join the same pass
        patterns += [p for _, p in PROBES]
        index += range(len(rules) + 1, len(rules) + 1 + len(PROBES))
    return [
        (PatternSet(p, ignore_case=ic, multiline=ml, engine=ENGINE), index)
        for (ic, ml), (p, index) in groups.items()
    ]


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


def decoded(text: str, base64_runs: bool = True, hex_runs: bool = True) -> Iterable[str]:
    """Printable text hidden in base64 or hex runs of ``text``.

    Args:
        text: the text to look in.
        base64_runs: look for base64 runs (False when the caller knows there is none).
        hex_runs: look for hex runs (likewise).
    """
    raw = text.encode("utf-8", "surrogatepass")
    for token in _b64_tokens(raw) if base64_runs else ():
        try:
            padded = token + b"=" * (-len(token) % 4)
            data = base64.b64decode(padded, altchars=b"-_", validate=False)
        except (binascii.Error, ValueError):
            continue
        yield from _printable(data)
    for start, end in _HEX(raw) if hex_runs else ():
        digits = raw[start:end].replace(b"\\x", b"").replace(b" ", b"").replace(b":", b"")
        try:
            yield from _printable(bytes.fromhex(digits.decode("ascii")))
        except ValueError:
            continue


def _b64_tokens(raw: bytes) -> Iterable[bytes]:
    """The base64 runs of ``raw`` worth decoding (16+ characters, not all letters or all
    digits, not part of a longer run)."""
    for start, end in _B64(raw):
        if (start and raw[start - 1] in _B64_BYTES) or (end < len(raw) and raw[end] in _B64_BYTES):
            continue  # part of a longer run, or followed by a third "="
        token = raw[start:end]
        if len(token.rstrip(b"=")) < 16 or token.isalpha() or token.isdigit():
            continue  # too short; plain words and numbers are not encodings
        yield token


def _printable(raw: bytes) -> Iterable[str]:
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    if not s:
        return
    if s.isprintable():
        yield s
        return
    # More than 95% printable: stop counting as soon as too many characters are not.
    allowed = len(s) * 0.05
    bad = 0
    for c in s:
        if not (c.isprintable() or c.isspace()):
            bad += 1
            if bad >= allowed:
                return
    yield s
