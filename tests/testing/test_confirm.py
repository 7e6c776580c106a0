"""``confirmation_reply`` and ``LatticeRunner.confirm`` answer a tool confirmation as a person."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice
from adk_lattice.policy import Approval, ToolGuard, ToolRule
from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse, confirmation_reply


def _refund_app(done: list[float]) -> LatticeRunner:
    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded", "amount": amount}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=250.0),
            ScriptedResponse.text("A person must approve this refund."),
            ScriptedResponse.text("Done."),
        ]
    )
    guard = ToolGuard({"issue_refund": ToolRule(approval=Approval(("amount", 100), confirm=True))})
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    return LatticeRunner(agent, lattice=Lattice(policy=[guard]))


def _responses(events: list[Any], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.get_function_responses() if r.name == name
    ]


async def test_confirming_runs_the_paused_call() -> None:
    """A person's confirm resumes the run and the refund runs once."""
    done: list[float] = []
    runner = _refund_app(done)
    paused = await runner.run("refund c1")
    assert done == []
    resumed = await runner.confirm(paused)
    assert done == [250.0]
    assert _responses(resumed, "issue_refund") == [{"status": "refunded", "amount": 250.0}]


async def test_rejecting_denies_the_paused_call() -> None:
    """A person's reject resumes the run with the call denied, and the tool never runs."""
    done: list[float] = []
    runner = _refund_app(done)
    resumed = await runner.confirm(await runner.run("refund c1"), confirmed=False)
    assert done == []
    assert _responses(resumed, "issue_refund")[0]["status"] == "denied"


async def test_a_payload_reaches_the_tool() -> None:
    """The payload a person gives reaches the tool through its ToolConfirmation."""
    seen: list[Any] = []

    def transfer(amount: float, tool_context: ToolContext) -> dict[str, Any]:
        """Move money between the user's own accounts."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint="Which account?")
            return {"status": "pending"}
        seen.append(confirmation.payload)
        return {"status": "done"}

    model = FakeModel(
        [
            ScriptedResponse.call("transfer", amount=10.0),
            ScriptedResponse.text("Waiting."),
            ScriptedResponse.text("Moved."),
        ]
    )
    runner = LatticeRunner(LlmAgent(name="bank", model=model, tools=[transfer]))
    await runner.confirm(await runner.run("move 10"), payload={"account": "savings"})
    assert seen == [{"account": "savings"}]


async def test_no_confirmation_asked_is_a_clear_error() -> None:
    """Answering a run that asked for nothing raises LookupError saying so."""
    runner = LatticeRunner(model=FakeModel([ScriptedResponse.text("hi")]))
    events = await runner.run("hello")
    with pytest.raises(LookupError, match="asked for no confirmation"):
        confirmation_reply(events)


async def test_another_tools_request_is_named_when_filtering() -> None:
    """Filtering on a tool the run did not ask about names the tool it did ask about."""
    runner = _refund_app([])
    paused = await runner.run("refund c1")
    with pytest.raises(LookupError, match="issue_refund"):
        confirmation_reply(paused, tool="send_money")


def test_confirmed_must_be_a_bool() -> None:
    """A non-bool answer is refused, so 'no' never reads as a confirmation."""
    with pytest.raises(TypeError, match="True or False"):
        confirmation_reply([], confirmed="no")  # type: ignore[arg-type]
