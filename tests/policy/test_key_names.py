"""State keys given by name: every policy that reads a key takes a StateKey or its name."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import (
    Approval,
    Consequential,
    InjectState,
    ProvenanceGuard,
    RateLimit,
    SumLimit,
    ToolGuard,
    ToolRule,
)
from adk_lattice.state import REGISTRY, StateKey
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import run_app

TENANT = StateKey("user:names_tenant", str, "", "The tenant (declared for these tests).")


def _refund_agent(done: list[float]) -> LlmAgent:
    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded", "amount": amount}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=250.0),
            ScriptedResponse.text("Finished."),
        ]
    )
    return LlmAgent(name="billing", model=model, tools=[issue_refund])


def _guard(role: str) -> Lattice:
    rule = ToolRule(approval=Approval(("amount", 100), role=role))
    return Lattice(policy=[ToolGuard({"issue_refund": rule})])


async def test_an_approval_role_given_by_name_denies_a_user_without_the_role() -> None:
    """``role="user:..."`` is read as a bool key: without it the large refund does not run."""
    done: list[float] = []
    run = await run_app(_refund_agent(done), [_guard("user:names_manager")], "refund c1")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "approval_required"


async def test_an_approval_role_given_by_name_lets_the_role_holder_through() -> None:
    """The same named role, True in state, lets the refund run (the name is really read)."""
    done: list[float] = []
    state = {"user:names_manager": True}
    await run_app(_refund_agent(done), [_guard("user:names_manager")], "refund", state=state)
    assert done == [250.0]


def test_a_role_name_never_declared_is_declared_as_a_bool_defaulting_to_false() -> None:
    """An undeclared role name becomes a registered bool key whose default is False."""
    approval = Approval(("amount", 1), role="user:names_fresh_role")
    assert approval.role_key is REGISTRY.get("user:names_fresh_role")
    assert approval.role_key is not None
    assert (approval.role_key.type, approval.role_key.default) == (bool, False)


def test_a_role_name_declared_with_another_type_fails_with_the_key_and_its_type() -> None:
    """A role naming a str key is refused at construction, saying what it is declared as."""
    with pytest.raises(TypeError, match="needs a bool state key; 'user:names_tenant' is decl"):
        Approval(("amount", 1), role=TENANT.name)


def test_a_role_of_another_type_fails_with_the_fix() -> None:
    """A role that is neither a key nor a name says what to pass."""
    with pytest.raises(TypeError, match="StateKey or a state key name such as"):
        Approval(("amount", 1), role=True)  # type: ignore[arg-type]


def test_an_approval_threshold_that_is_not_a_pair_fails_at_construction() -> None:
    """``when="amount > 100"`` is refused with the two accepted forms."""
    with pytest.raises(TypeError, match=r"\(field, threshold\) pair"):
        Approval("amount > 100")  # type: ignore[arg-type]


def test_a_rate_limit_per_key_name_reads_the_declared_key() -> None:
    """``RateLimit(per="user:...")`` counts per the declared tenant key."""
    limit = RateLimit(5, 60, per=TENANT.name)
    assert limit.per is TENANT
    assert limit.state_keys == (TENANT,)


def test_a_sum_limit_per_and_role_take_names() -> None:
    """``SumLimit`` takes its tenant and its role by name."""
    limit = SumLimit(
        "issue_refund", "amount", limit=100, window=60, per=TENANT.name, role="user:names_cfo"
    )
    assert limit.per is TENANT
    assert [k.name for k in limit.state_keys] == [TENANT.name, "user:names_cfo"]


def test_inject_state_takes_a_declared_key_by_name() -> None:
    """``InjectState(key="user:...")`` resolves to the declared key."""
    assert InjectState("tenant_id", TENANT.name).state_key is TENANT


def test_inject_state_refuses_an_undeclared_name_with_the_fix() -> None:
    """An injected key must be declared: its type decides what is injected."""
    with pytest.raises(ValueError, match="declare it first"):
        InjectState("tenant_id", "user:names_never_declared")


def test_provenance_trusted_state_takes_declared_names() -> None:
    """``trusted_state=["user:..."]`` resolves each name to its declared key."""
    table = {"send": Consequential(args={"to": "email"})}
    guard = ProvenanceGuard(table, trusted_state=[TENANT.name])
    assert guard.trusted_state == (TENANT,)
