"""Shadow mode: run a handler on copies and keep what it would have done, acting on nothing.

A handler registered with ``mode="shadow"`` runs on every hook it would, before the
enforcing deciders of that hook, each time on its own copies of what the hook may edit
(the request, response, arguments, result, message or event) and of its context (the
event actions and the session state it writes through). Its return value, its in-place
edits and its state writes land on those copies: nothing of it reaches ADK or any other
handler. What it did is kept as a :class:`ShadowRun` on the hook's
:class:`~adk_lattice.Outcome`, where telemetry and audit report it as ``would_deny``,
``would_redact``...

Copies cost time, so only shadow handlers pay for them, and only on the hooks they
implement. A copy that cannot be made (an object that refuses to be copied) means the
handler does not run on that hook: it is counted and logged as an error, never run on the
live objects.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import logging
import time
from collections import Counter, OrderedDict
from typing import Any, Final, NamedTuple

from google.adk.artifacts.base_artifact_service import BaseArtifactService
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.auth.credential_service.base_credential_service import BaseCredentialService
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.sessions.base_session_service import BaseSessionService

from ._chain import guard
from ._handlers import Bound
from ._hooks import CONTEXT_ARG, HookName
from ._outcome import Outcome, Step, StepStatus
from .stores._base import shadow_scope

logger = logging.getLogger("adk_lattice")

#: What a hook's handlers may edit in place, per hook: these are copied for a shadow run.
EDITABLE: Final[dict[HookName, tuple[str, ...]]] = {
    "on_user_message": ("user_message",),
    "before_run": (),
    "on_event": ("event",),
    "after_run": (),
    "before_agent": (),
    "after_agent": (),
    "before_model": ("llm_request",),
    "after_model": ("llm_response",),
    "on_model_error": ("llm_request",),
    "before_tool": ("tool_args",),
    "after_tool": ("tool_args", "result"),
    "on_tool_error": ("tool_args",),
    "on_agent_error": (),
    "on_run_error": (),
}


class ShadowRun(NamedTuple):
    """What one shadow handler did on one hook.

    Attributes:
        step: its step (status ``act`` when it returned a value it would have won with).
        value: the value it returned, or None.
        context: the copy of the hook's context it ran with: decisions it noted
            (``adk_lattice.telemetry.note``) are found under this object.
        on_error: its error mode (a failing ``deny`` policy would have denied).
    """

    step: Step
    value: Any
    context: Any
    on_error: str


def split_shadow(
    chains: dict[HookName, tuple[Bound, ...]],
) -> tuple[dict[HookName, tuple[Bound, ...]], dict[HookName, tuple[Bound, ...]]]:
    """Split bound chains into the deciders and the shadow handlers (only hooks with any)."""
    deciders = {h: tuple(b for b in c if not b.shadow) for h, c in chains.items()}
    shadows = {h: s for h, c in chains.items() if (s := tuple(b for b in c if b.shadow))}
    return deciders, shadows


def _copy_value(value: Any) -> Any:
    """A deep copy; the live tools an ``LlmRequest`` holds are shared, not copied."""
    tools = getattr(value, "tools_dict", None)
    memo: dict[int, Any] = {}
    if isinstance(tools, dict):
        memo.update({id(t): t for t in tools.values()})
    return copy.deepcopy(value, memo)


def _copy_context(ctx: Any) -> Any:
    """A context through which nothing a handler does reaches the run or its services.

    ADK's ``Context`` writes state into the session's dict and into the event's actions,
    and reaches the session, its services and the invocation through its invocation
    context: the actions are copied, and the invocation context is replaced by an
    isolated twin (:func:`_copy_invocation`) whose session state is the state the copy
    writes through.
    """
    if ctx is None:
        return None
    actions = getattr(ctx, "_event_actions", None)
    state = getattr(ctx, "_state", None)
    inner = getattr(ctx, "_invocation_context", None)
    if actions is not None and state is not None and inner is not None:
        twin = copy.copy(ctx)
        twin._event_actions = actions.model_copy(deep=True)
        twin._invocation_context = _copy_invocation(inner)
        twin_state = copy.copy(state)
        twin_state._value = twin._invocation_context.session.state
        twin_state._delta = twin._event_actions.state_delta
        twin_state._snapshots = {}
        twin._state = twin_state
        return twin
    if getattr(ctx, "session", None) is not None and hasattr(ctx, "model_copy"):
        return _copy_invocation(ctx)
    # A context whose writes cannot be redirected must not reach a shadow handler: the
    # handler is then not run on this hook (counted as an error), never run on live state.
    raise TypeError(f"cannot isolate a {type(ctx).__name__} for a shadow handler")


def _copy_invocation(ic: Any) -> Any:
    """An invocation context whose session and services keep nothing a handler does.

    The session is a copy (its state deep, its events copied when first read);
    appended events, saved artifacts, memories and credentials land on copies or nowhere;
    reads of artifacts, memory and credentials still reach the real services.
    """
    session = ic.session
    twin_session = session.model_copy(
        update={"state": copy.deepcopy(dict(session.state)), "events": _Events(session.events)}
    )
    update: dict[str, Any] = {"session": twin_session, "session_service": _Sink()}
    if ic.artifact_service is not None:
        update["artifact_service"] = _Artifacts(ic.artifact_service)
    if ic.memory_service is not None:
        update["memory_service"] = _Memory(ic.memory_service)
    if ic.credential_service is not None:
        update["credential_service"] = _Credentials(ic.credential_service)
    return ic.model_copy(update=update)


class _Events(list[Any]):
    """A session's events, each deep-copied the first time the list is read or changed.

    A handler that never looks at the history (most run on one event or request) pays
    nothing for it; one that does edits copies, never the run's events.
    """

    def __init__(self, live: list[Any]) -> None:
        super().__init__()
        self._live: list[Any] | None = live

    def _fill(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            super().extend(e.model_copy(deep=True) for e in live)

    def __len__(self) -> int:
        return len(self._live) if self._live is not None else super().__len__()

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        self._fill()
        return super().__repr__()


def _filling(name: str) -> Any:
    method = getattr(list, name)

    def call(self: _Events, *args: Any, **kwargs: Any) -> Any:
        self._fill()
        return method(self, *args, **kwargs)

    call.__name__ = name
    return call


for _name in (
    "__getitem__", "__setitem__", "__delitem__", "__iter__", "__reversed__", "__contains__",
    "__eq__", "__ne__", "__add__", "__iadd__", "__mul__", "__lt__", "__le__", "__gt__",
    "__ge__", "append", "extend", "insert", "pop", "remove", "clear", "index", "count",
    "sort", "reverse", "copy",
):  # fmt: skip
    setattr(_Events, _name, _filling(_name))


class _Sink(BaseSessionService):
    """A session service for shadow handlers: appends apply to the given copy, nothing else.

    Reading or creating sessions raises, so a shadow handler that tries fails (counted,
    logged) instead of reaching storage.
    """

    async def append_event(self, session: Any, event: Any) -> Any:
        """Apply ``event`` to ``session`` (a shadow copy) without persisting anything."""
        return await super().append_event(session, event)

    async def create_session(self, **kwargs: Any) -> Any:
        """Refused: a shadow handler creates no session."""
        raise PermissionError("a shadow handler cannot create sessions")

    async def get_session(self, **kwargs: Any) -> Any:
        """Refused: a shadow handler reads the session it was given."""
        raise PermissionError("a shadow handler cannot read stored sessions")

    async def list_sessions(self, **kwargs: Any) -> Any:
        """Refused: a shadow handler lists no sessions."""
        raise PermissionError("a shadow handler cannot list sessions")

    async def delete_session(self, **kwargs: Any) -> None:
        """Refused: a shadow handler deletes no session."""
        raise PermissionError("a shadow handler cannot delete sessions")


class _Artifacts(InMemoryArtifactService):
    """Artifacts a shadow handler saves stay in this copy; the real ones are only read."""

    def __init__(self, live: BaseArtifactService) -> None:
        super().__init__()
        self._live = live

    async def load_artifact(self, **kwargs: Any) -> Any:
        """The copy's artifact, else the real one."""
        found = await super().load_artifact(**kwargs)
        return found if found is not None else await self._live.load_artifact(**kwargs)

    async def list_artifact_keys(self, **kwargs: Any) -> list[str]:
        """The real keys and the copy's."""
        own = await super().list_artifact_keys(**kwargs)
        return sorted({*own, *await self._live.list_artifact_keys(**kwargs)})


