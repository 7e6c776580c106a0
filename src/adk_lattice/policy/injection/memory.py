"""What ``InjectionGuard`` refused stays out of every later request of the session.

A refused user turn or a withheld tool output stays in the session history, and ADK sends
the history with every later request. The guard remembers a digest of each such part in
session state (bounded, no raw text) and, on every request, replaces a part whose digest it
remembers with a neutral placeholder. The state survives a process restart with the session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

from google.genai import types

#: Session-scoped state key holding the digests (a list of hex strings, oldest first).
MEMORY_STATE_KEY: Final = "adk_lattice.injection.withheld"
#: What the model reads instead of a refused user text.
PLACEHOLDER: Final = "[withheld by policy]"
#: Leaf and node caps of a function response walk: beyond them the structure is oversize.
MAX_NODES: Final = 100_000


def text_digest(text: str) -> str:
    """The digest remembered for a user text part."""
    return _digest("text\0" + text)


def response_digest(fr: types.FunctionResponse) -> str:
    """The digest remembered for a function response: its name and canonical JSON."""
    try:
        body = json.dumps(fr.response, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        body = "\n".join(leaves(fr.response)[0])
    return _digest(f"response\0{fr.name}\0{body}")


#: ADK's quote markers around another agent's relayed words ("For context: ...").
_QUOTE_BEGIN: Final = "<<<BEGIN_QUOTED_AGENT_CONTENT>>>"
_QUOTE_END: Final = "<<<END_QUOTED_AGENT_CONTENT>>>"
_QUOTE_ELIDED: Final = "<<<ELIDED_MARKER>>>"
_RELAYED_RESULT: Final = "tool returned result:\n" + _QUOTE_BEGIN + "\n"


def relay_digest(fr: types.FunctionResponse) -> str:
    """The digest of ``fr`` as ADK relays it to another agent: ``str(response)``, fenced.

    In a ``SequentialAgent`` (or after a transfer) ADK rewrites an earlier agent's function
    response as user-role text, ``[agent] `tool` tool returned result:`` and the response's
    ``str()`` between quote markers (markers inside elided), so a remembered response must
    be recognised in that form too.
    """
    body = str(fr.response).replace(_QUOTE_BEGIN, _QUOTE_ELIDED).replace(_QUOTE_END, _QUOTE_ELIDED)
    return _digest("relay\0" + body)


def _relayed_digest(text: str) -> str | None:
    """The relay digest of a relayed function-response text, or None for other text."""
    if not text.endswith("\n" + _QUOTE_END):  # cheap: most texts stop here
        return None
    start = text.find(_RELAYED_RESULT)
    if start < 0:
        return None
    return _digest("relay\0" + text[start + len(_RELAYED_RESULT) : -len(_QUOTE_END) - 1])


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def known(state: Any) -> frozenset[str]:
    """The digests remembered in ``state`` (anything malformed there is ignored)."""
    try:
        value = state.get(MEMORY_STATE_KEY)
    except Exception:
        return frozenset()
    if not isinstance(value, list):
        return frozenset()
    return frozenset(v for v in value if isinstance(v, str))


def remember(state: Any, digests: Iterable[str], limit: int) -> None:
    """Add ``digests`` to ``state``, keeping the newest ``limit``."""
    try:
        current = state.get(MEMORY_STATE_KEY)
    except Exception:
        current = None
    kept = [v for v in current if isinstance(v, str)] if isinstance(current, list) else []
    for d in digests:
        if d in kept:
            kept.remove(d)
        kept.append(d)
    # A context without writable state still gets its verdict; only the memory is lost.
    with contextlib.suppress(Exception):
        state[MEMORY_STATE_KEY] = kept[-limit:]


def strip(contents: list[types.Content], digests: frozenset[str], policy: str) -> int:
    """Replace every remembered part of ``contents`` with a placeholder; return how many.

    Parts are replaced, never edited in place: ADK shares their payloads with the session.
    """
    if not digests:
        return 0
    count = 0
    for i, content in enumerate(contents):
        parts = list(content.parts or [])
        changed = False
        for j, part in enumerate(parts):
            if part.text and (
                (not part.thought and text_digest(part.text) in digests)
                or _relayed_digest(part.text) in digests
            ):
                parts[j] = types.Part(text=PLACEHOLDER)
            elif part.function_response and response_digest(part.function_response) in digests:
                parts[j] = types.Part(function_response=withheld(part.function_response, policy))
            else:
                continue
            changed = True
            count += 1
        if changed:
            contents[i] = types.Content(role=content.role, parts=parts)
    return count


def withheld(fr: types.FunctionResponse, policy: str, family: str = "") -> types.FunctionResponse:
    """A new function response standing in for ``fr``: the same id and name, no content."""
    why = f" ({family})" if family else ""
    return types.FunctionResponse(
        id=fr.id,
        name=fr.name,
        response={
            "status": "withheld",
            "reason": "the tool output contained instructions aimed at the assistant"
            f"{why} and was withheld",
            "policy": policy,
        },
    )


def leaves(value: Any, max_nodes: int = MAX_NODES) -> tuple[list[str], bool]:
    """Every string in a structure: dict keys and values, list and tuple items, nested.

    Args:
        value: a function response (or any value).
        max_nodes: how many nodes to visit before giving up.

    Returns:
        The strings in order, and whether the walk stopped early (the structure is too big).
    """
    found, too_big = _walk(value, max_nodes)
    return [text for _, text in found], too_big


def scan_text(value: Any, max_nodes: int = MAX_NODES) -> tuple[str, str, bool]:
    """What to scan of a function response: all its strings, and its values alone.

    Returns:
        Every string (keys and values, in order) and then the values alone, each string on
        its own line (so a phrase split across two values is not broken by the key between
        them); the values alone (for joining with other results); whether the walk stopped
        early.
    """
    found, too_big = _walk(value, max_nodes)
    values = "\n".join(text for is_key, text in found if not is_key)
    if not any(is_key for is_key, _ in found):
        return values, values, too_big
    return "\n".join(text for _, text in found) + "\n\n" + values, values, too_big


def _walk(value: Any, max_nodes: int) -> tuple[list[tuple[bool, str]], bool]:
    out: list[tuple[bool, str]] = []
    stack: list[tuple[bool, Any]] = [(False, value)]
    visited = 0
    while stack:
        visited += 1
        if visited > max_nodes:
            return out, True
        is_key, item = stack.pop()
        if isinstance(item, str):
            out.append((is_key, item))
        elif isinstance(item, bytes | bytearray):
            out.append((is_key, bytes(item).decode("utf-8", "replace")))
        elif isinstance(item, dict):
            pairs = [x for k, v in item.items() for x in ((True, k), (False, v))]
            stack.extend(reversed(pairs))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((False, x) for x in reversed(list(item)))
        elif hasattr(item, "model_dump"):
            with contextlib.suppress(Exception):
                stack.append((False, item.model_dump()))
        elif item is not None and not isinstance(item, bool | int | float):
            out.append((is_key, str(item)))
    return out, False


def texts_of(parts: Sequence[types.Part]) -> Iterator[str]:
    """The non-thought text of each part."""
    for p in parts:
        if p.text and not p.thought:
            yield p.text
