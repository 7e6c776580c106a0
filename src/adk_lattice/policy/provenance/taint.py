"""Where :class:`ProvenanceGuard` keeps taint, and where it finds trusted text.

Taint lives in session state under :data:`TAINT_KEY`, so it survives turns and restarts
wherever the session does. The record holds tool names (app-declared) and hashes of
session ids, never a value::

    {"v": 1, "s": {"<sha256(session id)[:16]>": {"src": ["read_inbox"], "inh": false}}}

One entry per session: an ``AgentTool`` run starts a fresh session from a copy of its
caller's state, so a session that finds no entry of its own but a tainted one of another
session *inherited* the taint: its "user" message was written by a model that had read
untrusted text, and is not trusted. So that the nested run can still ground what the real
user typed, a tainted caller stores, before the nested run, salted hashes of its trusted
tokens (``"tok"``, at most :data:`MAX_TOKENS`); never the tokens themselves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

#: The session-state key holding the taint record.
TAINT_KEY: Final = "adk_lattice.provenance"
#: Most untrusted source names kept per session (the oldest are dropped past it).
MAX_SOURCES: Final = 32
#: Most hashed trusted tokens a caller hands to its nested runs.
MAX_TOKENS: Final = 1024
#: Most session entries kept in one record (the caller's, and its nested runs').
MAX_SESSIONS: Final = 8
#: Most characters of trusted text gathered for one check (newest first).
MAX_TRUSTED_CHARS: Final = 500_000
#: ADK's own control tools: their results are not outside text.
CONTROL_TOOLS: Final = frozenset(
    {
        "transfer_to_agent",
        "adk_request_confirmation",
        "adk_request_credential",
        "adk_request_input",
        "exit_loop",
    }
)


@dataclass(frozen=True, slots=True)
class Taint:
    """Whether untrusted content is in a session's context, and from which tools.

    Attributes:
        tainted: untrusted content has entered the context.
        sources: the names of the tools it came from (``<inherited>`` for a caller's).
        inherited: the session was started by a model that had read untrusted content,
            so its user-authored messages are not trusted.
    """

    tainted: bool
    sources: tuple[str, ...] = ()
    inherited: bool = False
    #: ``{salt: token hashes}`` a tainted caller handed down (see :func:`token_hash`).
    hashed: Mapping[str, frozenset[str]] = field(default_factory=dict)


CLEAN: Final = Taint(False)


def session_hash(session_id: str) -> str:
    """A short hash naming a session in the taint record."""
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _entries(state: Any) -> dict[str, Any] | None:
    """The record's session entries; None when the record is missing or malformed."""
    try:
        record = state.get(TAINT_KEY)
    except Exception:
        return None
    if record is None:
        return {}
    entries = record.get("s") if isinstance(record, Mapping) else None
    return dict(entries) if isinstance(entries, Mapping) else None


def token_hash(salt: str, kind: str, normal: str) -> str:
    """A salted hash of one normalised trusted token."""
    data = f"{salt}\x00{kind}\x00{normal}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


def _hashed(entries: Mapping[str, Any], mine: str) -> dict[str, frozenset[str]]:
    """The token hashes other sessions' entries carry, by salt (their session hash)."""
    out: dict[str, frozenset[str]] = {}
    for salt, entry in entries.items():
        tokens = entry.get("tok") if isinstance(entry, Mapping) and salt != mine else None
        if isinstance(tokens, list):
            out[salt] = frozenset(t for t in tokens if isinstance(t, str))
    return out


def _sources(entry: Any) -> list[str]:
    found = entry.get("src") if isinstance(entry, Mapping) else None
    return [s for s in found if isinstance(s, str)] if isinstance(found, list) else []


def read_taint(state: Any, session_id: str) -> Taint:
    """The taint of one session, read from its state (a malformed record is tainted)."""
    entries = _entries(state)
    if entries is None:
        return Taint(True, ("<unreadable>",), inherited=True)
    mine = session_hash(session_id)
    own = entries.get(mine)
    if isinstance(own, Mapping):
        inherited = bool(own.get("inh"))
        sources = _sources(own)
        hashed = _hashed(entries, mine) if inherited else {}
        return Taint(bool(sources) or inherited, tuple(sources), inherited, hashed)
    foreign = [s for e in entries.values() for s in _sources(e)]
    if any(isinstance(e, Mapping) and e.get("inh") for e in entries.values()):
        foreign.append("<inherited>")
    if foreign:
        return Taint(True, tuple(dict.fromkeys(foreign)), True, _hashed(entries, mine))
    return CLEAN


def mark(
    state: Any, session_id: str, source: str | None, tokens: Sequence[str] | None = None
) -> None:
    """Record that ``source``'s output entered the session (None: just claim an entry).

    Args:
        state: the session state (through a context, so the write is persisted).
        session_id: the session's id.
        source: the untrusted tool's name, or None.
        tokens: token hashes to hand to nested runs (replacing earlier ones), or None to
            keep the entry's current ones.

    Writes only when something changed, so a trusted or repeated source adds no state delta.
    """
    entries = _entries(state) or {}
    current = read_taint(state, session_id)
    sources = list(current.sources)
    if source is not None and source not in sources:
        sources.append(source)
    sources = sources[-MAX_SOURCES:]
    mine = session_hash(session_id)
    entry: dict[str, Any] = {"src": sources, "inh": current.inherited}
    old = entries.get(mine)
    kept = old.get("tok") if isinstance(old, Mapping) else None
    if tokens is not None:
        kept = list(tokens[:MAX_TOKENS])
    if kept:
        entry["tok"] = kept
    if old == entry:
        return
    entries.pop(mine, None)
    others = list(entries.items())[-(MAX_SESSIONS - 1) :]
    state[TAINT_KEY] = {"v": 1, "s": {**dict(others), mine: entry}}


# -- trusted text ----------------------------------------------------------------------------


def parse_paths(paths: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """``["messages.*.sender"]`` as tuples of segments."""
    return tuple(tuple(p.split(".")) for p in paths)


def select(value: Any, path: Sequence[str]) -> Iterator[Any]:
    """The values at a dotted path; ``*`` matches every list item or mapping value."""
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        if head == "*":
            for item in value.values():
                yield from select(item, rest)
        elif head in value:
            yield from select(value[head], rest)
    elif isinstance(value, list | tuple):
        if head == "*":
            for item in value:
                yield from select(item, rest)
        elif head.isdigit() and int(head) < len(value):
            yield from select(value[int(head)], rest)


def scalars(
    value: Any, depth: int = 0, skip: Callable[[Sequence[Any]], bool] | None = None
) -> Iterator[str]:
    """Every string and number leaf of a structure, as strings (bools and keys excluded);
    the leaves of a list for which ``skip`` says so are left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif depth < 20 and isinstance(value, Mapping):
        for item in value.values():
            yield from scalars(item, depth + 1, skip)
    elif depth < 20 and isinstance(value, list | tuple) and not (skip and skip(value)):
        for item in value:
            yield from scalars(item, depth + 1, skip)


def node_inputs(events: Sequence[Any]) -> dict[str, str]:
    """``{event id: node path}`` of the user-authored events a ``Workflow`` wrote as a
    node's input (the previous node's output), ``"?"`` where ADK stamps no path.

    ADK 2.13 stamps such an event with the node's path (``node_info.path``). Older releases
    stamp nothing, but leave its invocation id empty, while the runner gives the user's own
    message its invocation's id: a user-authored event with no invocation id after an event
    of a run is one (history an app seeds before its first run carries no id either).
    """
    found: dict[str, str] = {}
    ran = False
    for event in events:
        invocation = getattr(event, "invocation_id", None)
        if getattr(event, "author", None) == "user":
            path = getattr(getattr(event, "node_info", None), "path", None)
            if isinstance(path, str) and path:
                found[str(getattr(event, "id", ""))] = path
            elif ran and not invocation:
                found[str(getattr(event, "id", ""))] = "?"
        ran = ran or bool(invocation)
    return found


def user_texts(events: Sequence[Any], nodes: Container[str] | None = None) -> Iterator[str]:
    """The text the user typed, newest first: user-authored events' text parts only, not
    a ``Workflow`` node's input written as a user event (:func:`node_inputs`; ``nodes``:
    their ids, when known for a longer history than ``events``)."""
    nodes = node_inputs(events) if nodes is None else nodes
    for event in reversed(events):
        content = getattr(event, "content", None)
        if getattr(event, "author", None) != "user" or content is None or not content.parts:
            continue
        if str(getattr(event, "id", "")) in nodes:
            continue
        for part in content.parts:
            if part.text and not part.thought:
                yield part.text


#: What one event adds to a check: the user's texts, ``(call id, (leaf, declared kind)
#: pairs)`` per trusted output, ``(call id, argument leaves)`` per function call.
EventTrust = tuple[
    tuple[str, ...],
    tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...],
    tuple[tuple[str, tuple[str, ...]], ...],
]


def tool_responses(events: Sequence[Any]) -> Iterator[tuple[str, Any, str]]:
    """``(tool name, response, call id)`` of every function response, newest first."""
    for event in reversed(events):
        try:
            responses = event.get_function_responses()
        except Exception:
            continue
        for fr in responses:
            if fr.name:
                yield fr.name, fr.response, fr.id or ""


def call_arguments(event: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(call id, argument leaves)`` of every function call in one event."""
    try:
        calls = event.get_function_calls()
    except Exception:
        return ()
    return tuple((fc.id, tuple(scalars(fc.args or {}))) for fc in calls if fc.id)


