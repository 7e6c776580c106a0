"""Reading delivered content for the opt-in capture: model text and tool results."""

from __future__ import annotations

import json
from typing import Any


def model_text(response: Any) -> str | None:
    """The visible text of an ``LlmResponse`` (thought parts left out), or None."""
    content = getattr(response, "content", None)
    parts = getattr(content, "parts", None) or ()
    texts = [p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", None)]
    return "".join(texts) if texts else None


def tool_text(result: Any) -> str | None:
    """A tool result as compact JSON (non-JSON values by their ``str``), or None."""
    if result is None:
        return None
    try:
        return json.dumps(result, ensure_ascii=False, default=str, separators=(",", ":"))
    except (TypeError, ValueError):  # e.g. a circular structure
        return None
