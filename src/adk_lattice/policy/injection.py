"""``InjectionGuard``: refuse a model call whose newest user turn or tool output is an attack."""

from __future__ import annotations

import base64
import binascii
import inspect
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from cachetools import LRUCache
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._common import Counts, record_denial, refusal, report
from .injection_rules import RULES, Rule

logger = logging.getLogger("adk_lattice.policy")

#: A user detector: ``(text, source) -> reason or None``, sync or async. ``source`` is
#: ``"user"`` or ``"tool:<name>"``.
UserDetector = Callable[[str, str], Any]

_INVISIBLE: Final = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_B64: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
#: Built-in families: safe to report as reason codes (a user detector's verdict may quote).
_FAMILIES: Final = frozenset({r.family for r in RULES} | {"encoded_payload"})
#: Verdicts on texts up to this long are remembered: each model call of a turn re-sends the
#: same user turn and tool results, and scanning costs about 1 us per character.
_MEMO_CHARS: Final = 8_192
_MEMO_SIZE: Final = 1_024
_HEX: Final = re.compile(r"(?:\\x[0-9a-fA-F]{2}){8,}|\b(?:[0-9a-fA-F]{2}[ :]?){12,}\b")


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a text was flagged: the family, the rule names, where it was found."""

    family: str
    rules: tuple[str, ...]
    source: str = "user"
    encoded: bool = False

    @property
    def code(self) -> str:
        """A content-free reason code: the built-in family, else the detector's name."""
        if self.family in _FAMILIES:
            return self.family
        return self.rules[0][:80] if self.rules else "detector"


