"""``Lattice``: the one ADK plugin. Maps every ADK hook onto its chain and its observers."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

from cachetools import LRUCache
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool

from ._app.check import DeclarationCheck, declarations
from ._chain import denial
from ._config.read import read_config_name
from ._config.refuse import OnConfigError, load_config, refused
from ._coverage import CoverageCheck
from ._dispatch import DENY_RUN, Dispatcher, agent_of, pop_call, push_open, remove_open, why
from ._handlers import Mode
from ._hooks import HookName, Tier
from ._records import (
    ABSENT,
    CallRecord,
    InvocationRecord,
    OwnSnapshot,
    own_digest,
    own_forged,
    own_restore,
    own_snapshot,
    own_values,
    tool_label,
    undo_own_writes,
)
from ._shadow import split_shadow
from ._stack import StackCheck
from ._tiers import build_tiers, close_members, default_telemetry
from .policy.provenance.taint import TAINT_KEY, session_hash

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types


logger = logging.getLogger("adk_lattice")
#: Where a call record keeps the lattice's own keys as they were before the tool ran.
_OWN: Final = "adk_lattice.own_state"
#: Where an invocation record counts its tool calls that ended (siblings' labels).
_ENDED: Final = "adk_lattice.calls_ended"
#: Sessions whose own keys the lattice last checked against the history, with their digest.
_MAX_CHECKED: Final = 65_536
#: The source a taint record names when a client wrote it and no earlier value is known.
_UNVERIFIED: Final = "<client-write>"


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
        policy: policy handlers; a failing one denies (fails closed). When a policy trusts
            state keys (``state_keys``) and none is a ``ProtectState``, one protecting
            those keys is put first.
        cache: cache handlers; a failing one is skipped (fails open).
        handlers: custom handlers; a failing one is skipped.
        telemetry: observers (objects with ``observe(outcome)``). ``None`` (the default)
            installs the default observers; ``()`` installs none.
        strict: raise :class:`~adk_lattice.ReturnGuardError` when a handler returns a value
            of the wrong type or a suspicious empty one (for tests). Without it such a value
            is a failure of its handler: a policy denies, the others are skipped.
        timeout: seconds any async handler or observer may take when it sets no ``timeout``
            of its own; past it the handler counts as failed (a policy denies). ``None``: no
            limit. Sync handlers cannot be interrupted.
        max_invocations: how many invocations may be tracked at once before the oldest is
            closed as abandoned (memory stays flat when runs never end cleanly).
        stack: run even when another ``Lattice`` was registered before this one on the same
            runner. By default the later one warns once, naming both, and stands down there,
            so each hook is decided and audited once (``adk web --extra_plugins
            adk_lattice.Lattice`` on an app that already has a Lattice).
        config: a TOML file describing the tiers and options (see :meth:`from_config`);
            not together with tiers given in code. When neither is given and the
            environment variable ``ADK_LATTICE_CONFIG`` names a file, that file is read
            (this is how ``adk web --extra_plugins adk_lattice.Lattice`` gets a policy).
        on_config_error: what a config file with problems does. ``refuse`` (the default):
            the lattice loads, logs every finding (file, table, key) at ERROR level and
            refuses every run with a legible reply, since ADK's servers would otherwise
            serve the app without the plugin. ``raise``: raise :class:`ConfigError` here.
            ``open``: log the findings and run with the default observers only. ``None``
            reads ``ADK_LATTICE_ON_CONFIG_ERROR`` (how an operator chooses under ``adk
            api_server``), else ``refuse``.
        dynamic_tools: tool names the handlers may name although no agent has them at the
            first run (a toolset that adds tools later). Every other tool, argument and
            agent a handler names is checked against the app at its first run: one that
            names nothing real refuses every run (see :meth:`check_declarations`).
        close_stores: ``close()`` (which ``runner.close()`` calls) also closes every store
            the handlers hold (their ``store``), each once however many handlers share it,
            after the handlers closed. ``False`` when those stores outlive this lattice (one
            store shared by several runners): then the application closes them. The stores
            a config file declared are the lattice's own and always closed. SQLite and Redis
            stores reopen on their next use; a ``MemoryStore`` comes back empty.

    Raises:
        TypeError: on a registration mistake, with the fix in the message: a class instead
            of an instance, a bare function (use ``on``), a hook method whose signature
            cannot take ADK's keyword arguments, no hook method and no ``observe``, two
            handlers with one name (see docs/core.md).
        ValueError: on a bad handler option, ``config`` together with tiers, or an unknown
            ``on_config_error``.
        ConfigError: with ``on_config_error="raise"``, when the config file is missing or
            has problems (a ``ValueError`` listing every one, with file, table and key).
    """

    #: Marks the class for binding, which refuses a Lattice inside another (``LATTICE_MARK``).
    _adk_lattice_plugin: ClassVar[bool] = True

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
        config: str | os.PathLike[str] | None = None,
        stack: bool = False,
        on_config_error: OnConfigError | None = None,
        dynamic_tools: Iterable[str] = (),
        close_stores: bool = True,
    ) -> None:
        super().__init__(name)
        self._stack = StackCheck(self, stack=stack)
        in_code = bool(policy or cache or handlers) or telemetry is not None
        if config is not None and in_code:
            raise ValueError(
                "pass either config= or tiers in code (policy=, cache=, ...), not both"
            )
        loaded, self._refusal = load_config(
            config, from_env=not in_code, on_config_error=on_config_error
        )
        if self._refusal is not None:
            telemetry = ()  # nothing runs: the hooks below refuse before any chain
        self._owned: tuple[Any, ...] = ()
        if loaded is not None:
            options = loaded.lattice_kwargs()
            policy, cache = options.pop("policy", ()), options.pop("cache", ())
            handlers, telemetry = options.pop("handlers", ()), options.pop("telemetry", None)
            strict = options.get("strict", strict)
            timeout = options.get("timeout", timeout)
            max_invocations = options.get("max_invocations", max_invocations)
            dynamic_tools = options.get("dynamic_tools", dynamic_tools)
            self._owned = tuple(loaded.stores.values())
            if loaded.tracing is not None:
                from .telemetry import enable_tracing

                enable_tracing(**loaded.tracing)
        if isinstance(policy, Iterable) and not isinstance(policy, str | bytes):
            # A policy trusting a state key gets that key protected from client writes.
            from .policy.protect import with_protection

            policy = with_protection(policy)
        tiers: dict[Tier, Sequence[Any]] = {"policy": policy, "cache": cache, "handlers": handlers}
        tiers["telemetry"] = default_telemetry() if telemetry is None else telemetry
        chains, observers, members = build_tiers(tiers, timeout)
        chains, shadows = split_shadow(chains)
        self._members = members
        if isinstance(dynamic_tools, str) or not all(isinstance(t, str) for t in dynamic_tools):
            raise TypeError("dynamic_tools takes a list of tool names, e.g. ['search_orders']")
        deciders = [*tiers["policy"], *tiers["cache"], *tiers["handlers"]]
        self._declared = DeclarationCheck(declarations(deciders), frozenset(dynamic_tools))
        #: What puts back a call's arguments as the model wrote them (RedactPII) before any
        #: before_tool decider runs, so each checks what the tool receives, in any order.
        self._restorers = tuple(
            d.restore_tool_args
            for d in deciders
            if callable(getattr(d, "restore_tool_args", None))
            and getattr(d, "mode", None) != "shadow"
        )
        self._close_stores = close_stores
        #: (app, user, session) -> digest of the lattice's own keys as last checked or left.
        self._own_checked: LRUCache[tuple[str, str, str], str] = LRUCache(_MAX_CHECKED)
        self._coverage = CoverageCheck()
        self._idle = not observers and not any(chains.values()) and not shadows
        self._dispatch = Dispatcher(
            chains, observers, strict=strict, max_invocations=max_invocations, shadows=shadows
        )

    # -- public ------------------------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        on_config_error: OnConfigError | None = None,
    ) -> Lattice:
        """Build a lattice from a TOML file: tiers, handlers, shared stores, state keys.

        ::

            [stores.shared]
            type = "redis"
            url_env = "REDIS_URL"        # the URL (and its password) stays in the environment

            [[policy]]
            use = "adk_lattice.policy:RateLimit"
            args = { limit = 100, window_seconds = 3600, store = "@stores.shared" }
            mode = "shadow"

        Args:
            path: the TOML file (format: ``docs/config.md``).
            name: the plugin name (default: ``[lattice] name`` in the file, else
                ``adk_lattice``).
            on_config_error: ``refuse`` (default), ``raise`` or ``open``, as for
                :class:`Lattice`.

        Returns:
            The lattice. Stores the file declares are closed by its ``close()``. When the
            file has problems it refuses every run (see ``on_config_error``).

        Raises:
            ConfigError: with ``on_config_error="raise"``, listing every problem, each
                with file, table and key.
        """
        if name is None:
            name = str(read_config_name(path) or "adk_lattice")
        return cls(name, config=path, on_config_error=on_config_error)

    @property
    def stats(self) -> Mapping[tuple[str, str, str], int]:
        """Failure counters keyed by ``(event, hook, handler)``.

        Events: ``error`` (a handler raised), ``timeout``, ``rejected`` (the return guard
        refused a value), ``observer_error``.
        """
        return MappingProxyType(self._dispatch.stats)

    @property
    def open_invocations(self) -> int:
        """How many invocations are tracked right now (0 once every run has ended)."""
        return len(self._dispatch.records)

    async def check_declarations(self, agent: BaseAgent) -> tuple[str, ...]:
        """Check now, against ``agent``'s tree, what the handlers name (as the first run does).

        Every tool a handler names (``consequential``, rules, limits, caches, ``tools=``
        scoping) must be a tool of some agent in the tree, every argument it names a
        parameter of that tool, every ``agents=`` name an agent; a name in
        ``dynamic_tools`` is accepted unseen. Toolsets are listed without a context. Use it
        in a test or at start-up to fail before serving; runs check the same by themselves.

        Args:
            agent: the root agent of the app.

        Returns:
            One finding per unknown name, naming the handler and the nearest real name
            (empty when every name is real).
        """
        return await self._declared.check(agent)

    def chain(self, hook: HookName, mode: Mode = "enforce") -> tuple[str, ...]:
        """The names of the deciders on a hook, in the order they run.

        Args:
            hook: the hook name.
            mode: ``enforce`` (the deciders) or ``shadow`` (the shadow handlers, which run
                on copies before them).
        """
        if mode == "shadow":
            return tuple(b.name for b in self._dispatch.shadows.get(hook, ()))
        return tuple(b.name for b in self._dispatch.chains[hook])

    # -- run hooks -------------------------------------------------------------------------------

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        if self._idle or self._stack.off_run(invocation_context):
            return None
        inv = self._dispatch.invocation(invocation_context)
        # ADK applies the client's state_delta after this hook: see before_run.
        inv.data[_OWN] = own_values(invocation_context.session.state)
        kwargs = {"invocation_context": invocation_context, "user_message": user_message}
        agent = agent_of(invocation_context)
        decided = await self._dispatch.decide("on_user_message", kwargs, inv, agent=agent)
        if decided.failed and decided.bound is not None:
            # A denial here would replace the user's words; end the run in before_run instead.
            inv.data[DENY_RUN] = decided.bound.name
        return decided.value  # type: ignore[no-any-return]

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if (refusal := refused(self._refusal, "before_run")) is not None:
            return refusal  # type: ignore[no-any-return]
        self._coverage.check(invocation_context)
        if self._idle or self._stack.off_run(invocation_context):
            return None
        unknown = await self._declared.refusal(invocation_context)
        if (refusal := refused(unknown, "before_run")) is not None:
            return refusal  # type: ignore[no-any-return]
        inv = self._dispatch.invocation(invocation_context)
        await self._restore_own(invocation_context, inv.data.pop(_OWN, None))
        await self._check_own(invocation_context)
        kwargs = {"invocation_context": invocation_context}
        decided = await self._dispatch.decide(
            "before_run", kwargs, inv, agent=agent_of(invocation_context)
        )
        denied_by = inv.data.pop(DENY_RUN, None)
        if decided.value is None and denied_by is not None:
            return denial("before_run", denied_by)  # type: ignore[no-any-return]
        return decided.value  # type: ignore[no-any-return]

    async def _restore_own(self, ic: InvocationContext, before: Any) -> None:
        """Put back the lattice's own keys a client's ``state_delta`` wrote, persisted."""
        restore = own_restore(ic.session.state, before) if before is not None else {}
        await self._put_own(ic, restore, "a client's state_delta")

    async def _check_own(self, ic: InvocationContext) -> None:
        """Put back the lattice's own keys a client wrote between runs (a session PATCH).

        A session whose own keys hold what the lattice last checked or left is not read
        again; otherwise the history says who wrote each key last. A key a user-authored
        event wrote last gets the value written before it by another author; a taint
        record with no such value becomes one naming ``<client-write>`` (fail closed).
        """
        session = getattr(ic, "session", None)
        if session is None:
            return
        key = (session.app_name, session.user_id, session.id)
        if self._own_checked.get(key) == own_digest(session.state):
            return
        restore: dict[str, Any] = {}
        for name, value in own_forged(session.events).items():
            if value is ABSENT and name == TAINT_KEY:
                value = {"v": 1, "s": {session_hash(session.id): {"src": [_UNVERIFIED]}}}
            if session.state.get(name) != (None if value is ABSENT else value):
                restore[name] = None if value is ABSENT else value
        await self._put_own(ic, restore, "a client's write between runs")
        self._own_checked[key] = own_digest(session.state)

    def _left_own(self, ic: InvocationContext) -> None:
        """Remember the lattice's own keys as a run leaves them (checked next run in O(1))."""
        session = getattr(ic, "session", None)
        if session is not None:
            key = (session.app_name, session.user_id, session.id)
            self._own_checked[key] = own_digest(session.state)

    async def _put_own(self, ic: InvocationContext, restore: dict[str, Any], what: str) -> None:
        if not restore:
            return
        fix = Event(
            invocation_id=ic.invocation_id,
            author=self.name,
            actions=EventActions(state_delta=restore),
        )
        await ic.session_service.append_event(session=ic.session, event=fix)
        logger.warning(
            "adk_lattice: undid %s to the lattice's own state key(s) %s",
            what,
            ", ".join(sorted(restore)),
        )

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if self._idle or self._stack.off_run(invocation_context):
            return None
        inv = self._dispatch.invocation(invocation_context)
        transfer = event.actions.transfer_to_agent if event.actions else None
        if transfer and event.author:
            inv.transferred.add(event.author)
        kwargs = {"invocation_context": invocation_context, "event": event}
        decided = await self._dispatch.decide(
            "on_event", kwargs, inv, agent=event.author, partial=bool(event.partial)
        )
        return decided.value  # type: ignore[no-any-return]

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if self._idle or self._stack.off_run(invocation_context):
            return
        if self._dispatch.records.abandoned(invocation_context.invocation_id):
            return  # an abandoned run's end was reported when it was closed: only once
        inv = self._dispatch.invocation(invocation_context)
        if (task := asyncio.current_task()) is not None and task.cancelling():
            # google-adk < 2.11 runs after_run while cancelling the run (later: no run hook)
            await self._dispatch.finish(inv, "cancelled", None)
            return
        await self._dispatch.close_open(inv, None)
        kwargs = {"invocation_context": invocation_context}
        await self._dispatch.decide("after_run", kwargs, inv, agent=agent_of(invocation_context))
        self._dispatch.forget(inv)
        self._left_own(invocation_context)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        if self._idle or self._stack.off_run(invocation_context):
            return
        inv = self._dispatch.invocation(invocation_context)
        inv.error = error
        kwargs = {"invocation_context": invocation_context, "error": error}
        await self._dispatch.decide(
            "on_run_error", kwargs, inv, agent=agent_of(invocation_context), error=error
        )
        await self._dispatch.finish(inv, why(error), error)
        self._left_own(invocation_context)

    async def close(self) -> None:
        """Close every invocation still open (as abandoned), each handler, then the stores.

        The stores are those the handlers hold (unless ``close_stores=False``) and those a
        config file declared, each closed once, so no connection or database thread keeps
        the process alive after ``runner.close()``.

        The closes already started in the background (a run cancelled or evicted just
        before) are awaited first, so such a run is reported for what ended it.
        """
        await self._dispatch.settle()
        for inv in list(self._dispatch.records):
            await self._dispatch.finish(inv, "abandoned", None)
        await close_members(self._members, held=self._close_stores, stores=self._owned)

    # -- agent hooks -----------------------------------------------------------------------------

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        if self._idle or self._stack.off(callback_context):
            return None
        inv = self._dispatch.invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context}
        inv.agents_entered.append(agent.name)
        push_open(inv.open_agents, (agent.name, kwargs))
        decided = await self._dispatch.decide("before_agent", kwargs, inv, agent=agent.name)
        if decided.value is not None:
            remove_open(inv.open_agents, agent.name)
            await self._dispatch.synthesize(
                "after_agent", kwargs, inv, agent.name, "blocked", decided
            )
        return decided.value  # type: ignore[no-any-return]

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        if self._idle or self._stack.off(callback_context):
            return None
        inv = self._dispatch.invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context}
        remove_open(inv.open_agents, agent.name)
        decided = await self._dispatch.decide("after_agent", kwargs, inv, agent=agent.name)
        return decided.value  # type: ignore[no-any-return]

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext, error: Exception
    ) -> None:
        if self._idle or self._stack.off(callback_context):
            return
        inv = self._dispatch.invocation(callback_context)
        kwargs = {"agent": agent, "callback_context": callback_context, "error": error}
        remove_open(inv.open_agents, agent.name)
        await self._dispatch.decide("on_agent_error", kwargs, inv, agent=agent.name, error=error)
        inv.error = error
        await self._dispatch.synthesize("after_agent", kwargs, inv, agent.name, why(error))

    # -- model hooks -----------------------------------------------------------------------------

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if self._refusal is not None:  # a run that got past before_run (a nested runner)
            return refused(self._refusal, "before_model")  # type: ignore[no-any-return]
        if self._idle or self._stack.off(callback_context):
            return None
        inv = self._dispatch.invocation(callback_context)
        agent = callback_context.agent_name
        kwargs = {"callback_context": callback_context, "llm_request": llm_request}
        push_open(inv.open_models, (agent, kwargs))
        decided = await self._dispatch.decide("before_model", kwargs, inv, agent=agent)
        value = decided.value
        if value is not None:
            # ADK runs no after_model after a before_model short-circuit: close it here.
            remove_open(inv.open_models, agent)
            served = {"callback_context": callback_context, "llm_response": value}
            if decided.bound is not None and decided.bound.tier == "cache":
                # A stored answer still passes today's output policy (redaction...).
                value = served["llm_response"] = await self._dispatch.output_policy(served, agent)
            await self._dispatch.synthesize(
                "after_model", served, inv, agent, "short_circuit", decided
            )
        return value  # type: ignore[no-any-return]

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if self._idle or self._stack.off(callback_context):
            return None
        inv = self._dispatch.invocation(callback_context)
        agent = callback_context.agent_name
        partial = llm_response.partial is True
        if not partial:
            remove_open(inv.open_models, agent)
        kwargs = {"callback_context": callback_context, "llm_response": llm_response}
        decided = await self._dispatch.decide(
            "after_model", kwargs, inv, agent=agent, partial=partial
        )
        return decided.value  # type: ignore[no-any-return]

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        if self._idle or self._stack.off(callback_context):
            return None
        inv = self._dispatch.invocation(callback_context)
        agent = callback_context.agent_name
        kwargs = {"callback_context": callback_context, "llm_request": llm_request, "error": error}
        value = (
            await self._dispatch.decide("on_model_error", kwargs, inv, agent=agent, error=error)
        ).value
        # A recovered call goes on to after_model, which closes it; a call the lattice
        # already closed (the run was abandoned: google-adk 2.15 reports its cancellation
        # afterwards) is not closed twice.
        if value is None and remove_open(inv.open_models, agent):
            closed = {"callback_context": callback_context, "llm_response": None, "error": error}
            await self._dispatch.synthesize("after_model", closed, inv, agent, why(error))
        return value  # type: ignore[no-any-return]

    # -- tool hooks ------------------------------------------------------------------------------

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if self._refusal is not None:
            return refused(self._refusal, "before_tool")  # type: ignore[no-any-return]
        if self._idle or self._stack.off(tool_context):
            return None
        inv = self._dispatch.invocation(tool_context)
        call = CallRecord(
            tool_context.function_call_id,
            tool_label(tool),
            tool_context.agent_name,
            inv.invocation_id,
        )
        self._dispatch.records.open_call(inv, call)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        for restore in self._restorers:
            try:
                restore(**kwargs)
            except Exception as exc:  # the tool then gets the redacted form: fail safe
                logger.error(
                    "adk_lattice: restoring the arguments of %s failed (%s)",
                    call.tool,
                    type(exc).__name__,
                )
        decided = await self._dispatch.decide("before_tool", kwargs, inv, call=call)
        # What the lattice's own keys hold before the tool runs: the tool may not change them.
        call.data[_OWN] = own_snapshot(
            tool_context.session.state, tool_context.actions.state_delta, inv.data.get(_ENDED, 0)
        )
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
        if self._idle or self._stack.off(tool_context):
            return None
        inv = self._dispatch.invocation(tool_context)
        call = self._dispatch.call(inv, tool, tool_context, close=True)
        _guard_own(tool, tool_context, call, inv)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        kwargs["result"] = result
        decided = await self._dispatch.decide("after_tool", kwargs, inv, call=call)
        inv.data[_ENDED] = inv.data.get(_ENDED, 0) + 1
        return decided.value  # type: ignore[no-any-return]

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        if self._idle or self._stack.off(tool_context):
            return None
        inv = self._dispatch.invocation(tool_context)
        call = self._dispatch.call(inv, tool, tool_context, close=False)
        _guard_own(tool, tool_context, call, inv)
        kwargs = {"tool": tool, "tool_args": tool_args, "tool_context": tool_context}
        kwargs["error"] = error
        value = (
            await self._dispatch.decide("on_tool_error", kwargs, inv, call=call, error=error)
        ).value
        inv.data[_ENDED] = inv.data.get(_ENDED, 0) + 1
        # A recovered call goes on to after_tool, which closes it; ADK runs none for a tool
        # it could not find (it stands a bare BaseTool in for it), even when this answered.
        if value is None or isinstance(error, asyncio.CancelledError) or type(tool) is BaseTool:
            pop_call(inv, call)
            kwargs["result"] = None
            await self._dispatch.synthesize(
                "after_tool", kwargs, inv, call.agent, why(error), call=call
            )
        return value  # type: ignore[no-any-return]


def _guard_own(tool: BaseTool, ctx: ToolContext, call: CallRecord, inv: InvocationRecord) -> None:
    """Take back what a tool wrote to the lattice's own state keys (the taint record...).

    An ``AgentTool`` forwards its nested run's state: that run's lattice wrote those keys,
    and its own tools were held to this same rule. A write that reaches only the live state
    (straight into the session's state, or an edit in place) is taken back too, unless a
    sibling call is in flight or ended meanwhile: its labels are the lattice's writes.
    """
    saved = call.data.pop(_OWN, None)
    if not isinstance(saved, OwnSnapshot) or isinstance(tool, AgentTool):
        return
    alone = not inv.open_calls and inv.data.get(_ENDED, 0) == saved.generation
    taken = undo_own_writes(ctx.actions.state_delta, ctx.session.state, saved, live=alone)
    if taken:
        logger.warning(
            "adk_lattice: undid a write by tool %r to the lattice's own state key(s) %s",
            tool_label(tool),
            ", ".join(sorted(taken)),
        )
