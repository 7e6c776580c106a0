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
import inspect
import logging
import time
from collections import Counter
from typing import Any, Final, NamedTuple

from google.adk.sessions.base_session_service import BaseSessionService

from ._chain import guard
from ._handlers import Bound
from ._hooks import CONTEXT_ARG, HookName
from ._outcome import Step, StepStatus

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
    """A context whose event actions and state writes land on copies.

    ADK's ``Context`` writes state into the session's dict and into the event's actions;
    both are replaced here (the session state dict is copied one level deep).
    """
    if ctx is None:
        return None
    actions = getattr(ctx, "_event_actions", None)
    state = getattr(ctx, "_state", None)
    if actions is not None and state is not None:
        twin = copy.copy(ctx)
        twin._event_actions = actions.model_copy(deep=True)
        twin_state = copy.copy(state)
        twin_state._value = dict(state._value)
        twin_state._delta = twin._event_actions.state_delta
        twin_state._snapshots = {}
        twin._state = twin_state
        return twin
    session = getattr(ctx, "session", None)
    if session is not None and hasattr(ctx, "model_copy"):  # an InvocationContext
        twin_session = session.model_copy(
            update={"state": dict(session.state), "events": list(session.events)}
        )
        # An event the handler appends lands on the copy only, never in storage.
        return ctx.model_copy(update={"session": twin_session, "session_service": _Sink()})
    # A context whose writes cannot be redirected must not reach a shadow handler: the
    # handler is then not run on this hook (counted as an error), never run on live state.
    raise TypeError(f"cannot isolate a {type(ctx).__name__} for a shadow handler")


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
            value = b.call(**args)
            if b.is_async or (value is not None and inspect.isawaitable(value)):
                value = await (asyncio.wait_for(value, b.timeout) if b.timeout else value)
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
