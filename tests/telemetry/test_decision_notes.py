"""note(), notes_of() and decisions_of(), called directly on hand-made outcomes."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Outcome, Step
from adk_lattice._notes import _MAX_PENDING, pending_count
from adk_lattice.telemetry import DECISIONS, Note, decisions_of, note, notes_of


class Ctx:
    """Stands in for a hook's context object (only its identity matters)."""


class Slotted:
    """A context object that cannot be weakly referenced."""

    __slots__ = ()


def _outcome(hook: str, *steps: Step, ctx: Any = None, **kwargs: Any) -> Outcome:
    arg = {"before_tool": "tool_context", "after_tool": "tool_context"}.get(
        hook, "callback_context"
    )
    return Outcome(hook=hook, args={arg: ctx}, steps=steps, **kwargs)  # type: ignore[arg-type]


def _pairs(outcome: Outcome) -> list[tuple[str, str, str | None]]:
    return [(d.handler, d.decision, d.reason) for d in decisions_of(outcome)]


def test_note_rejects_an_unknown_decision() -> None:
    """note() refuses a decision name outside the vocabulary."""
    with pytest.raises(ValueError, match="unknown decision"):
        note(Ctx(), "maybe", handler="h")


def test_note_on_a_context_reaches_the_outcome_of_that_context() -> None:
    """A note made against a context is gathered by the outcome whose args hold it."""
    gc.collect()
    before = pending_count()
    ctx = Ctx()
    note(ctx, "redact", handler="Redact", reason="email")
    outcome = _outcome("after_model", Step("Redact", "policy", "pass", 0.0), ctx=ctx)
    assert notes_of(outcome) == [Note("Redact", "redact", "email")]
    assert pending_count() == before


def test_notes_of_an_other_context_are_not_gathered() -> None:
    """A note for one context does not leak into the outcome of another."""
    mine, other = Ctx(), Ctx()
    note(other, "deny", handler="Guard")
    assert notes_of(_outcome("before_tool", ctx=mine)) == []
    assert notes_of(_outcome("before_tool", ctx=other)) == [Note("Guard", "deny")]


def test_observers_note_on_the_outcome() -> None:
    """An observer's note on the outcome is seen by later observers."""
    outcome = _outcome("after_model", ctx=Ctx())
    note(outcome, "cache_store", handler="ResponseCache")
    assert _pairs(outcome) == [("ResponseCache", "cache_store", None)]


def test_ungathered_notes_are_bounded() -> None:
    """Notes nobody gathers are dropped oldest first past the bound."""
    keep = [Ctx() for _ in range(_MAX_PENDING + 10)]
    for ctx in keep:
        note(ctx, "allow", handler="h")
    assert pending_count() == _MAX_PENDING
    for ctx in keep:
        notes_of(_outcome("before_model", ctx=ctx))
    assert pending_count() == 0


def test_cache_hit_mark_in_response_metadata_is_read() -> None:
    """custom_metadata["adk_lattice"]["cache"] = "hit" on a served response is a cache hit."""
    served = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="x")]),
        custom_metadata={"adk_lattice": {"cache": "hit"}},
    )
    outcome = _outcome("before_model", ctx=Ctx(), value=served, acted_by="RC", acted_tier="cache")
    assert _pairs(outcome) == [("RC", "cache_hit", None)]


def test_lattice_denial_metadata_reads_as_a_denial() -> None:
    """The lattice's own fail-closed LlmResponse (denied_by) reads as that handler's denial."""
    served = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="x")]),
        custom_metadata={"adk_lattice": {"denied_by": "Guard", "reason": "handler_error"}},
    )
    step = Step("Guard", "policy", "error", 0.0, RuntimeError("x"))
    outcome = _outcome(
        "before_model", step, ctx=Ctx(), value=served, acted_by="Guard", acted_tier="policy"
    )
    assert _pairs(outcome) == [("Guard", "deny", "handler_error")]


@pytest.mark.parametrize(
    ("hook", "tier", "status", "acted", "expected"),
    [
        ("before_tool", "policy", "act", True, "deny"),
        ("before_agent", "policy", "act", True, "block"),
        ("after_model", "policy", "act", True, "rewrite"),
        ("before_model", "policy", "pass", False, "allow"),
        ("before_model", "cache", "act", True, "cache_hit"),
        ("before_tool", "cache", "pass", False, "cache_miss"),
        ("before_model", "cache", "error", False, "cache_error"),
        ("before_model", "handlers", "act", True, "override"),
        ("after_tool", "handlers", "timeout", False, "error"),
    ],
)
def test_decisions_are_inferred_from_steps(
    hook: str, tier: str, status: str, acted: bool, expected: str
) -> None:
    """Without a note, a handler's decision follows from its tier, hook and step status."""
    err = RuntimeError("x") if status in ("error", "timeout") else None
    step = Step("h", tier, status, 0.0, err)  # type: ignore[arg-type]
    outcome = _outcome(
        hook, step, ctx=Ctx(), acted_by="h" if acted else None, acted_tier=tier if acted else None
    )
    assert [d.decision for d in decisions_of(outcome)] == [expected]
    assert expected in DECISIONS


