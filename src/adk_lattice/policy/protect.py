"""``ProtectState``: only the application writes identity, roles, tenants and flags.

ADK applies a client's ``state_delta`` (``Runner.run_async(state_delta=...)``, the
``state_delta`` field of ``adk api_server``'s ``POST /run``) on the user event it appends
after ``on_user_message`` and before ``before_run``; a tool writes through
``tool_context.state`` onto its function-response event. Neither is the application
speaking, so a write to a protected key from either is undone before any policy reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Final

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions

from ..state import REFUSED_WRITES, REGISTRY, StateKey, StateKeys
from ._common import Counts, Keyed, report

logger = logging.getLogger("adk_lattice.policy")

#: The reason code every refused write is reported under.
CODE: Final = "protected_state"
#: How many of a session's latest events ``before_run`` looks through for client writes.
MAX_SCAN: Final = 1000
_ABSENT: Final = object()


def _previous(key: str, history: list[Any]) -> Any:
    """The value the application last wrote to ``key`` in ``history`` (None: unknown).

    Unknown is unset, the safe value: every policy then reads the key's default.
    """
    for event in reversed(history):
        delta = event.actions.state_delta if event.actions else None
        if delta and key in delta and event.author != "user":
            return delta[key]
    return None


def _name(key: StateKey[Any] | str) -> str:
    if isinstance(key, StateKey):
        return key.name
    if isinstance(key, str) and key:
        return key
    raise TypeError(f"a protected key is a StateKey or a key name, not {type(key).__name__}")


class ProtectState:
    """Undo writes to protected state keys that do not come from the application.

    Protected are every key declared ``StateKey(..., protected=True)`` (looked up in the
    registry at each run, so keys declared later count too) and the ``keys`` given here.
    ``Lattice`` adds one by itself, protecting the keys its policies trust (a
    ``RequireState`` key, an ``Approval`` role, an ``InjectState`` or ``RateLimit(per=)``
    key), when its policy list has none.

    - A client's state delta (the user event of this run, or a user-authored state event
      appended since, such as ``adk api_server``'s ``PATCH`` of a session; the latest
      ``MAX_SCAN`` events are looked at): each protected key it names is restored to its
      value before that event (``None``, i.e. unset, when unknown), by a content-less event
      the lattice appends to the session, so the session service persists the
      application's value, not the client's. Each write is undone once.
    - A tool's write through ``tool_context.state``: unless ``writers`` names the tool for
      that key, the key is removed from the call's pending delta and its value before the
      call is put back.

    Each refusal is reported as ``block`` with the code ``protected_state``, logged (key
    names only, never values), counted, and listed for the rest of the invocation in
    ``temp:adk_lattice.refused_writes`` (:meth:`StateKey.refused` reads it).

    What it cannot see: state set when a session is created
    (``session_service.create_session(state=...)``, which ``adk api_server`` also exposes
    to clients) and state written by code outside the Runner. Create sessions server-side.

    Args:
        keys: keys to protect besides those declared ``protected=True``.
        writers: tool name -> the protected keys that tool may write (an app-controlled
            tool such as ``set_tenant``).
        registry: where declared keys are looked up (default: the module registry).
        name: the handler name.

    Attributes:
        counts: ``refused:client``, ``refused:tool``, ``allowed:tool``.
    """

    def __init__(
        self,
        keys: Iterable[StateKey[Any] | str] = (),
        *,
        writers: Mapping[str, Collection[StateKey[Any] | str]] | None = None,
        registry: StateKeys = REGISTRY,
        name: str = "ProtectState",
    ) -> None:
        if isinstance(keys, str | StateKey):
            keys = (keys,)
        self.keys = frozenset(_name(k) for k in keys)
        self.writers = {
            tool: frozenset(_name(k) for k in names) for tool, names in (writers or {}).items()
        }
        self.registry = registry
        self.name = name
        self._counts = Counts()
        self._before: Keyed[dict[str, Any]] = Keyed()
        self._calls: Keyed[dict[str, Any]] = Keyed()
        #: session id -> the newest event an earlier run looked at.
        self._seen: Keyed[str] = Keyed()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``refused:client``, ``refused:tool``, ``allowed:tool``."""
        return self._counts.snapshot()

    def protected(self) -> frozenset[str]:
        """The key names protected right now."""
        return self.keys | self.registry.protected()

    # -- a client's state delta ----------------------------------------------------------------

    def on_user_message(self, *, invocation_context: Any, user_message: Any) -> None:
        """Remember the protected values before ADK appends the user event and its delta."""
        state = invocation_context.session.state
        before = {k: state.get(k, _ABSENT) for k in self.protected()}
        self._before.put(invocation_context.invocation_id, before)

    async def before_run(self, *, invocation_context: Any) -> None:
        """Undo every protected key a client's event wrote and nothing undid yet."""
        ic = invocation_context
        before = self._before.pop(ic.invocation_id) or {}
        protected = self.protected()
        events = list(ic.session.events)
        # This run's own user event(s) are the trailing ones of its invocation.
        start = len(events)
        while (
            start > 0
            and events[start - 1].author == "user"
            and events[start - 1].invocation_id == ic.invocation_id
        ):
            start -= 1
        oldest: dict[str, int] = {}  # key -> index of the oldest write not undone yet
        undone: set[str] = set()
        seen = self._seen.get(ic.session.id)
        if events:
            self._seen.put(ic.session.id, events[-1].id)
        for i in range(len(events) - 1, max(-1, len(events) - 1 - MAX_SCAN), -1):
            event = events[i]
            if event.id == seen:
                break  # looked at by an earlier run (and undone then if it had to be)
            delta = event.actions.state_delta if event.actions else {}
            if event.author == self.name:
                undone.update(delta)
            elif event.author == "user":
                for key in [k for k in delta if k in protected and k not in undone]:
                    oldest[key] = i
                    del delta[key]  # the history no longer claims the client's value
        if not oldest:
            return None
        restore = {}
        for key, i in oldest.items():
            if i >= start and key in before:  # only this run wrote it: remembered before
                value = before[key]
                restore[key] = None if value is _ABSENT else value
            else:  # an earlier write (adk api_server's PATCH of a session): from history
                restore[key] = _previous(key, events[:i])
        fix = Event(
            invocation_id=ic.invocation_id,
            author=self.name,
            actions=EventActions(state_delta=restore),
        )
        await ic.session_service.append_event(session=ic.session, event=fix)
        self._refused(ic, ic.session.state, sorted(oldest), "client")
        return None

    # -- a tool's writes -----------------------------------------------------------------------

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        """Remember the protected values before the tool runs."""
        session_state = tool_context.session.state
        before = {k: session_state.get(k, _ABSENT) for k in self.protected()}
        self._calls.put((tool_context.invocation_id, tool_context.function_call_id), before)

    def after_tool(self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        """Take back what a tool not named in ``writers`` wrote to a protected key."""
        self._undo_tool(tool, tool_context)

    def on_tool_error(self, *, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> None:
        """Take back the writes of a tool that failed, too."""
        # A recovered error runs after_tool next, on the same pending delta: that call counts
        # the allowed writes, so a writer's failed call is not counted twice.
        self._undo_tool(tool, tool_context, count_allowed=False)

    def _undo_tool(self, tool: Any, ctx: Any, *, count_allowed: bool = True) -> None:
        before = self._calls.pop((ctx.invocation_id, ctx.function_call_id)) or {}
        delta = ctx.actions.state_delta
        written = [k for k in delta if k in self.protected()]
        if not written:
            return
        allowed = self.writers.get(getattr(tool, "name", ""), frozenset())
        forged = [k for k in written if k not in allowed]
        if count_allowed and len(forged) < len(written):
            self._counts.bump("allowed:tool")
        if not forged:
            return
        session_state = ctx.session.state
        for key in forged:
            del delta[key]
            value = before.get(key, _ABSENT)
            if value is _ABSENT:
                session_state.pop(key, None)
            else:
                session_state[key] = value
        self._refused(ctx, session_state, forged, "tool")

    def _refused(self, ctx: Any, session_state: Any, keys: list[str], source: str) -> None:
        self._counts.bump(*(f"refused:{source}" for _ in keys))
        listed = session_state.get(REFUSED_WRITES) or []
        session_state[REFUSED_WRITES] = sorted({*listed, *keys})
        logger.warning(
            "adk_lattice: %s undid a write to protected state key(s) %s from a %s (%s)",
            self.name,
            ", ".join(sorted(keys)),
            "client's state delta" if source == "client" else "tool not allowed to write them",
            CODE,
        )
        report(ctx, "block", self.name, CODE)


def trusted_keys(handlers: Iterable[Any]) -> frozenset[str]:
    """The state keys the given policies trust (their ``state_keys`` attributes)."""
    names: set[str] = set()
    for handler in handlers:
        for key in getattr(handler, "state_keys", ()) or ():
            names.add(_name(key))
    return frozenset(names)


def with_protection(policy: Iterable[Any]) -> list[Any]:
    """``policy`` with a :class:`ProtectState` first when a policy trusts a key and none is.

    Used by ``Lattice``: a policy that reads a role, tenant or flag from state is only as
    good as the guarantee that the client did not write it.
    """
    entries = list(policy)
    if any(isinstance(e, ProtectState) for e in entries):
        return entries
    keys = trusted_keys(entries)
    return [ProtectState(keys), *entries] if keys else entries
