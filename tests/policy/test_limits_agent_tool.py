"""Per-user limits under ``AgentTool``: a nested run counts against the same user's request."""

from __future__ import annotations

from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_lattice import Lattice
from adk_lattice.policy import RateLimit, SumLimit
from adk_lattice.stores import MemoryStore
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app

ASK = ScriptedResponse(function_calls=[("helper", {"request": "go"})])


def coordinator(helper: LlmAgent, asks: int) -> LlmAgent:
    """A root agent that asks ``helper`` (an AgentTool) ``asks`` times in one request."""
    model = FakeModel([ASK] * asks + [ScriptedResponse.text("done")])
    return LlmAgent(name="billing", model=model, tools=[AgentTool(helper)])


async def test_rate_limit_counts_nested_model_calls_against_the_user() -> None:
    """A per-user RateLimit counts every nested AgentTool model call in the user's window."""
    helper_model = FakeModel([ScriptedResponse.text("ok")] * 4)
    helper = LlmAgent(name="helper", model=helper_model)
    limit = RateLimit(3, 3600, store=MemoryStore())
    await run_app(coordinator(helper, 4), Lattice(policy=[limit]))
    # Root call 1, helper 1, root call 2, helper 2 (the 4th call of the window) is refused.
    assert helper_model.calls == 1
    assert limit.counts["allowed"] == 3


async def test_sum_limit_adds_nested_refunds_to_the_users_total() -> None:
    """SumLimit sums refunds made inside AgentTool runs with the same user's earlier ones."""
    paid: list[float] = []

    def issue_refund(amount: float) -> dict[str, Any]:
        """Refund an amount."""
        paid.append(amount)
        return {"status": "refunded", "amount": amount}

    refund = ScriptedResponse(function_calls=[("issue_refund", {"amount": 400})])
    helper_model = FakeModel([refund, ScriptedResponse.text("ok")] * 3)
    helper = LlmAgent(name="helper", model=helper_model, tools=[issue_refund])
    cap = SumLimit("issue_refund", "amount", limit=1000, window=86_400, store=MemoryStore())
    await run_app(coordinator(helper, 3), Lattice(policy=[cap]))
    assert paid == [400, 400]  # each delegation is a fresh nested run; the third passes 1,000
    assert cap.counts["denied"] == 1
