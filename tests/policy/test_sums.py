"""SumLimit: many small calls cannot add up past a cap that one large call would hit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import SumLimit, ToolGuard, ToolRule
from adk_lattice.stores import MemoryStore, SQLiteStore
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import Run, run_app, user


def _agent(done: list[float], calls: list[dict[str, Any]]) -> LlmAgent:
    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    script = [ScriptedResponse.call("issue_refund", **c) for c in calls]
    model = FakeModel([*script, ScriptedResponse.text("done"), ScriptedResponse.text("done")])
    return LlmAgent(name="billing", model=model, tools=[issue_refund])


def _refunds(n: int, amount: float = 100.0) -> list[dict[str, Any]]:
    return [{"charge_id": f"c{i}", "amount": amount} for i in range(n)]


async def test_fifteen_small_refunds_stop_at_the_cap() -> None:
    """Fifteen refunds of 100 against a cap of 1,000: ten run, five are denied."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400)
    run = await run_app(_agent(done, _refunds(15)), [Lattice(policy=[limit])], "refund")
    assert sum(done) == 1000
    codes = [r.get("code") for r in run.responses("issue_refund")]
    assert codes.count("sum_limit") == 5


async def test_the_sum_is_kept_across_requests() -> None:
    """A second request of the same user sees the total the first one spent."""
    done: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=900.0),
            ScriptedResponse.text("one"),
            ScriptedResponse.call("issue_refund", charge_id="c2", amount=200.0),
            ScriptedResponse.text("two"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=MemoryStore())
    run = await run_app(agent, [Lattice(policy=[limit])], "refund c1")
    second = await run.send(user("refund c2"))
    assert done == [900.0]
    assert second.responses("issue_refund")[0]["code"] == "sum_limit"


async def test_calls_denied_by_a_later_policy_are_not_counted() -> None:
    """A refund another policy denies gives its reservation back."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=300, window=86400)

    def no_test_charges(args: Any) -> str | None:
        return "test charges cannot be refunded" if args["charge_id"] == "test" else None

    guard = ToolGuard({"issue_refund": ToolRule(checks=[no_test_charges])})
    calls = [{"charge_id": "test", "amount": 300.0}, {"charge_id": "c1", "amount": 300.0}]
    await run_app(_agent(done, calls), [Lattice(policy=[limit, guard])], "refund")
    assert done == [300.0]
    assert limit.counts["released"] == 1


@pytest.mark.parametrize("amount", [-500.0, float("nan"), "100", None])
async def test_an_unreadable_amount_is_denied(amount: Any) -> None:
    """A negative, NaN, string or missing amount is denied, never subtracted or skipped."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400)
    call = {"charge_id": "c1", "amount": amount} if amount is not None else {"charge_id": "c1"}
    run = await run_app(_agent(done, [call]), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "sum_limit_input"


async def test_a_failing_store_denies_by_default(tmp_path: Path) -> None:
    """When the store cannot add, the refund is denied (fail closed)."""
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    store = SQLiteStore(path)
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=store)
    run = await run_app(_agent(done, _refunds(1)), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "sum_limit_unavailable"
    await store.close()


def _confirmation(run: Run, confirmed: bool) -> types.Content:
    for e in run.events:
        for fc in e.get_function_calls():
            if fc.name == "adk_request_confirmation":
                reply = types.FunctionResponse(
                    name="adk_request_confirmation", id=fc.id, response={"confirmed": confirmed}
                )
                return types.Content(role="user", parts=[types.Part(function_response=reply)])
    raise AssertionError("no confirmation was requested")


async def test_crossing_the_cap_can_ask_a_person() -> None:
    """With on_exceed="confirm", the call over the cap waits and runs once approved."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=100, window=86400, on_exceed="confirm")
    run = await run_app(_agent(done, _refunds(1, 150.0)), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["status"] == "pending_approval"
    await run.send(_confirmation(run, True))
    assert done == [150.0]


def test_an_approver_without_confirm_is_refused() -> None:
    """approver= with on_exceed="deny" fails at construction, naming the fix."""
    with pytest.raises(ValueError, match="on_exceed='confirm'"):
        SumLimit("t", "f", limit=1, window=1, approver=lambda ctx, c: True)
