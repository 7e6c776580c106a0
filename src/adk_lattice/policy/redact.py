"""``RedactPII``: scrub personal data and secrets from model output, tool results and input.

Streaming-safe: on each partial chunk it emits only text that can no longer be the start of
a value split across chunks, holding back a short tail that is emitted with the next chunk;
the final (non-partial) response is redacted in full.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._common import Counts, Keyed, kinds_code, refusal, report, text_of
from .pii import BUILTIN, Detector, Finder, find

logger = logging.getLogger("adk_lattice.policy")

Strategy = Literal["redact", "mask", "hash", "block"]
_STRATEGIES = ("redact", "mask", "hash", "block")


@dataclass(slots=True)
class _Stream:
    pending: str = ""
    blocked: bool = False
    kinds: set[str] = field(default_factory=set)  # found in chunks already emitted


class RedactPII:
    """``after_model`` (partial chunks too), ``after_tool`` and optionally ``before_model``.

    Finds emails, phone numbers, Luhn-valid payment cards, US SSNs, IBANs (mod-97), IP
    addresses and common API keys / secrets, plus custom patterns, and replaces each value
    by its strategy: ``redact`` (``[REDACTED:EMAIL]``), ``mask`` (``************1111``),
    ``hash`` (``[EMAIL:3f2a9c0d1b7e]``, a keyed SHA-256 so equal values stay joinable) or
    ``block`` (the whole answer is withheld)::

        RedactPII(strategies={"CARD": "mask"}, custom={"ORDER": r"ORD-\\d{8}"}, inputs=True)

    Args:
        kinds: which built-in families to use (``email``, ``phone``, ``card``, ``ssn``,
            ``iban``, ``ip``, ``secret``; default all).
        custom: extra detectors by kind: a regex string or compiled pattern, or a callable
            returning ``(start, end)`` spans.
        strategy: the default strategy.
        strategies: a strategy per kind (``EMAIL``, ``PHONE``, ``CARD``, ``SSN``, ``IBAN``,
            ``IP``, ``SECRET`` or a custom kind).
        salt: the key for the ``hash`` strategy.
        block_message: what the user reads when ``block`` withholds an answer.
        hold: characters held back per streamed chunk; values longer than this may escape
            detection when split across chunks.
        inputs: also redact user text before it reaches the model.
        name: the handler name.

    Attributes:
        counts: ``redacted:<KIND>`` per kind found, ``blocked``.

    For telemetry and audit it notes ``redact`` when it replaced values and ``block`` when
    it withheld a whole answer or result, with the kinds found as the reason code
    (``card,email``); refused input is ``deny``. A streamed response is noted once, on its
    final response, for every kind found in the whole stream.
    """

    partial = True

    def __init__(
        self,
        *,
        kinds: Iterable[str] | None = None,
        custom: Mapping[str, str | re.Pattern[str] | Finder] | None = None,
        strategy: Strategy = "redact",
        strategies: Mapping[str, Strategy] | None = None,
        salt: str = "",
        block_message: str = "I can't share that: the answer contained sensitive data.",
        hold: int = 96,
        inputs: bool = False,
        name: str = "RedactPII",
    ) -> None:
        chosen = list(BUILTIN) if kinds is None else list(kinds)
        unknown = [k for k in chosen if k not in BUILTIN]
        if unknown:
            raise ValueError(f"unknown PII kinds {unknown}; expected some of {list(BUILTIN)}")
        detectors: list[Detector] = [d for k in chosen for d in BUILTIN[k]]
        for kind, spec in (custom or {}).items():
            if isinstance(spec, str | re.Pattern):
                detectors.append(Detector(kind, re.compile(spec)))
            elif callable(spec):
                detectors.append(Detector(kind, finder=spec))
            else:
                raise TypeError(f"custom detector {kind!r} must be a regex or a callable")
        for s in (strategy, *(strategies or {}).values()):
            if s not in _STRATEGIES:
                raise ValueError(f"unknown strategy {s!r}; expected one of {_STRATEGIES}")
        if hold < 0:
            raise ValueError("hold must be >= 0")
        self.detectors = tuple(detectors)
        self.strategy = strategy
        self.strategies = dict(strategies or {})
        self._salt = salt.encode()
        self.block_message = block_message
        self.hold = hold
        self.inputs = inputs
        self.name = name
        self._counts = Counts()
        self._streams: Keyed[_Stream] = Keyed()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``redacted:<KIND>`` and ``blocked``."""
        return self._counts.snapshot()

    @property
    def open_streams(self) -> int:
        """Streams with a held-back tail right now (0 once every stream finished)."""
        return len(self._streams)

    # -- the scrubbing -------------------------------------------------------------------------

    def _replace(self, value: str, kind: str) -> str:
        how = self.strategies.get(kind, self.strategy)
        if how == "mask":
            keep = value[-4:] if len(value) > 8 else ""
            return "*" * (len(value) - len(keep)) + keep
        if how == "hash":
            digest = hmac.new(
                self._salt, value.encode("utf-8", "surrogatepass"), hashlib.sha256
            ).hexdigest()[:12]
            return f"[{kind}:{digest}]"
        return f"[REDACTED:{kind}]"

    def _apply(self, text: str, spans: list[tuple[int, int, str]]) -> tuple[str, bool]:
        """Replace the spans; the flag says a ``block`` kind was among them."""
        out, last, blocked = [], 0, False
        for start, end, kind in spans:
            self._counts.bump(f"redacted:{kind}")
            blocked = blocked or self.strategies.get(kind, self.strategy) == "block"
            out += [text[last:start], self._replace(text[start:end], kind)]
            last = end
        out.append(text[last:])
        return "".join(out), blocked

    def scrub(self, text: str) -> tuple[str, bool]:
        """Redact ``text`` in full; the flag says it must be withheld (``block``)."""
        out, blocked, _ = self._scrub(text)
        return out, blocked

    def _scrub(self, text: str) -> tuple[str, bool, set[str]]:
        """Like :meth:`scrub`, also returning the kinds found."""
        spans = find(text, self.detectors)
        if not spans:
            return text, False, set()
        kinds = {s[2] for s in spans}
        logger.debug("adk_lattice: %s found %s", self.name, sorted(kinds))
        out, blocked = self._apply(text, spans)
        return out, blocked, kinds

    def _report(self, ctx: Any, kinds: set[str], blocked: bool) -> None:
        if blocked or kinds:
            report(ctx, "block" if blocked else "redact", self.name, kinds_code(kinds))

    # -- model output ----------------------------------------------------------------------------

    def after_model(self, *, callback_context: Any, llm_response: LlmResponse) -> None:
        """Redact a partial chunk (holding back a tail) or the final response, in place."""
        key = (callback_context.invocation_id, callback_context.agent_name)
        content = llm_response.content
        if llm_response.partial is True:
            stream = self._streams.setdefault(key, _Stream)
            if content is not None and content.parts:
                _set_text(content, self._chunk(stream, text_of(content)))
            return None
        ended = self._streams.pop(key)  # the stream ends here: free its state
        kinds = set(ended.kinds) if ended is not None else set()
        blocked = ended is not None and ended.blocked
        if content is None or not content.parts:
            self._report(callback_context, kinds, blocked)
            return None
        text, hid, found = self._scrub(text_of(content))
        blocked, kinds = blocked or hid, kinds | found
        for part in content.parts:
            if part.thought and part.text:  # thoughts may be shown too: scrub them in full
                part.text, hid, found = self._scrub(part.text)
                blocked, kinds = blocked or hid, kinds | found
        if blocked:
            self._counts.bump("blocked")
            text = self.block_message
            content.parts = [p for p in content.parts if not p.thought]
        _set_text(content, text)
        self._report(callback_context, kinds, blocked)
        return None

    def _chunk(self, stream: _Stream, text: str) -> str:
        if stream.blocked:
            return ""
        buf = stream.pending + text
        spans = find(buf, self.detectors)
        cut = max(0, len(buf) - self.hold)
        # An unfinished value does not match yet: never cut inside a run of non-spaces.
        floor = max(0, cut - 2 * self.hold)
        while cut > floor and not buf[cut - 1].isspace() and not buf[cut].isspace():
            cut -= 1
        for start, end, _ in spans:
            if start < cut < end:  # never emit half a value
                cut = start
        done = [s for s in spans if s[1] <= cut]
        stream.kinds.update(s[2] for s in done)
        emitted, blocked = self._apply(buf[:cut], done)
        stream.pending = buf[cut:]
        if blocked:
            stream.blocked = True
            return ""
        return emitted

    def on_model_error(self, *, callback_context: Any, llm_request: Any, error: Any) -> None:
        """Free the stream's held-back tail when the model call fails."""
        self._streams.pop((callback_context.invocation_id, callback_context.agent_name))

    # -- tool results and input ------------------------------------------------------------------

    def after_tool(
        self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any
    ) -> dict[str, Any] | None:
        """Redact every string in the tool result, in place; withhold it on ``block``."""
        if not isinstance(result, dict | list):
            return None
        kinds: set[str] = set()
        blocked = self._walk(result, kinds)
        self._report(tool_context, kinds, blocked)
        if blocked:
            self._counts.bump("blocked")
            return {
                "status": "withheld",
                "reason": "the result contained sensitive data and was withheld",
                "code": "sensitive_data",
                "policy": self.name,
            }
        return None

    def _walk(self, node: Any, kinds: set[str]) -> bool:
        blocked = False
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in list(items):
            if isinstance(v, str):
                node[k], hit, found = self._scrub(v)
                blocked = blocked or hit
                kinds |= found
            elif isinstance(v, dict | list):
                blocked = self._walk(v, kinds) or blocked
        return blocked

    def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """With ``inputs=True``: redact user text before the model sees it."""
        if not self.inputs:
            return None
        kinds: set[str] = set()
        for content in llm_request.contents or ():
            if content.role != "user" or not content.parts:
                continue
            for part in content.parts:
                if part.text and not part.thought:
                    part.text, blocked, found = self._scrub(part.text)
                    kinds |= found
                    if blocked:
                        self._counts.bump("blocked")
                        report(callback_context, "deny", self.name, kinds_code(kinds))
                        return refusal(self.name, "sensitive_input", self.block_message)
        self._report(callback_context, kinds, False)
        return None


def _set_text(content: types.Content, text: str) -> None:
    """Replace a Content's text parts with one part holding ``text``, keeping other parts."""
    out: list[types.Part] = []
    placed = False
    for part in content.parts or []:
        if part.text is None or part.thought:
            out.append(part)
        elif not placed:
            out.append(types.Part(text=text))
            placed = True
    if placed:
        content.parts = out