class _Memory(BaseMemoryService):
    """Memory a shadow handler adds or deletes goes nowhere; searches reach the real one."""

    def __init__(self, live: BaseMemoryService) -> None:
        self._live = live

    async def add_session_to_memory(self, session: Any) -> None:
        """Kept nowhere."""

    async def add_events_to_memory(self, **kwargs: Any) -> None:
        """Kept nowhere."""

    async def add_memory(self, **kwargs: Any) -> None:
        """Kept nowhere."""

    async def delete_memory(self, **kwargs: Any) -> None:
        """Deletes nothing."""

    async def search_memory(self, **kwargs: Any) -> Any:
        """The real memory's answer."""
        return await self._live.search_memory(**kwargs)


class _Credentials(BaseCredentialService):
    """Credentials a shadow handler saves go nowhere; loads reach the real service."""

    def __init__(self, live: BaseCredentialService) -> None:
        self._live = live

    async def load_credential(self, auth_config: Any, callback_context: Any) -> Any:
        """The real service's credential."""
        return await self._live.load_credential(auth_config, callback_context)

    async def save_credential(self, auth_config: Any, callback_context: Any) -> None:
        """Kept nowhere."""


_GONE: Final = object()


def _session_of(ctx: Any) -> Any:
    return getattr(getattr(ctx, "_invocation_context", ctx), "session", None)