def capped_pairs(
    fields: Iterable[tuple[str, str | None, tuple[str, ...]]], budget: int = MAX_TRUSTED_CHARS
) -> list[tuple[str, str | None, tuple[str, ...]]]:
    """Like :func:`capped`, for ``(text, declared kind, echoed arguments)`` trusted fields
    (counted by the text): a ``text`` field is cut, a value field that does not fit is left
    out (a cut value would be another value)."""
    out: list[tuple[str, str | None, tuple[str, ...]]] = []
    for text, kind, echo in fields:
        if budget <= 0:
            break
        if kind != "text" and len(text) > budget:
            continue
        out.append((text[:budget], kind, echo))
        budget -= len(out[-1][0])
    return out


def capped(texts: Iterable[str], budget: int = MAX_TRUSTED_CHARS) -> list[str]:
    """The texts, in order, until ``budget`` characters are used (the last one cut)."""
    out: list[str] = []
    for text in texts:
        if budget <= 0:
            break
        out.append(text[:budget])
        budget -= len(out[-1])
    return out


def instruction_text(value: Any) -> str:
    """The text of a request's system instruction (str, Content, parts or a list)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    parts = getattr(value, "parts", None)
    if parts is not None:
        return "\n".join(p.text for p in parts if getattr(p, "text", None))
    if isinstance(value, list | tuple):
        return "\n".join(instruction_text(v) for v in value)
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else ""


def batch_of(ctx: Any) -> tuple[str, str] | None:
    """``(invocation id, id of the model event)`` that asked for this call, if found."""
    call_id = ctx.function_call_id
    events = getattr(ctx.session, "events", None) or ()
    if not call_id:
        return None
    for event in reversed(events[-64:]):
        if any(fc.id == call_id for fc in event.get_function_calls()):
            return (ctx.invocation_id, event.id)
    return None
