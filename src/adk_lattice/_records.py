"""Per-invocation and per-call records: keyed, bounded, freed when the run ends.

One ``Lattice`` serves every session, nested AgentTool run and parallel tool call at once,
so nothing per-call lives in a plain plugin attribute: it lives here, keyed by
``invocation_id`` and ``function_call_id``, and the registry is bounded so memory stays flat
even when a run never ends cleanly.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from google.adk.tools.base_tool import BaseTool

from ._hooks import Tier

#: Where a policy lists, on a checked call's record (``CallRecord.data``), the untrusted
#: sources then in context; the audit record reports them.
UNTRUSTED_SOURCES: Final = "adk_lattice.untrusted_sources"


@dataclass(slots=True, eq=False)
class CallRecord:
    """One tool call, from ``before_tool`` until ``after_tool`` or ``on_tool_error``.

    Attributes:
        function_call_id: ADK's id for the call (None when ADK gave none).
        tool: the tool name.
        agent: the agent that called it.
        invocation_id: the invocation it belongs to.
        short_circuited_by: the handler whose ``before_tool`` value stood in for the tool.
        short_circuit_tier: that handler's tier.
        denied: True when that value was a denial (policy tier, or a fail-closed error), so
            ``after_tool`` handlers can leave it alone (no caching, no reshaping).
        started: ``time.perf_counter()`` when ``before_tool`` began.
        data: free space for handlers and observers, keyed by their own names.
    """

    function_call_id: str | None
    tool: str
    agent: str | None
    invocation_id: str
    short_circuited_by: str | None = None
    short_circuit_tier: Tier | None = None
    denied: bool = False
    started: float = field(default_factory=time.perf_counter)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class InvocationRecord:
    """One invocation, from its first hook until ``after_run`` or ``on_run_error``.

    Attributes:
        invocation_id: ADK's invocation id (a nested AgentTool run has its own).
        app_name, user_id, session_id: who and where, from the session.
        started_at: wall-clock start (``time.time()``); ``started``: ``perf_counter()``.
        agents_entered: agent names in the order ``before_agent`` saw them.
        open_agents: agents entered and not yet closed, innermost last, each with the
            keyword arguments of its ``before_agent``.
        open_models: model calls in flight: the agent and its ``before_model`` arguments.
        open_calls: tool calls in flight, by function call id.
        transferred: agents that handed over with ``transfer_to_agent``.
        error: the error the run ended with, if any.
        data: free space for handlers and observers, keyed by their own names.
    """

    invocation_id: str
    app_name: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    started_at: float = field(default_factory=time.time)
    started: float = field(default_factory=time.perf_counter)
    agents_entered: list[str] = field(default_factory=list)
    open_agents: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    open_models: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    open_calls: dict[str, CallRecord] = field(default_factory=dict)
    transferred: set[str] = field(default_factory=set)
    error: BaseException | None = None
    data: dict[str, Any] = field(default_factory=dict)
    #: Un-registers the task watcher that closes the record if the run is cancelled.
    unwatch: Callable[[], None] | None = None


class Records:
    """A bounded registry of open invocations, oldest evicted first.

    Args:
        max_invocations: how many invocations may be open at once; past it the oldest is
            handed to ``on_evict`` (which closes it as abandoned) and forgotten.
        max_calls: how many tool calls one invocation may hold open; past it the oldest
            call record is dropped.
        on_evict: called with each evicted record.
    """

    __slots__ = ("_abandoned", "_max_calls", "_max_invocations", "_on_evict", "_open")

    def __init__(
        self,
        *,
        max_invocations: int = 4096,
        max_calls: int = 1024,
        on_evict: Callable[[InvocationRecord], None] | None = None,
    ) -> None:
        if max_invocations < 1 or max_calls < 1:
            raise ValueError("max_invocations and max_calls must be at least 1")
        self._open: OrderedDict[str, InvocationRecord] = OrderedDict()
        self._abandoned: OrderedDict[str, None] = OrderedDict()
        self._max_invocations = max_invocations
        self._max_calls = max_calls
        self._on_evict = on_evict

    def __len__(self) -> int:
        return len(self._open)

    def __iter__(self) -> Iterator[InvocationRecord]:
        return iter(list(self._open.values()))

    def get(self, invocation_id: str) -> InvocationRecord | None:
        """The open record for an invocation, or None."""
        return self._open.get(invocation_id)

    def open(self, invocation_id: str) -> tuple[InvocationRecord, bool]:
        """The record for an invocation, created if new; the flag says it was created."""
        rec = self._open.get(invocation_id)
        if rec is not None:
            return rec, False
        rec = InvocationRecord(invocation_id)
        self._open[invocation_id] = rec
        while len(self._open) > self._max_invocations:
            _, old = self._open.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old)
        return rec, True

    def pop(self, invocation_id: str) -> InvocationRecord | None:
        """Forget an invocation and return its record."""
        return self._open.pop(invocation_id, None)

    def abandon(self, invocation_id: str) -> None:
        """Remember (bounded) that an invocation was closed as abandoned while ADK ran it."""
        self._abandoned[invocation_id] = None
        while len(self._abandoned) > self._max_invocations:
            self._abandoned.popitem(last=False)

    def abandoned(self, invocation_id: str) -> bool:
        """Whether the lattice already closed this invocation as abandoned."""
        return invocation_id in self._abandoned

    def open_call(self, inv: InvocationRecord, call: CallRecord) -> None:
        """Register an in-flight tool call, dropping the oldest past the bound."""
        inv.open_calls[call_key(call.function_call_id, call.tool)] = call
        while len(inv.open_calls) > self._max_calls:
            inv.open_calls.pop(next(iter(inv.open_calls)))


def tool_label(tool: Any) -> str:
    """A tool's name, safe for logs, reasons, span attributes and audit records.

    A name the model made up (ADK stands a bare ``BaseTool`` in for a tool it cannot find)
    may carry user data, such as an email: it reads ``unknown-tool-<hash>`` instead, the
    same for the same name, so repeated attempts can still be grouped.
    """
    name = getattr(tool, "name", None)
    if not isinstance(name, str):
        name = type(tool).__name__
    if type(tool) is not BaseTool:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:12]
    return f"unknown-tool-{digest}"


def call_key(function_call_id: str | None, tool: str) -> str:
    """The key of a tool call's record: its id, or (ADK gave none) its tool's name."""
    return function_call_id or f"tool:{tool}"


#: The prefix of the lattice's own session-state keys: only the lattice writes them.
OWN_PREFIX: Final = "adk_lattice."
#: The lattice's own lasting keys (the provenance taint record, withheld injections).
OWN_KEYS: Final = ("adk_lattice.provenance", "adk_lattice.injection.withheld")
#: A key not set (``own_values`` and ``own_forged`` use it for "no value").
ABSENT: Final = object()
_ABSENT: Final = ABSENT


def _copy(value: Any) -> Any:
    """A copy of a JSON-shaped value deep enough that no later edit in place reaches it."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def own_values(state: Any) -> dict[str, Any]:
    """Copies of the lattice's own keys' values in ``state`` (a fixed few keys per call)."""
    return {k: _copy(state.get(k, _ABSENT)) for k in OWN_KEYS}