def normalize(text: str) -> str:
    """NFKC-fold, drop invisible characters and collapse runs of spaces (not newlines)."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    return re.sub(r"[ \t]+", " ", text)


def _decoded(text: str) -> Iterable[str]:
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


class InjectionGuard:
    """``before_model``: inspect the newest user turn and the tool output since, refuse attacks.

    Built-in detectors cover instruction override, jailbreak / role-play framing, system
    prompt extraction, delimiter and chat-template smuggling, and any of those hidden in
    base64 or hex. Add your own (a classifier, a hosted screening API) as callables::

        InjectionGuard(detectors=[my_classifier], message="I can't help with that request.")

    A refusal is a model-role answer; the reason is in its ``custom_metadata["adk_lattice"]``
    (seen by observers in the Outcome) and in ``temp:adk_lattice.denial`` state. For
    telemetry and audit a refusal is noted as ``deny`` and a withheld tool output as
    ``rewrite``, each with the detector family (``instruction_override``, ``jailbreak_framing``,
    ``encoded_payload``..., or a user detector's name) as the reason code.

    Args:
        detectors: extra detectors ``(text, source) -> reason | None``, sync or async.
        builtin: use the built-in detectors (default True).
        scan_tools: also inspect function responses added since the newest user turn.
        on_tool: ``refuse`` the model call, or ``withhold`` the poisoned tool output
            (replaced by a notice) and let the model go on.
        message: what the user reads on a refusal.
        max_chars: longest text inspected per part (the rest is cut, so a huge input cannot
            stall the check).
        name: the handler name.

    Attributes:
        counts: ``checked``, ``refused``, ``withheld``, and ``family:<name>`` per finding.
    """

    def __init__(
        self,
        *,
        detectors: Sequence[UserDetector] = (),
        builtin: bool = True,
        scan_tools: bool = True,
        on_tool: Literal["refuse", "withhold"] = "refuse",
        message: str = (
            "I can't act on that request: it looks like an attempt to change my instructions."
        ),
        max_chars: int = 50_000,
        name: str = "InjectionGuard",
    ) -> None:
        if on_tool not in ("refuse", "withhold"):
            raise ValueError("on_tool must be 'refuse' or 'withhold'")
        for d in detectors:
            if not callable(d):
                raise TypeError(f"detector {d!r} is not callable")
        self.detectors = tuple(detectors)
        self.rules: tuple[Rule, ...] = RULES if builtin else ()
        self.scan_tools = scan_tools
        self.on_tool = on_tool
        self.message = message
        self.max_chars = max_chars
        self.name = name
        self._counts = Counts()
        # A benign verdict is stored as "" (None would read as a miss).
        self._memo: LRUCache[tuple[str, str], Finding | str] = LRUCache(maxsize=_MEMO_SIZE)

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``checked``, ``refused``, ``withheld``, ``family:<name>``."""
        return self._counts.snapshot()

    def detect(self, text: str, source: str = "user", *, _depth: int = 0) -> Finding | None:
        """The built-in verdict on one text: a :class:`Finding`, or None when it looks benign."""
        if _depth == 0 and len(text) <= _MEMO_CHARS:
            key = (source, text)
            known = self._memo.get(key)
            if known is None:
                known = self._scan(text, source, 0) or ""
                self._memo[key] = known
            return known if isinstance(known, Finding) else None
        return self._scan(text, source, _depth)

    def _scan(self, text: str, source: str, _depth: int) -> Finding | None:
        text = normalize(text[: self.max_chars])
        score: dict[str, float] = {}
        hits: dict[str, list[str]] = {}
        # Tool output has no business addressing the assistant: weak signals count double there.
        boost = 2.0 if source.startswith("tool:") else 1.0
        for rule in self.rules:
            if rule.pattern.search(text):
                score[rule.family] = score.get(rule.family, 0.0) + rule.weight * boost
                hits.setdefault(rule.family, []).append(rule.name)
        total = sum(score.values())
        if total >= 1.0:
            family = max(score, key=lambda f: score[f])
            names = tuple(n for f in hits for n in hits[f])
            return Finding(family, names, source)
        if _depth == 0 and self.rules:
            for hidden in _decoded(text):
                inner = self._scan(hidden, source, 1)
                if inner is not None:
                    return Finding("encoded_payload", inner.rules, source, encoded=True)
        return None

    async def _check(self, text: str, source: str) -> Finding | None:
        found = self.detect(text, source)
        if found is not None:
            return found
        for d in self.detectors:
            verdict = d(text[: self.max_chars], source)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                name = getattr(d, "__name__", type(d).__name__)
                family = verdict if isinstance(verdict, str) else name
                return Finding(family[:80], (name,), source)
        return None

    async def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """Refuse (or withhold a poisoned tool output) when the request carries an attack."""
        contents: list[types.Content] = list(llm_request.contents or [])
        newest = _newest_user_turn(contents)
        self._counts.bump("checked")
        if newest is not None:
            text = "\n".join(p.text for p in contents[newest].parts or [] if p.text)
            found = await self._check(text, "user") if text else None
            if found is not None:
                return self._refuse(callback_context, found)
        if not self.scan_tools:
            return None
        start = 0 if newest is None else newest + 1
        withheld: list[str] = []
        for content in contents[start:]:
            for part in content.parts or []:
                fr = part.function_response
                if fr is None:
                    continue
                found = await self._check(_flatten(fr.response), f"tool:{fr.name}")
                if found is None:
                    continue
                if self.on_tool == "refuse":
                    return self._refuse(callback_context, found)
                self._withhold(callback_context, fr, found)
                if found.code not in withheld:
                    withheld.append(found.code)
        if withheld:
            report(callback_context, "rewrite", self.name, ",".join(withheld))
        return None

    def _refuse(self, ctx: Any, found: Finding) -> LlmResponse:
        self._counts.bump("refused", f"family:{found.family}")
        detail = {"family": found.family, "rules": list(found.rules), "source": found.source}
        logger.info("adk_lattice: %s refused a model call: %s", self.name, detail)
        record_denial(ctx, self.name, "prompt_injection", **detail)
        report(ctx, "deny", self.name, found.code)
        return refusal(self.name, "prompt_injection", self.message, **detail)

    def _withhold(self, ctx: Any, fr: types.FunctionResponse, found: Finding) -> None:
        self._counts.bump("withheld", f"family:{found.family}")
        detail = {"family": found.family, "rules": list(found.rules), "source": found.source}
        record_denial(ctx, self.name, "prompt_injection_withheld", **detail)
        fr.response = {
            "status": "withheld",
            "reason": "the tool output contained instructions aimed at the assistant "
            f"({found.family}) and was withheld",
            "policy": self.name,
        }


def _newest_user_turn(contents: Sequence[types.Content]) -> int | None:
    """Index of the newest user content with text (function responses are not user turns)."""
    for i in range(len(contents) - 1, -1, -1):
        c = contents[i]
        if c.role == "user" and any(p.text and not p.thought for p in c.parts or []):
            return i
    return None


def _flatten(value: Any) -> str:
    """All the text in a function response, for scanning."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
