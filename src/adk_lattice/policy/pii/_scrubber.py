"""The text scrubber behind ``RedactPII``: detectors, strategies, the size cap, counters."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from cachetools import LRUCache

from .._common import Counts, kinds_code, report
from ._phone import check_regions, phone_detector
from ._stream import long_token
from .detectors import BUILTIN, Detector, Finder, scan
from .ner import Engine, engine_spans

logger = logging.getLogger("adk_lattice.policy")

Strategy = Literal["redact", "mask", "hash", "block"]
STRATEGIES: Final = ("redact", "mask", "hash", "block")
#: Kinds that mark what was withheld unread rather than a value found.
_WITHHELD: Final = frozenset({"OVERSIZE", "UNSCANNED", "MEDIA"})
#: Texts up to this long have their spans remembered (keys, enum values, a user message the
#: model reads again): a turn scans the same short texts many times, and a conversation
#: repeats its field names on every tool call. Longer texts are scanned each time.
MEMO_CHARS: Final = 512
MEMO_ENTRIES: Final = 4_096


class Scrubber:
    """Finds values in text and replaces each by its kind's strategy (see ``RedactPII``)."""

    def __init__(
        self,
        *,
        kinds: Iterable[str] | None,
        custom: Mapping[str, str | re.Pattern[str] | Finder] | None,
        strategy: Strategy,
        strategies: Mapping[str, Strategy] | None,
        salt: str,
        max_chars: int,
        max_hold: int,
        name: str,
        phone_regions: Sequence[str] | None = None,
        engine: Engine | None = None,
    ) -> None:
        chosen = list(BUILTIN) if kinds is None else list(kinds)
        unknown = [k for k in chosen if k not in BUILTIN]
        if unknown:
            raise ValueError(f"unknown PII kinds {unknown}; expected some of {list(BUILTIN)}")
        if phone_regions is not None:
            check_regions(phone_regions)  # fail at construction, with the fix
        phone = phone_detector(phone_regions)
        detectors: list[Detector] = [
            d for k in chosen for d in ((phone,) if k == "phone" else BUILTIN[k])
        ]
        for kind, spec in (custom or {}).items():
            if isinstance(spec, str | re.Pattern):
                detectors.append(Detector(kind, re.compile(spec)))
            elif callable(spec):
                detectors.append(Detector(kind, finder=spec))
            else:
                raise TypeError(f"custom detector {kind!r} must be a regex or a callable")
        if engine is not None:
            if not isinstance(engine, Engine):
                raise TypeError("engine must have analyze(text) -> [(start, end, kind)]")
            found_by = engine
            detectors.append(Detector("NER", finder=lambda t: engine_spans(found_by, t)))
        for s in (strategy, *(strategies or {}).values()):
            if s not in STRATEGIES:
                raise ValueError(f"unknown strategy {s!r}; expected one of {STRATEGIES}")
        if max_chars < 1:
            raise ValueError("max_chars must be >= 1")
        self.detectors = tuple(detectors)
        #: Only built-in detectors: a stream holds text back only where a value may start.
        self.builtin_only = not custom and engine is None
        self._stream_detectors = (*detectors, Detector("SECRET", long_token(max_hold)))
        self.strategy = strategy
        self.strategies = dict(strategies or {})
        self._salt = salt.encode()
        self.max_chars = max_chars
        self.name = name
        self._counts = Counts()
        # Spans of short texts, by text. Only when every detector is built-in or a custom
        # regex, whose spans depend on the text alone: a callable of one's own or an NER
        # engine may not be a pure function of the text, so it is asked every time.
        pure = engine is None and not any(callable(v) for v in (custom or {}).values())
        self._memo: LRUCache[str, tuple[tuple[int, int, str], ...]] | None = (
            LRUCache(MEMO_ENTRIES) if pure else None
        )

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``redacted:<KIND>``, ``withheld:<what>`` and ``blocked``."""
        return self._counts.snapshot()

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

    def _apply(self, text: str, spans: Sequence[tuple[int, int, str]]) -> tuple[str, bool]:
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
        """Redact ``text`` in full; the flag says it must be withheld (``block``).

        Args:
            text: any text; past ``max_chars`` it is withheld.

        Returns:
            The redacted text and whether a ``block`` kind was found.
        """
        out, blocked, _ = self._scrub(text)
        return out, blocked

    def _scan(self, text: str, *, streamed: bool = False) -> list[tuple[int, int, str]]:
        return scan(text, self._stream_detectors if streamed else self.detectors)

    def _spans(self, text: str) -> Sequence[tuple[int, int, str]]:
        """:meth:`_scan` of a whole text, remembered for short texts (see ``MEMO_CHARS``)."""
        memo = self._memo
        if memo is None or len(text) > MEMO_CHARS:
            return scan(text, self.detectors)
        found = memo.get(text)
        if found is None:
            found = memo[text] = tuple(scan(text, self.detectors))
        return found

    def _scrub(self, text: str, *, streamed: bool = False) -> tuple[str, bool, set[str]]:
        """Like :meth:`scrub`, also returning the kinds found."""
        over = ""
        if len(text) > self.max_chars:
            cut = self.max_chars  # withhold the whole token the cap falls in
            while cut > 0 and not text[cut - 1].isspace() and not text[cut].isspace():
                cut -= 1
            text, over = text[:cut], text[cut:]
        spans = self._scan(text, streamed=True) if streamed else self._spans(text)
        if not spans and not over:
            return text, False, set()
        kinds = {s[2] for s in spans}
        out, blocked = self._apply(text, spans)
        if over:
            self._counts.bump("withheld:oversize")
            kinds.add("OVERSIZE")
            out += f"[WITHHELD:{len(over)} characters past the scan limit]"
        logger.debug("adk_lattice: %s found %s", self.name, sorted(kinds))
        return out, blocked, kinds

    def _report(self, ctx: Any, kinds: set[str], blocked: bool) -> None:
        for kind in kinds & _WITHHELD - {"OVERSIZE"}:
            self._counts.bump(f"withheld:{kind.lower()}")
        if blocked or kinds:
            report(ctx, "block" if blocked else "redact", self.name, kinds_code(kinds))