def own_digest(state: Any) -> str:
    """A digest of the lattice's own keys' values in ``state`` (unset and None alike)."""
    values = [state.get(k) for k in OWN_KEYS]
    body = json.dumps(values, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def own_restore(state: Any, before: dict[str, Any]) -> dict[str, Any]:
    """The state delta putting back the lattice's own keys a client's message changed."""
    return {
        k: (None if v is _ABSENT else v)
        for k, v in before.items()
        if state.get(k, _ABSENT) != v and not (v is _ABSENT and state.get(k) is None)
    }


def own_forged(events: Sequence[Any]) -> dict[str, Any]:
    """The lattice's own keys a user-authored event wrote last, each with its earlier value.

    A client writes session state only through user-authored events (the ``state_delta``
    of its message, a session ``PATCH`` of ``adk api_server``); the lattice, its handlers
    and the application write through events of another author. The earlier value is the
    one the newest event of another author wrote (``ABSENT`` when no such event has).
    The whole history is read, newest first, until each key's writer is known.
    """
    forged: set[str] = set()
    earlier: dict[str, Any] = {}
    open_keys = set(OWN_KEYS)
    for event in reversed(events):
        actions = getattr(event, "actions", None)
        delta = getattr(actions, "state_delta", None)
        if not delta:
            continue
        for key in [k for k in open_keys if k in delta]:
            if getattr(event, "author", None) == "user":
                forged.add(key)
                continue
            open_keys.discard(key)
            if key in forged:
                earlier[key] = delta[key]
        if not open_keys:
            break
    return {k: earlier.get(k, ABSENT) for k in forged}


def own_pending(delta: Any) -> dict[str, Any]:
    """Copies of the lattice's own keys already in a call's pending delta (its own writes)."""
    return {
        k: _copy(v) for k, v in delta.items() if isinstance(k, str) and k.startswith(OWN_PREFIX)
    }


class OwnSnapshot(NamedTuple):
    """The lattice's own keys once its ``before_tool`` handlers ran, to check a tool against.

    Attributes:
        values: copies of the values (:func:`own_values`).
        refs: the stored objects themselves, which an edit in place would change.
        pending: copies of the lattice's own writes in the call's delta (:func:`own_pending`).
        generation: how many tool calls of the invocation had ended then.
    """

    values: dict[str, Any]
    refs: dict[str, Any]
    pending: dict[str, Any]
    generation: int


def own_snapshot(state: Any, delta: Any, generation: int) -> OwnSnapshot:
    """What :func:`undo_own_writes` compares a tool's call against."""
    refs = {k: state.get(k, _ABSENT) for k in OWN_KEYS}
    return OwnSnapshot(own_values(state), refs, own_pending(delta), generation)


def undo_own_writes(delta: Any, state: Any, saved: OwnSnapshot, *, live: bool = True) -> list[str]:
    """Take back a tool's writes to the lattice's own keys; return the keys taken back.

    A write through ``tool_context.state`` lands in the pending delta: the delta gets back
    the lattice's own pending writes, the live state the values once the lattice's
    ``before_tool`` handlers ran. With ``live``, a write straight into the session's state
    and an edit in place of a stored value (which the session's stored state and events may
    share) are undone too, the edited object restored in place; without it (sibling calls
    ended meanwhile, and their labels are the lattice's writes), only the keys written
    through the delta are.

    Args:
        delta: the call's pending state delta (``tool_context.actions.state_delta``).
        state: the live session state the tool also wrote.
        saved: :func:`own_snapshot` once the lattice's ``before_tool`` handlers ran.
        live: also compare the live state and the stored objects with the snapshot.
    """
    taken: list[str] = []
    pending = saved.pending
    for key in [k for k in delta if isinstance(k, str) and k.startswith(OWN_PREFIX)]:
        if key in pending and delta[key] == pending[key]:
            continue  # the lattice's own write, untouched by the tool
        taken.append(key)
        if key in pending:
            delta[key] = _copy(pending[key])
        else:
            del delta[key]
    for key in taken:
        if key not in saved.values:
            state.pop(key, None)
    for key, value in saved.values.items():
        ref = saved.refs[key]
        edited = live and ref is not _ABSENT and ref != value
        if edited and isinstance(ref, dict):
            ref.clear()
            ref.update(_copy(value))
        elif edited and isinstance(ref, list):
            ref[:] = _copy(value)
        replaced = live and state.get(key, _ABSENT) is not ref
        if key not in taken and not edited and not replaced:
            continue
        if key not in taken:
            taken.append(key)
        if value is _ABSENT:
            state.pop(key, None)
        else:
            state[key] = ref if live else _copy(value)
    return taken


_current_call: ContextVar[CallRecord | None] = ContextVar("adk_lattice_current_call", default=None)


def current_call() -> CallRecord | None:
    """The record of the tool call whose hook is running now, else None.

    Inside ``after_tool`` it tells whether ``before_tool`` short-circuited the call, and
    whether that was a denial::

        def after_tool(self, *, tool, tool_args, tool_context, result):
            call = current_call()
            if call is not None and call.denied:
                return None  # leave denials alone
    """
    return _current_call.get()
