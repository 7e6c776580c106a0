"""Every built-in handler that names tools or arguments is checked against the app.

Each case builds the handler twice, with a misspelt name and with the real one, on an app
whose model sends an email: the misspelt one refuses the run before the email is sent,
naming the nearest real name; the real one lets it through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice, configure
from adk_lattice.cache import MemoryStore, ToolResultCache
from adk_lattice.policy import (
    Approval,
    CallLimits,
    CapToolResult,
    Consequential,
    ProtectState,
    ProvenanceGuard,
    RateLimit,
    RedactPII,
    SumLimit,
    TokenBudget,
    ToolGuard,
    ToolRule,
)
from adk_lattice.policy.limits.budget import Budget
from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse

Factory = Callable[[str], Any]


def _app() -> tuple[LlmAgent, list[str]]:
    sent: list[str] = []

    def send_email(to: str, body: str, priority: int = 0) -> dict[str, str]:
        """Send an email."""
        sent.append(to)
        return {"status": "sent"}

    def lookup_order(order_id: str) -> dict[str, str]:
        """Look an order up."""
        return {"order_id": order_id}

    def set_tenant(tenant: str) -> dict[str, str]:
        """Set the tenant."""
        return {"tenant": tenant}

    call = ScriptedResponse.call("send_email", to="x@outside.example", body="hi", priority=1)
    model = FakeModel([call, ScriptedResponse.text("Sent.")])
    tools = [send_email, lookup_order, set_tenant]
    return LlmAgent(name="desk", model=model, tools=tools), sent


#: (case, tier, handler from a name, misspelt name, real name)
CASES: list[tuple[str, str, Factory, str, str]] = [
    (
        "ProvenanceGuard consequential tool",
        "policy",
        lambda n: ProvenanceGuard({n: Consequential(args={"to": "email"})}),
        "send_mail",
        "send_email",
    ),
    (
        "ProvenanceGuard sensitive argument",
        "policy",
        lambda n: ProvenanceGuard({"send_email": Consequential(args={n: "email"})}),
        "tto",
        "to",
    ),
    (
        "ProvenanceGuard trusted tool",
        "policy",
        lambda n: ProvenanceGuard(
            {"send_email": Consequential(args={"to": "email"})}, trusted_tools={n: True}
        ),
        "lookup_ordr",
        "lookup_order",
    ),
    (
        "ToolGuard rule tool",
        "policy",
        lambda n: ToolGuard({n: ToolRule()}),
        "send_emial",
        "send_email",
    ),
    (
        "ToolGuard approval argument",
        "policy",
        lambda n: ToolGuard({"send_email": ToolRule(approval=Approval((n, 5)))}),
        "priorty",
        "priority",
    ),
    (
        "ToolGuard schema argument",
        "policy",
        lambda n: ToolGuard(
            {"send_email": ToolRule(schema={"type": "object", "properties": {n: {}}})}
        ),
        "bdy",
        "body",
    ),
    (
        "ToolGuard sensitive argument",
        "policy",
        lambda n: ToolGuard({"send_email": ToolRule(sensitive={n: "email"})}),
        "too",
        "to",
    ),
    (
        "CallLimits per_tool",
        "policy",
        lambda n: CallLimits(per_tool={n: 3}),
        "send_emails",
        "send_email",
    ),
    (
        "SumLimit field",
        "policy",
        lambda n: SumLimit("send_email", n, limit=100, window=60),
        "priorty",
        "priority",
    ),
    (
        "RateLimit tools",
        "policy",
        lambda n: RateLimit(10, 60, hook="before_tool", tools={n}),
        "send_mail",
        "send_email",
    ),
    (
        "RedactPII restore_args",
        "policy",
        lambda n: RedactPII(restore_args={n}),
        "send_mail",
        "send_email",
    ),
    (
        "ProtectState writers",
        "policy",
        lambda n: ProtectState(["user:tenant"], writers={n: ["user:tenant"]}),
        "set_tenat",
        "set_tenant",
    ),
    (
        "CapToolResult scoped",
        "policy",
        lambda n: configure(CapToolResult(), tools={n}),
        "lookup_ordr",
        "lookup_order",
    ),
    (
        "ToolResultCache tools",
        "cache",
        lambda n: ToolResultCache(MemoryStore(), tools={n: 60}),
        "lookup_ordr",
        "lookup_order",
    ),
]


def _lattice(tier: str, handler: Any) -> Lattice:
    return Lattice(**{tier: [handler]}, telemetry=())


@pytest.mark.parametrize(
    ("case", "tier", "make", "wrong", "right"), CASES, ids=[c[0] for c in CASES]
)
async def test_a_misspelt_name_stops_the_call_and_names_the_real_one(
    case: str, tier: str, make: Factory, wrong: str, right: str
) -> None:
    """The misspelt name refuses the run: the email is not sent; the reply names the name."""
    agent, sent = _app()
    runner = LatticeRunner(agent, lattice=_lattice(tier, make(wrong)))
    texts = runner.texts(await runner.run("mail it"))
    assert sent == []
    assert f"{wrong!r}" in texts[0] and f"nearest real name is {right!r}" in texts[0]


@pytest.mark.parametrize(
    ("case", "tier", "make", "wrong", "right"), CASES, ids=[c[0] for c in CASES]
)
async def test_the_real_name_lets_the_call_run(
    case: str, tier: str, make: Factory, wrong: str, right: str
) -> None:
    """The same handler with the real name: the email is sent."""
    agent, sent = _app()
    runner = LatticeRunner(agent, lattice=_lattice(tier, make(right)))
    await runner.run("mail it")
    assert sent == ["x@outside.example"]


@pytest.mark.parametrize("option", ["tools", "agents"])
def test_a_scoped_protect_state_is_refused_at_construction(option: str) -> None:
    """ProtectState scoped with tools= or agents= would skip the run hooks that undo a
    client's writes: refused at construction."""
    with pytest.raises(TypeError, match=f"remove {option}="):
        Lattice(policy=[configure(ProtectState(["user:tenant"]), **{option: {"desk"}})])


def test_a_tool_scoped_token_budget_is_refused_at_construction() -> None:
    """TokenBudget scoped to tools would count no model call: refused at construction."""
    budget = configure(TokenBudget([Budget("invocation", output_tokens=10)]), tools={"x"})
    with pytest.raises(TypeError, match="remove tools="):
        Lattice(policy=[budget])
