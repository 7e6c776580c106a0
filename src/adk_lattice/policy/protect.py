"""``ProtectState``: only the application writes identity, roles, tenants and flags.

ADK applies a client's ``state_delta`` (``Runner.run_async(state_delta=...)``, the
``state_delta`` field of ``adk api_server``'s ``POST /run``) on the user event it appends
after ``on_user_message`` and before ``before_run``; a tool writes through
``tool_context.state`` onto its function-response event. Neither is the application
speaking, so a write to a protected key from either is undone before any policy reads it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar, Final

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from ..state import REFUSED_WRITES, REGISTRY, StateKey, StateKeys
from ..stores import MemoryStore, Store, StoreUnavailable
from ._common import Counts, Keyed, report

logger = logging.getLogger("adk_lattice.policy")

#: The reason code every refused write is reported under.
CODE: Final = "protected_state"
#: The reason code of a run refused because an app-wide key's value cannot be restored.
UNVERIFIED: Final = "protected_state_unverified"
#: The reason code of a run refused because the store of the records cannot answer.
UNAVAILABLE: Final = "protected_state_unavailable"
#: The prefix of the store keys holding the application's record of each protected key.
RECORD_PREFIX: Final = "adk_lattice.protect:"
#: The record of an ``app:`` key whose value no one can vouch for: every run is refused
#: until the application writes the key again (a writer tool, a callback, :meth:`adopt`).
_UNKNOWN: Final = b"!unverified"
_ABSENT: Final = object()
_TEMP: Final = "temp:"


def _canon(value: Any) -> bytes:
    """A canonical form of a state value (None and absent are the same: unset)."""
    if value is _ABSENT:
        value = None
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    ).encode()


def _scope(key: str) -> str:
    for prefix in ("app:", "user:"):
        if key.startswith(prefix):
            return prefix[:-1]
    return "session"


def _record_key(session: Any, key: str) -> str:
    """The store key of the application's record of ``key`` for ``session``'s scope."""
    scope = _scope(key)
    parts = [scope, str(session.app_name)]
    if scope != "app":
        parts.append(str(session.user_id))
    if scope == "session":
        parts.append(str(session.id))
    parts.append(key)
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    return f"{RECORD_PREFIX}{scope}:{digest}"


def _previous(key: str, history: list[Any]) -> Any:
    """The value the application last wrote to ``key`` in ``history`` (_ABSENT: unknown)."""
    for event in reversed(history):
        delta = event.actions.state_delta if event.actions else None
        if delta and key in delta and event.author != "user":
            return delta[key]
    return _ABSENT


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

    - The application's record: for each protected ``app:``, ``user:`` and session key,
      ``store`` keeps the value the application last left there, in that key's scope (the
      app, the user, the session). Every run compares each key with its record, at a cost
      that does not depend on the session's history. A key that matches goes ahead.
    - A key that does not match (a client's ``state_delta`` on this run, ``adk api_server``'s
      ``PATCH`` of a session however many events ago, a write in another session of the
      same user or app): the whole history of the session is read once to find who wrote
      it. A value a client wrote is restored to the application's record (or, without
      one, to the application's last write in this session, or to the value before this
      run's message, or unset), by a content-less event the lattice appends, so the
      session service persists the application's value. An ``app:`` key is never reset
      to unset (that could lift an app-wide freeze for every user): without a record of
      the application's value the run is refused (``protected_state_unverified``) and
      nothing is written. A value the application wrote (an event not authored by the
      user, or the session's state at creation) becomes the record.
    - ``temp:`` keys live for one invocation: a protected one is put back to its value
      before the client's message (unset) before any policy reads it.
    - A tool's write through ``tool_context.state``: unless ``writers`` names the tool for
      that key, the key is removed from the call's pending delta and its value before the
      call is put back.

    Each refusal is reported as ``block`` with the code ``protected_state``, logged (key
    names only, never values), counted, and listed for the rest of the invocation in
    ``temp:adk_lattice.refused_writes`` (:meth:`StateKey.refused` reads it).

    A store that cannot answer never reads as "no record": the run is refused
    (``protected_state_unavailable``). A record the store failed to write is kept in the
    process and written before the next run reads a record (refused until then).

    What it cannot tell apart: a protected ``user:`` or ``app:`` value the application
    writes outside the Runner (``create_session(state=...)`` for a user who already has a
    record, a direct session-service write) from a client's; call :meth:`adopt` after such a
    write. A ``MemoryStore`` record lasts as long as the process: with a persistent session
    service across restarts or processes, give a shared ``SQLiteStore`` or ``RedisStore``.

    Args:
        keys: keys to protect besides those declared ``protected=True``.
        writers: tool name -> the protected keys that tool may write (an app-controlled
            tool such as ``set_tenant``).
        registry: where declared keys are looked up (default: the module registry).
        store: where the application's record of each key lives (default: a
            ``MemoryStore`` of this process).
        name: the handler name.

    Attributes:
        counts: ``refused:client``, ``refused:tool``, ``allowed:tool``, ``unverified``,
            ``unavailable``.
    """

    def __init__(
        self,
        keys: Iterable[StateKey[Any] | str] = (),
        *,
        writers: Mapping[str, Collection[StateKey[Any] | str]] | None = None,
        registry: StateKeys = REGISTRY,
        store: Store | None = None,
        name: str = "ProtectState",
    ) -> None:
        if isinstance(keys, str | StateKey):
            keys = (keys,)
        self.keys = frozenset(_name(k) for k in keys)
        self.writers = {
            tool: frozenset(_name(k) for k in names) for tool, names in (writers or {}).items()
        }
        self.registry = registry
        self.store: Store = store if store is not None else MemoryStore(max_entries=100_000)
        self.name = name
        self._counts = Counts()
        self._before: Keyed[dict[str, Any]] = Keyed()
        self._calls: Keyed[dict[str, Any]] = Keyed()
        #: invocation id -> the canonical values of the lasting keys once checked.
        self._checked: Keyed[dict[str, bytes]] = Keyed()
        #: record key -> the record a failed store write could not keep, written again
        #: before any run of this process reads a record.
        self._unsaved: Keyed[bytes] = Keyed()

    #: Scoped, it would skip the run hooks that undo a client's writes.
    _adk_lattice_unscoped: ClassVar[tuple[str, ...]] = ("tools", "agents")

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``refused:client``, ``refused:tool``, ``allowed:tool``, ``unverified``,
        ``unavailable``."""
        return self._counts.snapshot()

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The ``writers`` tools (checked against the app at its first run)."""
        return dict.fromkeys(self.writers, frozenset())

    def protected(self) -> frozenset[str]:
        """The key names protected right now."""
        return self.keys | self.registry.protected()

    async def adopt(self, session: Any) -> None:
        """Record ``session``'s protected values as the application's.

        Call it after the application writes a protected key outside a run (a direct
        session-service write, ``create_session(state=...)`` for a user who has sessions).

        Args:
            session: an ADK ``Session`` as the session service returns it.
        """
        for key in self.protected():
            if not key.startswith(_TEMP):
                await self._record(session, key, session.state.get(key, _ABSENT))

    async def _record(self, session: Any, key: str, value: Any) -> None:
        await self._write(_record_key(session, key), _canon(value))

    async def _write(self, record_key: str, record: bytes) -> None:
        """Write a record; one the store fails to keep is kept here and written again later
        (an older record would otherwise undo the application's newer value)."""
        if await self.store.set(record_key, record):
            self._unsaved.pop(record_key)  # an older unsaved record must not come back
        else:
            self._unsaved.put(record_key, record)

    async def _records(self, session: Any, keys: list[str]) -> dict[str, bytes | None]:
        """The records of ``keys``, after writing the ones a failed write left unsaved.

        Raises:
            StoreUnavailable: when an unsaved record still cannot be written, or a record
                cannot be read (an unreadable record is not an absent one).
        """
        for record_key, record in self._unsaved.items():
            if not await self.store.set(record_key, record):
                raise StoreUnavailable(f"store {self.store.name!r} keeps no record")
            if self._unsaved.get(record_key) == record:  # not replaced meanwhile
                self._unsaved.pop(record_key)
        return {k: await self.store.fetch(_record_key(session, k)) for k in keys}

    # -- a client's state delta ----------------------------------------------------------------

    def on_user_message(self, *, invocation_context: Any, user_message: Any) -> None:
        """Remember the protected values before ADK appends the user event and its delta."""
        state = invocation_context.session.state
        before = {k: state.get(k, _ABSENT) for k in self.protected()}
        self._before.put(invocation_context.invocation_id, before)

    async def before_run(self, *, invocation_context: Any) -> types.Content | None:
        """Undo every protected value the application's record does not vouch for."""
        ic = invocation_context
        session = ic.session
        before = self._before.pop(ic.invocation_id) or {}
        protected = self.protected()
        state = session.state
        refused: list[str] = []
        for key in sorted(k for k in protected if k.startswith(_TEMP)):
            # ADK applies a client's temp: delta to the live session and strips it from the
            # stored event: compare the live value with the one before the message.
            want = before.get(key, _ABSENT)
            if _canon(state.get(key, _ABSENT)) != _canon(want):
                if want is _ABSENT:
                    state.pop(key, None)
                else:
                    state[key] = want
                refused.append(key)
        lasting = sorted(k for k in protected if not k.startswith(_TEMP))
        try:
            records = await self._records(session, lasting) if lasting else {}
        except StoreUnavailable:
            self._counts.bump("unavailable")
            logger.warning(
                "adk_lattice: %s refused the run: the records of protected state cannot be "
                "read (%s)",
                self.name,
                UNAVAILABLE,
            )
            report(ic, "deny", self.name, UNAVAILABLE)
            text = "This request cannot run right now: protected settings cannot be checked."
            return types.Content(role="model", parts=[types.Part(text=text)])
        unsure = [k for k in lasting if records[k] != _canon(state.get(k, _ABSENT))]
        restore: dict[str, Any] = {}
        unverified: list[str] = []
        if unsure:
            restore, unverified, adopted = self._judge(ic, unsure, records, before)
            for key in adopted:
                await self._record(session, key, state.get(key, _ABSENT))
        if unverified:
            for key in unverified:  # so no other session adopts the client's value
                await self._write(_record_key(session, key), _UNKNOWN)
            self._counts.bump(*("unverified" for _ in unverified))
            logger.warning(
                "adk_lattice: %s refused the run: the application's value of %s is unknown "
                "and a client wrote it (%s)",
                self.name,
                ", ".join(unverified),
                UNVERIFIED,
            )
            report(ic, "deny", self.name, UNVERIFIED)
            text = "This request cannot run: a protected setting could not be verified."
            return types.Content(role="model", parts=[types.Part(text=text)])
        if restore:
            fix = Event(
                invocation_id=ic.invocation_id,
                author=self.name,
                actions=EventActions(state_delta=dict(restore)),
            )
            await ic.session_service.append_event(session=session, event=fix)
            for key, value in restore.items():
                await self._record(session, key, value)
            refused.extend(restore)
        self._checked.put(ic.invocation_id, {k: _canon(state.get(k, _ABSENT)) for k in lasting})
        if refused:
            self._refused(ic, state, sorted(refused), "client")
        return None

    def _judge(
        self,
        ic: Any,
        unsure: list[str],
        records: Mapping[str, bytes | None],
        before: Mapping[str, Any],
    ) -> tuple[dict[str, Any], list[str], list[str]]:
        """Read the whole history for the keys whose value the record does not vouch for.

        Returns:
            the keys to restore with their values, the ``app:`` keys whose application
            value is unknown, and the keys whose current value the application wrote.
        """
        events = list(ic.session.events)
        # This run's own user event(s) are the trailing ones of its invocation.
        start = len(events)
        while (
            start > 0
            and events[start - 1].author == "user"
            and events[start - 1].invocation_id == ic.invocation_id
        ):
            start -= 1
        last: dict[str, int] = {}  # key -> index of its newest write
        for i in range(len(events) - 1, -1, -1):
            delta = events[i].actions.state_delta if events[i].actions else None
            for key in [k for k in unsure if delta and k in delta and k not in last]:
                last[key] = i
            if len(last) == len(unsure):
                break
        restore: dict[str, Any] = {}
        unverified: list[str] = []
        adopted: list[str] = []
        for key in unsure:
            at = last.get(key)
            record = records[key]
            if at is None and record is None:
                adopted.append(key)  # the state the session was created with
                continue
            if at is None and record == _UNKNOWN:
                unverified.append(key)
                continue
            if at is not None and events[at].author != "user":
                adopted.append(key)  # the application wrote it in this session
                continue
            value: Any = _ABSENT
            if record is not None:
                value = _ABSENT if record == _UNKNOWN else json.loads(record)
            else:
                value = _previous(key, events)
                if value is _ABSENT and at is not None and at >= start:
                    # Only this run's message wrote it: the value before it is the app's.
                    earlier = (e.actions.state_delta or {} for e in events[:start] if e.actions)
                    if not any(key in delta for delta in earlier):
                        value = before.get(key, _ABSENT)
            for event in events:  # the history no longer claims the client's value
                delta = event.actions.state_delta if event.actions else None
                if event.author == "user" and delta and key in delta:
                    del delta[key]
            if value is _ABSENT and _scope(key) == "app":
                unverified.append(key)
                continue
            restore[key] = None if value is _ABSENT else value
        return restore, unverified, adopted

    async def after_run(self, *, invocation_context: Any) -> None:
        """Record every protected value the application changed during the run."""
        await self._settle(invocation_context)

    async def on_run_error(self, *, invocation_context: Any, error: Any) -> None:
        """Record what the application changed before the run failed, too."""
        await self._settle(invocation_context)

    async def _settle(self, ic: Any) -> None:
        checked = self._checked.pop(ic.invocation_id)
        if checked is None:
            return
        state = ic.session.state
        for key, was in checked.items():
            now = state.get(key, _ABSENT)
            if _canon(now) != was:  # only what changed: a concurrent run's write stands
                await self._record(ic.session, key, now)

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
    good as the guarantee that the client did not write it. Only enforcing entries count:
    a shadow-mode ``ProtectState`` protects nothing, so it does not stand in for one, and
    a shadow-mode policy's keys get no enforcing guard (that would be an effect of it).
    """
    entries = list(policy)
    enforcing = [e for e in entries if getattr(e, "mode", None) != "shadow"]
    if any(isinstance(e, ProtectState) for e in enforcing):
        return entries
    keys = trusted_keys(enforcing)
    if not keys:
        return entries
    taken = {getattr(e, "name", None) for e in entries}
    name = "ProtectState" if "ProtectState" not in taken else "ProtectState.enforce"
    return [ProtectState(keys, name=name), *entries]