def test_a_passing_custom_handler_decides_nothing() -> None:
    """A custom handler that passes makes no decision."""
    outcome = _outcome("after_model", Step("h", "handlers", "pass", 0.0), ctx=Ctx())
    assert decisions_of(outcome) == ()


def test_synthesized_outcomes_carry_no_decision() -> None:
    """A synthesized close repeats its cause and adds no decision of its own."""
    outcome = _outcome(
        "after_model",
        ctx=Ctx(),
        synthesized=True,
        reason="short_circuit",
        acted_by="RC",
        acted_tier="cache",
    )
    assert decisions_of(outcome) == ()


def test_a_note_replaces_the_inferred_decision_of_its_handler() -> None:
    """A handler's note wins over what its step would imply."""
    ctx = Ctx()
    note(ctx, "cache_skip", handler="RC", reason="streaming")
    outcome = _outcome("before_model", Step("RC", "cache", "pass", 0.0), ctx=ctx)
    assert _pairs(outcome) == [("RC", "cache_skip", "streaming")]


def test_a_decider_note_wins_over_the_marks_on_its_response() -> None:
    """A handler that noted its refusal is not counted again from its response metadata."""
    ctx = Ctx()
    note(ctx, "deny", handler="Guard", reason="jailbreak")
    served = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="x")]),
        custom_metadata={"adk_lattice": {"denied_by": "Guard", "reason": "prompt_injection"}},
    )
    step = Step("Guard", "policy", "act", 0.0)
    outcome = _outcome(
        "before_model", step, ctx=ctx, value=served, acted_by="Guard", acted_tier="policy"
    )
    assert _pairs(outcome) == [("Guard", "deny", "jailbreak")]


def test_notes_of_a_context_that_died_are_freed() -> None:
    """Notes nobody gathered are dropped when their context is garbage collected."""
    gc.collect()
    before = pending_count()
    ctx = Ctx()
    note(ctx, "redact", handler="Redact", reason="email")
    assert pending_count() == before + 1
    del ctx
    gc.collect()
    assert pending_count() == before


def test_a_context_that_cannot_be_weakly_referenced_is_still_gathered() -> None:
    """A context without weak-reference support keeps its notes until they are gathered."""
    ctx = Slotted()
    note(ctx, "deny", handler="Guard", reason="schema")
    assert notes_of(_outcome("before_tool", ctx=ctx)) == [Note("Guard", "deny", "schema")]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (
            {"status": "denied", "reason": "over 100", "code": "over_limit", "policy": "G"},
            "over_limit",
        ),
        ({"status": "denied", "reason": "over 100", "policy": "G"}, None),
    ],
)
def test_an_inferred_tool_denial_takes_its_code_as_reason(
    value: dict[str, Any], reason: str | None
) -> None:
    """An unnoted tool denial's reason is its machine-readable code, never the human text."""
    step = Step("G", "policy", "act", 0.0)
    outcome = _outcome(
        "before_tool", step, ctx=Ctx(), value=value, acted_by="G", acted_tier="policy"
    )
    assert _pairs(outcome) == [("G", "deny", reason)]


def test_is_quiet_reads_the_notes_once_per_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    """is_quiet gathers an outcome's notes once; later observers reuse its answer."""
    from adk_lattice.telemetry import _decisions

    calls: list[Outcome] = []

    def counted(outcome: Outcome) -> list[Note]:
        calls.append(outcome)
        return notes_of(outcome)

    monkeypatch.setattr(_decisions, "notes_of", counted)
    outcome = _outcome("before_model", Step("Guard", "policy", "pass", 0.0), ctx=Ctx())
    assert [_decisions.is_quiet(outcome) for _ in range(3)] == [True, True, True]
    assert calls == [outcome]


def test_a_note_on_the_outcome_ends_its_quiet_answer() -> None:
    """A note an observer makes on an outcome already judged quiet makes it not quiet."""
    from adk_lattice.telemetry._decisions import is_quiet

    outcome = _outcome("after_model", Step("Cache", "cache", "pass", 0.0), ctx=Ctx())
    assert is_quiet(outcome)
    note(outcome, "cache_store", handler="Cache")
    assert not is_quiet(outcome)
    assert _pairs(outcome) == [("Cache", "cache_store", None)]


def test_a_failed_step_is_never_quiet() -> None:
    """An outcome with a step that did not pass is not quiet, on every read."""
    from adk_lattice.telemetry._decisions import is_quiet

    steps = (Step("Guard", "policy", "pass", 0.0), Step("Scan", "policy", "timeout", 0.0))
    outcome = _outcome("before_model", *steps, ctx=Ctx())
    assert [is_quiet(outcome), is_quiet(outcome)] == [False, False]
