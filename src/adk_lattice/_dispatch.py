"""The dispatch engine behind ``Lattice``: records, decisions, outcomes, synthesized closes.

``Lattice`` maps each ADK hook onto this engine; the engine runs the hook's chain, builds
the :class:`~adk_lattice.Outcome`, hands it to the observers, and closes what ADK leaves
open (a short-circuited model call, a blocked or transferred agent, a failed or cancelled
run), keyed per invocation and per call.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ._chain import FailCode, run_chain, stack_of
from ._handlers import Bound
from ._hooks import HookName
from ._outcome import Outcome, Step, SynthReason
from ._records import (
    CallRecord,
    InvocationRecord,
    Records,
    _current_call,
    call_key,
    tool_label,
)
from ._shadow import Forks, ShadowRun, observe_shadow, run_shadow

if TYPE_CHECKING:
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.tool_context import ToolContext

logger = logging.getLogger("adk_lattice")


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
    failed: FailCode | None  # why the lattice denied for a failing handler, else None

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


DENY_RUN = "adk_lattice.deny_run"  # set when a failing on_user_message policy denies the run
MAX_OPEN = 1024  # open agents or model calls per invocation; past it the oldest is dropped


def push_open(opened: list[tuple[str, dict[str, Any]]], entry: tuple[str, dict[str, Any]]) -> None:
    opened.append(entry)
    if len(opened) > MAX_OPEN:
        del opened[0]


def why(error: BaseException) -> SynthReason:
    return "cancelled" if isinstance(error, asyncio.CancelledError) else "error"


def agent_of(ctx: InvocationContext) -> str | None:
    agent = ctx.agent
    return agent.name if agent is not None else None


def remove_open(opened: list[tuple[str, dict[str, Any]]], name: str | None) -> bool:
    """Drop the innermost open entry for ``name`` (parallel agents interleave); whether
    there was one."""
    for i in range(len(opened) - 1, -1, -1):
        if opened[i][0] == name:
            del opened[i]
            return True
    return False


def pop_call(inv: InvocationRecord, call: CallRecord) -> None:
    for key, value in list(inv.open_calls.items()):
        if value is call:
            del inv.open_calls[key]
            return


class Dispatcher:
    """Runs chains and observers for one ``Lattice``, with its keyed, bounded records.

    Args:
        chains: the deciders per hook, tiers in order.
        observers: every observer, in order.
        strict: raise on a bad return instead of ignoring it.
        max_invocations: how many invocations may be open before the oldest is abandoned.
        shadows: the shadow handlers per hook (``mode="shadow"``), run on copies.
    """

    def __init__(
        self,
        chains: dict[HookName, tuple[Bound, ...]],
        observers: tuple[Bound, ...],
        *,
        strict: bool,
        max_invocations: int,
        shadows: dict[HookName, tuple[Bound, ...]] | None = None,
    ) -> None:
        self.chains = chains
        #: The after_model policy deciders, run on an answer a cache served.
        self._output_policy = tuple(b for b in chains.get("after_model", ()) if b.tier == "policy")
        self.shadows = shadows or {}
        #: Shadow handlers' own state writes, per session (never the session's).
        self.forks = Forks()
        self.observers = observers
        self.observe_partial = any(o.partial for o in observers)
        self.strict = strict
        self.stats: Counter[tuple[str, str, str]] = Counter()
        self.records = Records(max_invocations=max_invocations, on_evict=self.evicted)
        self.pending: set[asyncio.Task[None]] = set()

    def invocation(self, ctx: Any) -> InvocationRecord:
        detached = self.records.abandoned(ctx.invocation_id)
        if detached:
            # ADK still runs an invocation the lattice closed as abandoned (evicted, or the
            # plugin closed while the caller held the generator): serve its late hooks from
            # a detached record, so it is neither tracked again nor closed a second time.
            inv, created = InvocationRecord(ctx.invocation_id), True
        else:
            inv, created = self.records.open(ctx.invocation_id)
        if created:
            session = getattr(ctx, "session", None)
            if session is not None:
                inv.app_name, inv.user_id, inv.session_id = (
                    session.app_name,
                    session.user_id,
                    session.id,
                )
            if not detached:
                self.watch(inv)
        return inv

    def watch(self, inv: InvocationRecord) -> None:
        """Close the invocation if the task running it ends first (cancellation)."""
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return
        if task is None:
            return
        iid = inv.invocation_id

        def done(t: asyncio.Task[Any]) -> None:
            rec = self.records.get(iid)
            if rec is not None:
                reason: SynthReason = "cancelled" if t.cancelled() else "abandoned"
                self.spawn(self.finish(rec, reason, None))

        task.add_done_callback(done)

        def unwatch() -> None:
            task.remove_done_callback(done)

        inv.unwatch = unwatch

    def spawn(self, coro: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def settle(self) -> None:
        """Wait for the closes started in the background (a cancelled or evicted run's)."""
        loop = asyncio.get_running_loop()
        started = [t for t in self.pending if t.get_loop() is loop]
        if started:
            await asyncio.wait(started)

    def evicted(self, inv: InvocationRecord) -> None:
        logger.warning(
            "adk_lattice: invocation %s never ended; closing it as abandoned", inv.invocation_id
        )
        self.spawn(self.finish(inv, "abandoned", None, popped=True))

    def call(
        self, inv: InvocationRecord, tool: BaseTool, ctx: ToolContext, *, close: bool
    ) -> CallRecord:
        fcid = ctx.function_call_id
        key = call_key(fcid, tool_label(tool))
        call = inv.open_calls.pop(key, None) if close else inv.open_calls.get(key)
        if call is None:  # another plugin short-circuited before_tool ahead of us
            call = CallRecord(fcid, tool_label(tool), ctx.agent_name, inv.invocation_id)
            if not close:
                self.records.open_call(inv, call)
        return call

    async def decide(
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
        observe = self.observe_partial if partial else bool(self.observers)
        steps: list[Step] | None = [] if observe else None
        start = time.perf_counter() if observe else 0.0
        if call is not None:
            agent = call.agent
            token = _current_call.set(call)
        try:
            shadow: tuple[ShadowRun, ...] = ()
            if self.shadows.get(hook):
                shadow = await run_shadow(
                    self.shadows[hook],
                    hook,
                    kwargs,
                    agent=agent,
                    tool=call.tool if call is not None else None,
                    partial=partial,
                    stats=self.stats,
                    forks=self.forks,
                )
            value, bound, failed = await run_chain(
                self.chains[hook],
                hook,
                kwargs,
                agent=agent,
                tool=call.tool if call is not None else None,
                partial=partial,
                strict=self.strict,
                stats=self.stats,
                steps=steps,
            )
        finally:
            if call is not None:
                _current_call.reset(token)
        decision = Decision(hook, value, bound, failed)
        if observe:
            await self.emit(
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
                    reason=failed,
                    denied=decision.denied,
                    error=error,
                    invocation=inv,
                    call=call,
                    duration=time.perf_counter() - start,
                    shadow=shadow,
                )
            )
        return decision

    async def output_policy(self, kwargs: dict[str, Any], agent: str | None) -> Any:
        """Run the ``after_model`` policy deciders on an answer a cache served.

        ADK runs no ``after_model`` after a ``before_model`` short-circuit, so without this
        a stored answer would skip output policy: one stored before a policy was added, or
        by another writer of the store. Their notes join the synthesized ``after_model``
        outcome that follows (same context). Returns the answer to serve.
        """
        served = kwargs["llm_response"]
        if not self._output_policy:
            return served
        value, _, _ = await run_chain(
            self._output_policy,
            "after_model",
            kwargs,
            agent=agent,
            tool=None,
            partial=False,
            strict=self.strict,
            stats=self.stats,
            steps=None,
        )
        return value if value is not None else served

    async def synthesize(
        self,
        hook: HookName,
        args: dict[str, Any],
        inv: InvocationRecord,
        agent: str | None,
        reason: SynthReason,
        cause: Decision | None = None,
        call: CallRecord | None = None,
    ) -> None:
        if not self.observers:
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
        await self.emit(outcome)

    async def finish(
        self,
        inv: InvocationRecord,
        reason: SynthReason,
        error: BaseException | None,
        *,
        popped: bool = False,
    ) -> None:
        """End a run ADK gave no ``after_run`` for: close what it left open, report its end."""
        if not popped and self.records.get(inv.invocation_id) is not inv:
            return  # already finished (e.g. on_run_error, then the task ended)
        self.forget(inv)
        if reason == "abandoned":
            self.records.abandon(inv.invocation_id)
        await self.close_open(inv, reason)
        args = {"invocation_context": None, "error": error}
        await self.synthesize("after_run", args, inv, None, "run_error" if error else reason)

    def forget(self, inv: InvocationRecord) -> None:
        self.records.pop(inv.invocation_id)
        if inv.unwatch is not None:
            inv.unwatch()
            inv.unwatch = None

    async def close_open(self, inv: InvocationRecord, reason: SynthReason | None) -> None:
        """Synthesize the ends ADK skipped, innermost first: tool calls, models, agents."""
        close: SynthReason = reason or "abandoned"
        # A tool call still open when its run fails was interrupted by the failure: its task
        # was cancelled (ADK 2.13 reports that with on_tool_error(CancelledError), which
        # closes the call earlier; older releases report nothing).
        interrupted: SynthReason = "cancelled" if close == "error" else close
        while inv.open_calls:
            _, call = inv.open_calls.popitem()
            args = {"tool": None, "tool_args": None, "tool_context": None, "result": None}
            await self.synthesize("after_tool", args, inv, call.agent, interrupted, call=call)
        while inv.open_models:
            agent, opened = inv.open_models.pop()
            args = {"callback_context": opened["callback_context"], "llm_response": None}
            await self.synthesize("after_model", args, inv, agent, close)
        while inv.open_agents:
            agent, opened = inv.open_agents.pop()
            ended: SynthReason = "transferred" if agent in inv.transferred else close
            await self.synthesize("after_agent", opened, inv, agent, ended)

    async def emit(self, outcome: Outcome) -> None:
        for o in self.observers:
            if outcome.partial and not o.partial:
                continue
            try:
                if o.shadow:  # a shadow handler's observe acts on copies, like its hooks
                    await observe_shadow(o, outcome, self.forks)
                    continue
                result = o.call(outcome)
                if o.is_async or (result is not None and inspect.isawaitable(result)):
                    await (asyncio.wait_for(result, o.timeout) if o.timeout else result)
            except Exception as exc:
                self.stats[("observer_error", outcome.hook, o.name)] += 1
                if o.on_error == "raise":
                    raise
                logger.error(
                    "adk_lattice: observer %r failed on %s (%s)%s",
                    o.name,
                    outcome.hook,
                    type(exc).__name__,
                    stack_of(exc),
                )
