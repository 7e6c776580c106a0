"""``Lattice``: the one ADK plugin. Maps every ADK hook onto its chain and its observers."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, final

from google.adk.plugins.base_plugin import BasePlugin

from ._chain import denial, run_chain
from ._handlers import Bound, bind
from ._hooks import DECIDER_TIERS, HOOKS, HookName, Tier
from ._outcome import Outcome, Step, SynthReason
from ._records import CallRecord, InvocationRecord, Records, _current_call

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.events.event import Event
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types

logger = logging.getLogger("adk_lattice")


def _default_telemetry() -> tuple[Any, ...]:
    """The observers ``Lattice(name=...)`` gets when ``telemetry`` is not given.

    Spans and metrics through the global OpenTelemetry providers (no-ops until an SDK
    provider is set), and one audit record per invocation to the ``adk_lattice.audit``
    logger. Imported here so that importing the core does not import the telemetry tier.
    """
    from .telemetry import AuditLog, Telemetry

    return (Telemetry(), AuditLog())


@final
class Lattice(BasePlugin):
    """Routes every ADK plugin hook through tiered handler chains and observers.

    Deciders run in tier order (``policy``, then ``cache``, then ``handlers``); within a
    tier, in the order given. The first non-None value wins and goes to ADK. Observers
    (every ``telemetry`` entry, and any handler with an ``observe(outcome)`` method) then
    receive an :class:`~adk_lattice.Outcome` for every hook, including the ones ADK skips.

    Args:
        name: the plugin name ADK registers (``adk web --extra_plugins`` passes the dotted
            class path here).
        policy: policy handlers; a failing one denies (fails closed).
        cache: cache handlers; a failing one is skipped (fails open).
        handlers: custom handlers; a failing one is skipped.
        telemetry: observers (objects with ``observe(outcome)``). ``None`` (the default)
            installs the default observers; ``()`` installs none.
        strict: raise :class:`~adk_lattice.ReturnGuardError` when a handler returns a value
            of the wrong type or a suspicious empty one (for tests), instead of ignoring it.
        timeout: seconds any async handler or observer may take when it sets no ``timeout``
            of its own; past it the handler counts as failed (a policy denies). ``None``: no
            limit. Sync handlers cannot be interrupted.
        max_invocations: how many invocations may be tracked at once before the oldest is
            closed as abandoned (memory stays flat when runs never end cleanly).

    Raises:
        TypeError: when a handler has no hook method, or is a bare function (use ``on``).
        ValueError: on a bad handler option.
    """

    def __init__(
        self,
        name: str = "adk_lattice",
        *,
        policy: Sequence[Any] = (),
        cache: Sequence[Any] = (),
        handlers: Sequence[Any] = (),
        telemetry: Sequence[Any] | None = None,
        strict: bool = False,
        timeout: float | None = None,
        max_invocations: int = 4096,
    ) -> None:
        super().__init__(name)
        tiers: dict[Tier, Sequence[Any]] = {"policy": policy, "cache": cache, "handlers": handlers}
        tiers["telemetry"] = _default_telemetry() if telemetry is None else telemetry
        chains: dict[HookName, list[Bound]] = {hook: [] for hook in HOOKS}
        observers: list[Bound] = []
        members: list[Any] = []
        for tier in (*DECIDER_TIERS, "telemetry"):
            entries = tiers[tier]
            if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
                raise TypeError(f"{tier}= takes a list of handlers, got {type(entries).__name__}")
            for obj in entries:
                hooks, observer = bind(obj, tier, timeout)
                for hook, bound in hooks.items():
                    chains[hook].append(bound)
                if observer is not None:
                    observers.append(observer)
                members.append(obj)
        self._chains: dict[HookName, tuple[Bound, ...]] = {h: tuple(c) for h, c in chains.items()}
        self._observers = tuple(observers)
        self._observe_partial = any(o.partial for o in observers)
        self._members = tuple(members)
        self._strict = strict
        self._idle = not observers and not any(self._chains.values())
        self._stats: Counter[tuple[str, str, str]] = Counter()
        self._records = Records(max_invocations=max_invocations, on_evict=self._evicted)
        self._pending: set[asyncio.Task[None]] = set()

    # -- public ------------------------------------------------------------------------------

    @property
    def stats(self) -> Mapping[tuple[str, str, str], int]:
        """Failure counters keyed by ``(event, hook, handler)``.

        Events: ``error`` (a handler raised), ``timeout``, ``rejected`` (the return guard
        refused a value), ``observer_error``.
        """
        return MappingProxyType(self._stats)

    @property
    def open_invocations(self) -> int:
        """How many invocations are tracked right now (0 once every run has ended)."""
        return len(self._records)

    def chain(self, hook: HookName) -> tuple[str, ...]:
        """The names of the deciders on a hook, in the order they run."""
        return tuple(b.name for b in self._chains[hook])

    # -- run hooks -------------------------------------------------------------------------------

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        if self._idle:
            return None
        inv = self._invocation(invocation_context)
        kwargs = {"invocation_context": invocation_context, "user_message": user_message}
        agent = _agent_of(invocation_context)
        decided = await self._decide("on_user_message", kwargs, inv, agent=agent)
        if decided.failed and decided.bound is not None:
            # A denial here would replace the user's words; end the run in before_run instead.
            inv.data[_DENY_RUN] = decided.bound.name
        return decided.value  # type: ignore[no-any-return]

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if self._idle:
            return None
        inv = self._invocation(invocation_context)
        kwargs = {"invocation_context": invocation_context}
        decided = await self._decide("before_run", kwargs, inv, agent=_agent_of(invocation_context))
        denied_by = inv.data.pop(_DENY_RUN, None)
        if decided.value is None and denied_by is not None:
            return denial("before_run", denied_by)  # type: ignore[no-any-return]
        return decided.value  # type: ignore[no-any-return]

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if self._idle:
            return None
        inv = self._invocation(invocation_context)
        transfer = event.actions.transfer_to_agent if event.actions else None
        if transfer and event.author:
            inv.transferred.add(event.author)
        kwargs = {"invocation_context": invocation_context, "event": event}
        decided = await self._decide(
            "on_event", kwargs, inv, agent=event.author, partial=bool(event.partial)
        )
        return decided.value  # type: ignore[no-any-return]

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if self._idle or self._records.abandoned(invocation_context.invocation_id):
            return  # an abandoned run's end was reported when it was closed: only once
        inv = self._invocation(invocation_context)
        await self._close_open(inv, None)
        kwargs = {"invocation_context": invocation_context}
        await self._decide("after_run", kwargs, inv, agent=_agent_of(invocation_context))
        self._forget(inv)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        if self._idle:
            return
        inv = self._invocation(invocation_context)
        inv.error = error
        kwargs = {"invocation_context": invocation_context, "error": error}
        await self._decide(
            "on_run_error", kwargs, inv, agent=_agent_of(invocation_context), error=error
        )
        await self._finish(inv, _why(error), error)

    async def close(self) -> None:
        """Close every invocation still open (as abandoned), then each handler's ``close``."""
        for inv in list(self._records):
            await self._finish(inv, "abandoned", None)
        for obj in self._members:
            closer = getattr(obj, "close", None)
            if callable(closer):
                try:
                    result = closer()
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    logger.exception("adk_lattice: closing handler %r failed", obj)

    # -- agent hooks -----------------------------------------------------------------------------

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        if self._idle:
            return None
        inv = self._invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context}
        inv.agents_entered.append(agent.name)
        _push(inv.open_agents, (agent.name, kwargs))
        decided = await self._decide("before_agent", kwargs, inv, agent=agent.name)
        if decided.value is not None:
            _remove(inv.open_agents, agent.name)
            await self._synthesize("after_agent", kwargs, inv, agent.name, "blocked", decided)
        return decided.value  # type: ignore[no-any-return]

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        if self._idle:
            return None
        inv = self._invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context}
        _remove(inv.open_agents, agent.name)
        decided = await self._decide("after_agent", kwargs, inv, agent=agent.name)
        return decided.value  # type: ignore[no-any-return]

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext, error: Exception
    ) -> None:
        if self._idle:
            return
        inv = self._invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context, "error": error}
        _remove(inv.open_agents, agent.name)
        await self._decide("on_agent_error", kwargs, inv, agent=agent.name, error=error)
        inv.error = error
        await self._synthesize("after_agent", kwargs, inv, agent.name, _why(error))

    # -- model hooks -----------------------------------------------------------------------------

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if self._idle:
            return None
        inv = self._invocation(callback_context)
        agent = callback_context.agent_name
        kwargs = {"callback_context": callback_context, "llm_request": llm_request}
        _push(inv.open_models, (agent, kwargs))
        decided = await self._decide("before_model", kwargs, inv, agent=agent)
        if decided.value is not None:
            # ADK runs no after_model after a before_model short-circuit: close it here.
            _remove(inv.open_models, agent)
            served = {"callback_context": callback_context, "llm_response": decided.value}
            await self._synthesize("after_model", served, inv, agent, "short_circuit", decided)
        return decided.value  # type: ignore[no-any-return]

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if self._idle:
            return None
        inv = self._invocation(callback_context)
        agent = callback_context.agent_name
        partial = llm_response.partial is True
        if not partial:
            _remove(inv.open_models, agent)
        kwargs = {"callback_context": callback_context, "llm_response": llm_response}
        decided = await self._decide("after_model", kwargs, inv, agent=agent, partial=partial)
        return decided.value  # type: ignore[no-any-return]

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        if self._idle:
            return None
        inv = self._invocation(callback_context)
        agent = callback_context.agent_name
        kwargs = {"callback_context": callback_context, "llm_request": llm_request, "error": error}
        value = (await self._decide("on_model_error", kwargs, inv, agent=agent, error=error)).value
        if value is None:  # a recovered call goes on to after_model, which closes it
            _remove(inv.open_models, agent)
            closed = {"callback_context": callback_context, "llm_response": None, "error": error}
            await self._synthesize("after_model", closed, inv, agent, _why(error))
        return value  # type: ignore[no-any-return]

    # -- tool hooks ------------------------------------------------------------------------------

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if self._idle:
            return None
        inv = self._invocation(tool_context)
        call = CallRecord(
            tool_context.function_call_id, tool.name, tool_context.agent_name, inv.invocation_id
        )
        self._records.open_call(inv, call)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        decided = await self._decide("before_tool", kwargs, inv, call=call)
        if decided.bound is not None:
            call.short_circuited_by = decided.bound.name
            call.short_circuit_tier = decided.bound.tier
            call.denied = decided.denied
        return decided.value  # type: ignore[no-any-return]

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        if self._idle:
            return None
        inv = self._invocation(tool_context)
        call = self._call(inv, tool, tool_context, close=True)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        kwargs["result"] = result
        decided = await self._decide("after_tool", kwargs, inv, call=call)
        return decided.value  # type: ignore[no-any-return]

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        if self._idle:
            return None
        inv = self._invocation(tool_context)
        call = self._call(inv, tool, tool_context, close=False)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        kwargs["error"] = error
        value = (await self._decide("on_tool_error", kwargs, inv, call=call, error=error)).value
        if value is None or isinstance(error, asyncio.CancelledError):
            _pop_call(inv, call)  # a recovered call goes on to after_tool, which closes it
            kwargs["result"] = None
            await self._synthesize("after_tool", kwargs, inv, call.agent, _why(error), call=call)
        return value  # type: ignore[no-any-return]

    # -- machinery -------------------------------------------------------------------------------

    def _invocation(self, ctx: Any) -> InvocationRecord:
        if self._records.abandoned(ctx.invocation_id):
            # ADK still runs an invocation the lattice closed as abandoned (evicted, or the
            # plugin closed while the caller held the generator): serve its late hooks from
            # a detached record, so it is neither tracked again nor closed a second time.
            inv, created = InvocationRecord(ctx.invocation_id), True
        else:
            inv, created = self._records.open(ctx.invocation_id)
        if created:
            session = getattr(ctx, "session", None)
            if session is not None:
                inv.app_name, inv.user_id, inv.session_id = (
                    session.app_name,
                    session.user_id,
                    session.id,
                )
            if not self._records.abandoned(inv.invocation_id):
                self._watch(inv)
        return inv

    def _watch(self, inv: InvocationRecord) -> None:
        """Close the invocation if the task running it ends first (cancellation)."""
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return
        if task is None:
            return
        iid = inv.invocation_id

        def done(t: asyncio.Task[Any]) -> None:
            rec = self._records.get(iid)
            if rec is not None:
                reason: SynthReason = "cancelled" if t.cancelled() else "abandoned"
                self._spawn(self._finish(rec, reason, None))

        task.add_done_callback(done)

        def unwatch() -> None:
            task.remove_done_callback(done)

        inv.unwatch = unwatch

    def _spawn(self, coro: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _evicted(self, inv: InvocationRecord) -> None:
        logger.warning(
            "adk_lattice: invocation %s never ended; closing it as abandoned", inv.invocation_id
        )
        self._spawn(self._finish(inv, "abandoned", None, popped=True))

    def _call(
        self, inv: InvocationRecord, tool: BaseTool, ctx: ToolContext, *, close: bool
    ) -> CallRecord:
        fcid = ctx.function_call_id
        key = fcid or ""
        call = inv.open_calls.pop(key, None) if close else inv.open_calls.get(key)
        if call is None:  # another plugin short-circuited before_tool ahead of us
            call = CallRecord(fcid, tool.name, ctx.agent_name, inv.invocation_id)
            if not close:
                self._records.open_call(inv, call)
        return call

    async def _decide(
        self,
        hook: HookName,
        kwargs: dict[str, Any],
        inv: InvocationRecord,
        *,
        agent: str | None = None,
        call: CallRecord | None = None,
        partial: bool = False,
        error: BaseException | None = None,
    ) -> Decision:
        """Run the hook's deciders, then hand the outcome to the observers."""
        observe = self._observe_partial if partial else bool(self._observers)
        steps: list[Step] | None = [] if observe else None
        start = time.perf_counter() if observe else 0.0
        if call is not None:
            agent = call.agent
            token = _current_call.set(call)
        try:
            value, bound, failed = await run_chain(
                self._chains[hook],
                hook,
                kwargs,
                agent=agent,
                tool=call.tool if call is not None else None,
                partial=partial,
                strict=self._strict,
                stats=self._stats,
                steps=steps,
            )
        finally:
            if call is not None:
                _current_call.reset(token)
        decision = Decision(hook, value, bound, failed)
        if observe:
            await self._emit(
                Outcome(
                    hook=hook,
                    args=kwargs,
                    value=value,
                    acted_by=decision.acted_by,
                    acted_tier=bound.tier if bound is not None else None,
                    steps=tuple(steps) if steps else (),
                    agent=agent,
                    invocation_id=inv.invocation_id,
                    function_call_id=call.function_call_id if call is not None else None,
                    tool=call.tool if call is not None else None,
                    partial=partial,
                    reason="handler_error" if failed else None,
                    denied=decision.denied,
                    error=error,
                    invocation=inv,
                    call=call,
                    duration=time.perf_counter() - start,
                )
            )
        return decision

    async def _synthesize(
        self,
        hook: HookName,
        args: dict[str, Any],
        inv: InvocationRecord,
        agent: str | None,
        reason: SynthReason,
        cause: Decision | None = None,
        call: CallRecord | None = None,
    ) -> None:
        if not self._observers:
            return
        outcome = Outcome(
            hook=hook,
            args=args,
            agent=agent,
            invocation_id=inv.invocation_id,
            function_call_id=call.function_call_id if call is not None else None,
            tool=call.tool if call is not None else None,
            synthesized=True,
            reason=reason,
            error=args.get("error", inv.error),
            invocation=inv,
            call=call,
        )
        if cause is not None and cause.bound is not None:
            outcome.acted_by, outcome.acted_tier = cause.bound.name, cause.bound.tier
            outcome.denied = cause.denied
            if hook == "after_model":
                outcome.value = args.get("llm_response")
        await self._emit(outcome)

    async def _finish(
        self,
        inv: InvocationRecord,
        reason: SynthReason,
        error: BaseException | None,
        *,
        popped: bool = False,
    ) -> None:
        """End a run ADK gave no ``after_run`` for: close what it left open, report its end."""
        if not popped and self._records.get(inv.invocation_id) is not inv:
            return  # already finished (e.g. on_run_error, then the task ended)
        self._forget(inv)
        if reason == "abandoned":
            self._records.abandon(inv.invocation_id)
        await self._close_open(inv, reason)
        args = {"invocation_context": None, "error": error}
        await self._synthesize("after_run", args, inv, None, "run_error" if error else reason)

    def _forget(self, inv: InvocationRecord) -> None:
        self._records.pop(inv.invocation_id)
        if inv.unwatch is not None:
            inv.unwatch()
            inv.unwatch = None

    async def _close_open(self, inv: InvocationRecord, reason: SynthReason | None) -> None:
        """Synthesize the ends ADK skipped, innermost first: tool calls, models, agents."""
        close: SynthReason = reason or "abandoned"
        while inv.open_calls:
            _, call = inv.open_calls.popitem()
            args = {"tool": None, "tool_args": None, "tool_context": None, "result": None}
            await self._synthesize("after_tool", args, inv, call.agent, close, call=call)
        while inv.open_models:
            agent, opened = inv.open_models.pop()
            args = {"callback_context": opened["callback_context"], "llm_response": None}
            await self._synthesize("after_model", args, inv, agent, close)
        while inv.open_agents:
            agent, opened = inv.open_agents.pop()
            why: SynthReason = "transferred" if agent in inv.transferred else close
            await self._synthesize("after_agent", opened, inv, agent, why)

    async def _emit(self, outcome: Outcome) -> None:
        for o in self._observers:
            if outcome.partial and not o.partial:
                continue
            try:
                result = o.call(outcome)
                if o.is_async or (result is not None and inspect.isawaitable(result)):
                    await (asyncio.wait_for(result, o.timeout) if o.timeout else result)
            except Exception:
                self._stats[("observer_error", outcome.hook, o.name)] += 1
                if o.on_error == "raise":
                    raise
                logger.exception("adk_lattice: observer %r failed on %s", o.name, outcome.hook)


#: Hooks where a policy's value stops something from happening (a denial); on the other
#: hooks a policy's value reshapes what happened (a rewrite, a redaction, a cap).
BLOCKING_HOOKS: Final = frozenset(
    {"on_user_message", "before_run", "before_agent", "before_model", "before_tool"}
)


class Decision(NamedTuple):
    """What the deciders of one hook settled on."""

    hook: HookName
    value: Any
    bound: Bound | None
    failed: bool

    @property
    def acted_by(self) -> str | None:
        return self.bound.name if self.bound is not None else None

    @property
    def denied(self) -> bool:
        """A policy handler blocked the step, or a failing handler was denied fail-closed."""
        if self.failed:
            return True
        return (
            self.bound is not None and self.bound.tier == "policy" and self.hook in BLOCKING_HOOKS
        )


_DENY_RUN = "adk_lattice.deny_run"  # set when a failing on_user_message policy denies the run
_MAX_OPEN = 1024  # open agents or model calls per invocation; past it the oldest is dropped


def _push(opened: list[tuple[str, dict[str, Any]]], entry: tuple[str, dict[str, Any]]) -> None:
    opened.append(entry)
    if len(opened) > _MAX_OPEN:
        del opened[0]


def _why(error: BaseException) -> SynthReason:
    return "cancelled" if isinstance(error, asyncio.CancelledError) else "error"


def _agent_of(ctx: InvocationContext) -> str | None:
    agent = ctx.agent
    return agent.name if agent is not None else None


def _remove(opened: list[tuple[str, dict[str, Any]]], name: str | None) -> None:
    """Drop the innermost open entry for ``name`` (parallel agents interleave)."""
    for i in range(len(opened) - 1, -1, -1):
        if opened[i][0] == name:
            del opened[i]
            return


def _pop_call(inv: InvocationRecord, call: CallRecord) -> None:
    for key, value in list(inv.open_calls.items()):
        if value is call:
            del inv.open_calls[key]
            return
