"""``TrimContext``: keep the request within a budget by dropping the oldest whole turns."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.genai import types

from .._common import Counts, report

#: Decides whether a content must survive trimming.
Pin = Callable[[types.Content], bool]


def size(content: types.Content) -> int:
    """Characters a content costs: its text, plus its function calls and responses as JSON."""
    total = 0
    for part in content.parts or []:
        if part.text:
            total += len(part.text)
        if part.function_call is not None:
            total += len(json.dumps(part.function_call.args or {}, default=str))
            total += len(part.function_call.name or "")
        if part.function_response is not None:
            total += len(json.dumps(part.function_response.response or {}, default=str))
    return total


def _is_user_turn(content: types.Content) -> bool:
    parts = content.parts or []
    return (
        content.role == "user"
        and any(p.text for p in parts)
        and not any(p.function_response for p in parts)
    )


def _units(contents: Sequence[types.Content]) -> list[list[int]]:
    """Group content indexes so a function call and its responses are never separated."""
    units: list[list[int]] = []
    waiting: set[str] = set()  # call ids (or names) still expecting a response
    for i, content in enumerate(contents):
        parts = content.parts or []
        responses = [p.function_response for p in parts if p.function_response is not None]
        if responses and units and waiting:
            units[-1].append(i)
            for r in responses:
                waiting.discard(r.id or r.name or "")
        else:
            units.append([i])
            waiting = set()
        for p in parts:
            if p.function_call is not None:
                waiting.add(p.function_call.id or p.function_call.name or "")
    return units


class TrimContext:
    """``before_model``, in place: drop the oldest turns until the request fits a budget.

    A turn is a user message and everything up to the next one. Whole turns are dropped,
    oldest first, so a function call is never separated from its response; the newest turn
    (the current request) is always kept, and so is any content ``pin`` selects (with the
    call or response it belongs to)::

        TrimContext(max_turns=20, max_tokens=30_000,
                    pin=lambda c: any(p.text and "[pinned]" in p.text for p in c.parts or []))

    Args:
        max_turns: most user turns kept.
        max_chars: most characters kept (see :func:`size`).
        max_tokens: most estimated tokens kept (characters / ``chars_per_token``).
        chars_per_token: the estimate's ratio.
        pin: selects contents that are never dropped.
        name: the handler name.

    Attributes:
        counts: ``trimmed`` (requests changed), ``dropped`` (contents removed).

    A trimmed request is noted for telemetry and audit as ``rewrite`` ``trimmed``.
    """

    def __init__(
        self,
        *,
        max_turns: int | None = None,
        max_chars: int | None = None,
        max_tokens: int | None = None,
        chars_per_token: float = 4.0,
        pin: Pin | None = None,
        name: str = "TrimContext",
    ) -> None:
        if max_turns is None and max_chars is None and max_tokens is None:
            raise ValueError("TrimContext needs max_turns, max_chars or max_tokens")
        for label, v in (
            ("max_turns", max_turns),
            ("max_chars", max_chars),
            ("max_tokens", max_tokens),
        ):
            if v is not None and (not isinstance(v, int) or v < 1):
                raise ValueError(f"{label} must be a positive integer")
        if chars_per_token <= 0:
            raise ValueError("chars_per_token must be positive")
        self.max_turns = max_turns
        budgets = [b for b in (max_chars, max_tokens and int(max_tokens * chars_per_token)) if b]
        self.max_chars = min(budgets) if budgets else None
        self.pin = pin
        self.name = name
        self._counts = Counts()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``trimmed``, ``dropped``."""
        return self._counts.snapshot()

    def before_model(self, *, callback_context: Any, llm_request: Any) -> None:
        """Drop the oldest unpinned turns from ``llm_request.contents`` until within budget."""
        contents: list[types.Content] = list(llm_request.contents or [])
        if not contents:
            return None
        turns: list[list[list[int]]] = []
        for unit in _units(contents):
            if not turns or _is_user_turn(contents[unit[0]]):
                turns.append([])
            turns[-1].append(unit)
        pinned = {
            i
            for turn in turns
            for unit in turn
            if self.pin is not None and any(self._pinned(contents[j]) for j in unit)
            for i in unit
        }
        dropped: set[int] = set()
        total = sum(size(c) for c in contents)
        kept_turns = len(turns)
        for turn in turns[:-1]:  # never the newest turn
            over_turns = self.max_turns is not None and kept_turns > self.max_turns
            over_chars = self.max_chars is not None and total > self.max_chars
            if not over_turns and not over_chars:
                break
            for unit in turn:
                if unit[0] in pinned:
                    continue
                dropped.update(unit)
                total -= sum(size(contents[i]) for i in unit)
            kept_turns -= 1
        if dropped:
            llm_request.contents = [c for i, c in enumerate(contents) if i not in dropped]
            self._counts.bump("trimmed")
            for _ in dropped:
                self._counts.bump("dropped")
            report(callback_context, "rewrite", self.name, "trimmed")
        return None

    def _pinned(self, content: types.Content) -> bool:
        try:
            return bool(self.pin(content)) if self.pin is not None else False
        except Exception:
            return True  # a pin check that fails keeps the content: losing it is worse
