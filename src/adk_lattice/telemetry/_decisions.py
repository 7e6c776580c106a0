"""What each handler decided on one hook: its notes first, else inferred from the Outcome."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .._chain import NO_DENIAL
from .._hooks import Tier
from .._notes import DECISIONS_KEY, QUIET_KEY, has_late_notes, notes_of, take_notes
from .._outcome import Outcome
from .._shadow import ShadowRun
from ._names import would

#: Hooks where a cache looks up an answer (a passing cache step there is a miss).
LOOKUP_HOOKS: Final = frozenset({"before_model", "before_tool"})
#: Hooks where a policy's value stops an agent or a run rather than answering for it.
_BLOCK_HOOKS: Final = frozenset({"before_agent", "before_run"})
#: Hooks where a value stands in for the model or the tool.
_ANSWER_HOOKS: Final = frozenset({"before_model", "before_tool", "on_model_error", "on_tool_error"})


@dataclass(frozen=True, slots=True)
class Decision:
    """One handler's decision on one hook.

    Attributes:
        handler: the handler's name.
        tier: its tier (None when the note names a handler that did not run as a decider,
            e.g. a cache store observer).
        decision: the decision name (see ``adk_lattice.telemetry.DECISIONS``); a shadow
            handler's reads ``would_<decision>`` (``would_deny``), except the facts
            ``allow``, ``cache_miss``, ``error`` and ``cache_error``.
        reason: a short, content-free reason, or None.
        mode: ``enforce``, or ``shadow`` for a handler that ran on copies and only reports.
    """

    handler: str
    tier: Tier | None
    decision: str
    reason: str | None = None
    mode: str = "enforce"


def decisions_of(outcome: Outcome) -> tuple[Decision, ...]:
    """Every decision made on this outcome's hook, computed once per outcome.

    A note made after the first call (on the outcome or on the hook's context, by a later
    observer) drops the kept answer, so every observer reads every note made before it.

    A handler's own notes win; for a handler without notes the decision is inferred from
    its step: the acting handler ``deny``/``block``/``rewrite`` (policy), ``cache_hit``
    (cache on a lookup hook) or ``override`` (custom handler); a passing policy ``allow``;
    a passing cache on a lookup hook ``cache_miss``; a failing handler ``error`` (a cache
    one ``cache_error``). Synthesized outcomes repeat an earlier decision and carry none.
    """
    cached = outcome.extra.get(DECISIONS_KEY)
    if cached is not None and not has_late_notes(outcome):
        return cached  # type: ignore[no-any-return]
    notes = notes_of(outcome)  # notes made on the context since then drop the kept answer
    tiers: dict[str, Tier] = {s.handler: s.tier for s in outcome.steps}
    found: list[Decision] = []
    seen: set[tuple[str, str]] = set()
    for n in notes:
        if (n.handler, n.decision) not in seen:
            seen.add((n.handler, n.decision))
            found.append(Decision(n.handler, tiers.get(n.handler), n.decision, n.reason))
    noted = {n.handler for n in notes}
    if not outcome.synthesized:
        for step in outcome.steps:
            if step.handler in noted:
                continue
            inferred = _infer(outcome, step.handler, step.tier, step.status)
            if inferred is not None:
                found.append(Decision(step.handler, step.tier, inferred, _reason(outcome, step)))
    if outcome.shadow:
        found.extend(_shadow_decisions(outcome))
    result = tuple(found)
    outcome.extra[DECISIONS_KEY] = result
    return result


def is_quiet(outcome: Outcome) -> bool:
    """Whether every decision on this outcome is an inferred ``allow`` or ``cache_miss``.

    True when nobody noted anything, no shadow handler ran, and every step passed: then
    :func:`decisions_of` can only infer ``allow`` for each policy step and ``cache_miss`` for
    each cache step on a lookup hook (or nothing at all, for a synthesized outcome). Observers
    that act only on other decisions can skip building them.

    Computed once per outcome: every observer after the first reads the kept answer (a note
    made against the outcome or its context in between drops it).
    """
    extra = outcome.extra
    if has_late_notes(outcome):
        notes_of(outcome)  # takes them and drops the kept answer
    quiet: bool | None = extra.get(QUIET_KEY)
    if quiet is None:
        quiet = not outcome.shadow and not notes_of(outcome)
        if quiet:
            for step in outcome.steps:
                if step.status != "pass":
                    quiet = False
                    break
        extra[QUIET_KEY] = quiet
    return quiet


def _shadow_decisions(outcome: Outcome) -> list[Decision]:
    """What each shadow handler would have done: its notes, else inferred from its step."""
    found: list[Decision] = []
    for run in outcome.shadow:
        step = run.step
        notes = take_notes(run.context)
        if notes:
            for n in notes:
                found.append(Decision(n.handler, step.tier, would(n.decision), n.reason, "shadow"))
            continue
        inferred, reason = _infer_shadow(outcome, run)
        if inferred is not None:
            found.append(Decision(step.handler, step.tier, would(inferred), reason, "shadow"))
    return found


def _infer_shadow(outcome: Outcome, run: ShadowRun) -> tuple[str | None, str | None]:
    """A shadow step's decision, as :func:`_infer` reads an enforcing one."""
    step, hook = run.step, outcome.hook
    if step.status in ("error", "timeout", "rejected"):
        reason = _reason(outcome, step)
        if step.tier == "policy" and run.on_error == "deny" and hook not in NO_DENIAL:
            return ("block" if hook in _BLOCK_HOOKS else "deny"), reason  # would fail closed
        return ("cache_error" if step.tier == "cache" else "error"), reason
    if step.status == "act":
        reason = None
        if hook == "before_tool" and isinstance(run.value, Mapping):
            code = run.value.get("code")
            reason = code[:64] if isinstance(code, str) and code else None
        return _infer(outcome, step.handler, step.tier, "act"), reason
    return _infer(outcome, step.handler, step.tier, "pass"), None


