"""What one hostile input can do to a shared store, through a real Runner and real Redis."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import RateLimit, SumLimit
from adk_lattice.stores import RedisStore
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests._redis import RedisServer
from tests.support import run_app

S = ScriptedResponse


def _responses(turn: Any, tool: str) -> list[dict[str, Any]]:
    return [
        dict(p.function_response.response or {})
        for e in turn.events
        for p in (e.content.parts if e.content and e.content.parts else [])
        if p.function_response and p.function_response.name == tool
    ]


@pytest.mark.redis
async def test_a_huge_refund_amount_does_not_take_the_shared_store_down(
    redis_server: RedisServer,
) -> None:
    """A model-chosen amount of 1e300 is denied as input; the rate limit on the same Redis
    still counts the next call instead of denying it as a store outage."""
    store = RedisStore(redis_server.url, namespace="attack-sum")
    done: list[str] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(charge_id)
        return {"status": "refunded"}

    def lookup(order: str) -> dict[str, Any]:
        """Look an order up."""
        done.append(order)
        return {"status": "found"}

    model = FakeModel(
        [
            S.call("issue_refund", charge_id="c1", amount=1e300),
            S.call("lookup", order="o1"),
            S.text("done"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund, lookup])
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=store)
    rate = RateLimit(5, 60, hook="before_tool", store=store, tools=["lookup"])
    turn = await run_app(agent, Lattice(policy=[limit, rate]), "refund")
    assert _responses(turn, "issue_refund")[0]["code"] == "sum_limit_input"
    assert done == ["o1"]
    assert (store.stats["errors"], store.healthy) == (0, True)
    await store.close()
