"""Reading delivered content for the opt-in capture: what output policy saw, nothing raw.

Both observers capture through these two functions, so the rule lives in one place: only the
final ``after_model`` response and the final ``after_tool`` result, after every decider acted;
never a request, a user message or tool arguments.
"""

from __future__ import annotations

import json
from typing import Final

from .._outcome import Outcome

#: Tiers whose ``before_model`` answers count as policy-safe: a denial, or a cache entry that
#: was stored after output policy. A custom handler's served answer never met output policy.
_SAFE_SERVERS: Final = frozenset({"policy", "cache"})


def delivered_model_text(outcome: Outcome) -> str | None:
    """The delivered model text of a final ``after_model`` outcome, else None."""
    if outcome.hook != "after_model" or outcome.partial:
        return None
    if outcome.synthesized and (
        outcome.reason != "short_circuit" or outcome.acted_tier not in _SAFE_SERVERS
    ):
        return None
    content = getattr(outcome.final, "content", None)
    parts = getattr(content, "parts", None) or ()
    texts = [p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", None)]
    return "".join(texts) if texts else None


def delivered_tool_result(outcome: Outcome) -> str | None:
    """The delivered result of a real ``after_tool`` outcome as compact JSON, else None."""
    if outcome.hook != "after_tool" or outcome.synthesized or outcome.final is None:
        return None
    try:
        return json.dumps(outcome.final, ensure_ascii=False, default=str, separators=(",", ":"))
    except (TypeError, ValueError):  # e.g. a circular structure
        return None