class Forks:
    """Each shadow handler's own fork of each session's state, kept for its later hooks.

    A shadow handler writes state only on its copies; a policy that records something for
    a later hook (a taint, a cache lookup's key, a refusal list) would then never see its
    own record. Its writes are kept here per handler and session, and laid over the next
    copy it is given, so it decides on what it would have written, while the session
    itself never holds it. At most ``max_sessions`` forks are kept, the oldest dropped.
    """

    def __init__(self, max_sessions: int = 4096) -> None:
        self._forks: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._max = max_sessions

    def begin(self, name: str, ctx: Any) -> tuple[tuple[str, str], dict[str, Any]] | None:
        """Lay ``name``'s fork over the copy ``ctx`` holds; what to pass to :meth:`end`."""
        session = _session_of(ctx)
        if session is None:
            return None
        key = (name, str(session.id))
        for k, v in (self._forks.get(key) or {}).items():
            if v is _GONE:
                session.state.pop(k, None)
            else:
                session.state[k] = v
        return key, dict(session.state)

    def end(self, begun: tuple[tuple[str, str], dict[str, Any]] | None, ctx: Any) -> None:
        """Keep what the handler wrote to the copy since :meth:`begin`."""
        session = _session_of(ctx)
        if begun is None or session is None:
            return
        key, base = begun
        state = session.state
        written = {k: v for k, v in state.items() if k not in base or base[k] is not v}
        written.update((k, _GONE) for k in base if k not in state)
        if written:
            self._forks.setdefault(key, {}).update(written)
            self._forks.move_to_end(key)
            while len(self._forks) > self._max:
                self._forks.popitem(last=False)


async def observe_shadow(bound: Bound, outcome: Outcome, forks: Forks) -> None:
    """Hand a shadow handler's observer the outcome on copies, its stores on their twins.

    Raises what the observer raises (the caller counts and logs it, as for any observer).
    """
    args = isolate(outcome.hook, dict(outcome.args))
    ctx = args.get(CONTEXT_ARG[outcome.hook])
    begun = forks.begin(bound.name, ctx)
    with shadow_scope():
        result = bound.call(dataclasses.replace(outcome, args=args))
        if bound.is_async or (result is not None and inspect.isawaitable(result)):
            await (asyncio.wait_for(result, bound.timeout) if bound.timeout else result)
    forks.end(begun, ctx)


def isolate(hook: HookName, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The hook's keyword arguments with the editable ones and the context copied."""
    args = dict(kwargs)
    for name in EDITABLE[hook]:
        if args.get(name) is not None:
            args[name] = _copy_value(args[name])
    ctx_arg = CONTEXT_ARG[hook]
    args[ctx_arg] = _copy_context(args.get(ctx_arg))
    return args


async def run_shadow(
    chain: tuple[Bound, ...],
    hook: HookName,
    kwargs: dict[str, Any],
    *,
    agent: str | None,
    tool: str | None,
    partial: bool,
    stats: Counter[tuple[str, str, str]],
    forks: Forks | None = None,
) -> tuple[ShadowRun, ...]:
    """Run every shadow handler of a hook on its own copies; never raise, never act.

    Scoping and the partial-chunk rule apply as for enforcing handlers. A failure is
    counted in ``stats`` like any handler's, logged at WARNING, and recorded on the run.
    """
    runs: list[ShadowRun] = []
    for b in chain:
        if partial and not b.partial:
            continue
        if b.agents is not None and agent not in b.agents:
            continue
        if b.tools is not None and tool not in b.tools:
            continue
        start = time.perf_counter()
        args: dict[str, Any] = {}
        status: StepStatus = "pass"
        problem: BaseException | str | None = None
        value: Any = None
        try:
            args = isolate(hook, kwargs)
            ctx = args.get(CONTEXT_ARG[hook])
            begun = forks.begin(b.name, ctx) if forks is not None else None
            with shadow_scope():
                value = b.call(**args)
                if b.is_async or (value is not None and inspect.isawaitable(value)):
                    value = await (asyncio.wait_for(value, b.timeout) if b.timeout else value)
            if forks is not None:
                forks.end(begun, ctx)
        except Exception as exc:
            status, problem, value = (
                ("timeout" if isinstance(exc, TimeoutError) else "error"),
                exc,
                None,
            )
            stats[(status, hook, b.name)] += 1
            logger.warning(
                "adk_lattice: shadow handler %r %s in %s (%s); nothing was affected",
                b.name,
                "timed out" if status == "timeout" else "failed",
                hook,
                type(exc).__name__,
            )
        if value is not None:
            problem = guard(hook, value)
            if problem is None:
                status = "act"
            else:
                status, value = "rejected", None
                stats[("rejected", hook, b.name)] += 1
        step = Step(b.name, b.tier, status, time.perf_counter() - start, problem)
        ctx = args.get(CONTEXT_ARG[hook])
        runs.append(ShadowRun(step, value, ctx, b.on_error))
    return tuple(runs)
