"""A note made after an observer read the decisions still reaches every later observer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice, Outcome
from adk_lattice.telemetry import AuditLog, decisions_of, note
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app


def lookup(query: str) -> dict[str, Any]:
    """Look a note up."""
    return {"note": query}


def agent() -> LlmAgent:
    script = [ScriptedResponse.call("lookup", query="a"), ScriptedResponse.text("done")]
    return LlmAgent(name="desk", model=FakeModel(script), tools=[lookup])


class Reader:
    """An observer reading every outcome's decisions before the next one notes."""

    name = "reader"

    def observe(self, outcome: Outcome) -> None:
        decisions_of(outcome)


class Flagger:
    """A policy that notes its decision on each tool call when it observes the outcome,
    against the outcome or against the hook's context."""

    def __init__(self, on_context: bool) -> None:
        self.name = "flagger"
        self.on_context = on_context

    def after_tool(self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        """Lets every result through; its decision comes in observe."""

    def observe(self, outcome: Outcome) -> None:
        if outcome.hook == "after_tool":
            target = outcome.args["tool_context"] if self.on_context else outcome
            note(target, "deny", handler="flagger", reason="late")


async def _actions(on_context: bool) -> list[Mapping[str, Any]]:
    records: list[Mapping[str, Any]] = []
    policy = [Reader(), Flagger(on_context)]
    await run_app(agent(), Lattice(policy=policy, telemetry=[AuditLog(records.append)]))
    return list(records[0]["policy_actions"])


async def test_a_note_on_the_outcome_after_a_read_reaches_the_audit_record() -> None:
    """An observer's note on the outcome, made after another read the decisions, is audited."""
    assert [(a["handler"], a["decision"]) for a in await _actions(False)] == [("flagger", "deny")]


async def test_a_note_on_the_context_after_a_read_reaches_the_audit_record() -> None:
    """An observer's note on the hook's context, made after a read, is audited too."""
    assert [(a["handler"], a["decision"]) for a in await _actions(True)] == [("flagger", "deny")]