def _infer(outcome: Outcome, handler: str, tier: Tier, status: str) -> str | None:
    hook = outcome.hook
    if status in ("error", "timeout", "rejected"):
        if handler == outcome.acted_by and outcome.reason in ("handler_error", "bad_return"):
            return "block" if hook in _BLOCK_HOOKS else "deny"  # failed closed
        return "cache_error" if tier == "cache" else "error"
    if status == "act":
        if tier == "policy":
            if hook in _BLOCK_HOOKS:
                return "block"
            return "deny" if hook in _ANSWER_HOOKS else "rewrite"
        if tier == "cache":
            return "cache_hit" if hook in LOOKUP_HOOKS else "override"
        return "override"
    if tier == "policy":
        return "allow"
    if tier == "cache" and hook in LOOKUP_HOOKS:
        return "cache_miss"
    return None


def _reason(outcome: Outcome, step: object) -> str | None:
    """A content-free reason for an inferred decision, where the outcome has one."""
    status = getattr(step, "status", None)
    if status in ("error", "timeout", "rejected"):
        error = getattr(step, "error", None)
        if status == "timeout":
            return "timeout"
        return "rejected_return" if status == "rejected" else type(error).__name__
    if status == "act" and outcome.hook == "before_tool" and isinstance(outcome.value, Mapping):
        # A legible denial carries a machine-readable code next to the human reason; the
        # human reason may quote arguments, so only the code is used.
        code = outcome.value.get("code")
        return code[:64] if isinstance(code, str) and code else None
    return None


def cache_match(outcome: Outcome) -> tuple[str, str, float | None] | None:
    """How a cache hit served on ``before_model`` matched: ``(cache, match, similarity)``.

    ``match`` is ``exact`` or ``semantic`` (with its similarity), as the hit marker in the
    served response's ``custom_metadata["adk_lattice"]["cache"]`` says; None when the
    outcome served no marked hit (a plain ``ResponseCache`` hit says no match).
    """
    if outcome.hook != "before_model" or outcome.synthesized:
        return None
    meta = getattr(outcome.value, "custom_metadata", None)
    block = meta.get("adk_lattice") if isinstance(meta, Mapping) else None
    marker = block.get("cache") if isinstance(block, Mapping) else None
    if not isinstance(marker, Mapping) or not isinstance(marker.get("match"), str):
        return None
    similarity = marker.get("similarity")
    if isinstance(similarity, bool) or not isinstance(similarity, int | float):
        similarity = None
    return str(marker.get("cache")), marker["match"], similarity
