"""The outcome record observers receive for every hook, real or synthesized."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ._hooks import SUBJECT_ARG, HookName, Tier

if TYPE_CHECKING:
    from ._records import CallRecord, InvocationRecord
    from ._shadow import ShadowRun

StepStatus = Literal["pass", "act", "error", "rejected", "timeout"]
OutcomeKind = Literal["pass", "act", "error"]

#: Why the lattice synthesized an outcome ADK never called a hook for.
SynthReason = Literal[
    "short_circuit",  # before_model served a response, so no after_model followed
    "blocked",  # before_agent returned content, so no after_agent followed
    "transferred",  # the agent handed over to another agent and never got after_agent
    "error",  # the run failed before this was closed
    "cancelled",  # the run was cancelled before this was closed
    "abandoned",  # the run never ended cleanly and its record was evicted or closed
    "run_error",  # the run failed: after_run stands for on_run_error's end of run
]


class Step(NamedTuple):
    """What one decider did on one hook (a named tuple: cheap on the hot path).

    Attributes:
        handler: the handler's name.
        tier: the tier it ran in.
        status: ``pass`` (returned None), ``act`` (its value won), ``error`` (it raised),
            ``rejected`` (the return guard refused its value) or ``timeout``.
        duration: seconds it took.
        error: the exception it raised or the guard's complaint, else None.
    """

    handler: str
    tier: Tier
    status: StepStatus
    duration: float
    error: BaseException | str | None = None


@dataclass(slots=True)
class Outcome:
    """The final outcome of one hook call, handed to every observer.

    Attributes:
        hook: the hook name (``before_model``, ``after_tool``, ...).
        args: ADK's keyword arguments for the hook (contexts, request, response, tool, ...).
        value: the value handed back to ADK, or None when every decider passed.
        acted_by: the name of the handler whose value won, else None.
        acted_tier: that handler's tier, else None.
        steps: what each decider did, in order.
        agent: the agent name, when the hook has one.
        invocation_id: the invocation this hook belongs to.
        function_call_id: the tool call this hook belongs to (tool hooks only).
        tool: the tool name (tool hooks only).
        partial: True for a streamed partial chunk (``after_model``, ``on_event``).
        synthesized: True when ADK never called this hook and the lattice made the outcome
            to close what was opened (see ``reason``).
        reason: why it was synthesized, or for a fail-closed denial ``handler_error`` (the
            handler raised or timed out) or ``bad_return`` (it returned a value the return
            guard refused).
        denied: True when a policy handler blocked the step (its value won on
            ``on_user_message``, ``before_run``, ``before_agent``, ``before_model`` or
            ``before_tool``), or a failing handler was denied fail-closed. A policy's value on
            an after hook reshapes the result (a cap, a redaction) and is not a denial.
        error: the error a hook reported (``on_*_error``) or that ended a synthesized close.
        invocation: the lattice's record of the invocation, when one is open.
        call: the per-call record (tool hooks), when one is open.
        duration: seconds the lattice spent on the hook's deciders.
        shadow: what each shadow handler (``mode="shadow"``) did on this hook, on copies:
            what it would have done, had it been enforcing.
    """

    hook: HookName
    args: Mapping[str, Any]
    value: Any = None
    acted_by: str | None = None
    acted_tier: Tier | None = None
    steps: tuple[Step, ...] = ()
    agent: str | None = None
    invocation_id: str | None = None
    function_call_id: str | None = None
    tool: str | None = None
    partial: bool = False
    synthesized: bool = False
    reason: SynthReason | Literal["handler_error", "bad_return"] | None = None
    denied: bool = False
    error: BaseException | None = None
    invocation: InvocationRecord | None = None
    call: CallRecord | None = None
    duration: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    shadow: tuple[ShadowRun, ...] = ()

    @property
    def kind(self) -> OutcomeKind:
        """``error`` if any handler failed (raised, timed out or returned an unusable value),
        ``act`` if one decided, else ``pass``."""
        if any(s.status in ("error", "timeout", "rejected") for s in self.steps):
            return "error"
        return "act" if self.acted_by is not None else "pass"

    @property
    def final(self) -> Any:
        """What ADK goes on with: the winning value, else the hook's own subject.

        For ``after_model`` this is the delivered response (after in-place edits or a
        replacement); for ``after_tool`` the delivered result; for ``before_tool`` the
        final arguments unless the call was short-circuited.
        """
        if self.value is not None:
            return self.value
        name = SUBJECT_ARG[self.hook]
        return self.args.get(name) if name else None
