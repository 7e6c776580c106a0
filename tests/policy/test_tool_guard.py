"""ToolGuard: agents, argument hygiene, validation, rewrites and approvals."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from pydantic import BaseModel

from adk_lattice import Lattice
from adk_lattice.policy import Approval, Clamp, InjectState, Round, ToolGuard, ToolRule
from adk_lattice.state import StateKey
from adk_lattice.testing import FakeModel, ScriptedResponse, confirmation_reply

from .conftest import noted, run_app

IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")
TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")

REFUND_SCHEMA = {
    "type": "object",
    "required": ["charge_id", "amount"],
    "properties": {
        "charge_id": {"type": "string", "maxLength": 64},
        "amount": {"type": "number", "exclusiveMinimum": 0},
    },
}


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund part of a charge."""
    return {"status": "refunded", "charge_id": charge_id, "amount": amount}


TOOL = FunctionTool(issue_refund)


def guard(**rule: Any) -> ToolGuard:
    return ToolGuard({"issue_refund": ToolRule(**rule)})


async def call(g: ToolGuard, args: dict[str, Any], ctx: Any, **state: Any) -> Any:
    c = await ctx(state, function_call_id="fc-1", agent_name=state.pop("_agent", "billing"))
    return g.before_tool(tool=TOOL, tool_args=args, tool_context=c)


async def test_allows_valid_arguments(ctx: Any) -> None:
    """Valid arguments pass (None) and count as allowed."""
    g = guard(schema=REFUND_SCHEMA)
    assert await call(g, {"charge_id": "c1", "amount": 10.0}, ctx) is None
    assert g.counts == {"allowed": 1}


async def test_denies_an_agent_not_listed(ctx: Any) -> None:
    """An agent outside the rule's agents gets a legible denial."""
    g = guard(agents={"billing"})
    c = await ctx({}, function_call_id="fc-1", agent_name="support")
    out = g.before_tool(tool=TOOL, tool_args={"charge_id": "c", "amount": 1}, tool_context=c)
    assert out == {
        "status": "denied",
        "reason": "the agent support may not call issue_refund",
        "code": "agent_not_allowed",
        "policy": "ToolGuard",
        "tool": "issue_refund",
    }


async def test_denies_unknown_tools_when_asked(ctx: Any) -> None:
    """unknown='deny' refuses a tool that has no rule."""
    g = ToolGuard({}, unknown="deny")
    out = await call(g, {"charge_id": "c", "amount": 1}, ctx)
    assert out["status"] == "denied"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"charge_id": "c1", "amount": "ten"}, "amount must be of type number"),
        ({"charge_id": "c1", "amount": math.nan}, "amount must be a finite number"),
        ({"charge_id": "c1", "amount": math.inf}, "amount must be a finite number"),
        ({"charge_id": "c1", "amount": -5}, "amount must be > 0"),
        ({"charge_id": "c1"}, "amount is a required property"),
        ({"charge_id": "x" * 20_000, "amount": 1}, "charge_id is longer than 10000 characters"),
        ({"charge_id": "x" * 100, "amount": 1}, "charge_id fails maxLength 64"),
        ({"charge_id": ["c1"], "amount": 1}, "charge_id must be of type string"),
    ],
)
async def test_malformed_arguments_get_a_legible_denial(
    ctx: Any, args: dict[str, Any], reason: str
) -> None:
    """Wrong types, NaN, infinities, negatives, missing and huge values deny with a reason."""
    out = await call(guard(schema=REFUND_SCHEMA), args, ctx)
    assert out["status"] == "denied"
    assert out["reason"] == reason


async def test_a_reason_never_echoes_a_huge_value(ctx: Any) -> None:
    """The denial reason stays short even for a huge argument."""
    out = await call(guard(schema=REFUND_SCHEMA), {"charge_id": 7, "amount": "9" * 5000}, ctx)
    assert len(out["reason"]) < 100


async def test_deep_nesting_is_denied(ctx: Any) -> None:
    """Arguments nested deeper than max_depth are denied."""
    deep: Any = 1
    for _ in range(30):
        deep = {"a": deep}
    out = await call(guard(), {"charge_id": "c", "amount": 1, "x": deep}, ctx)
    assert "nested deeper" in out["reason"]


class RefundArgs(BaseModel):
    charge_id: str
    amount: float


async def test_pydantic_model_denies_wrong_types(ctx: Any) -> None:
    """A pydantic model rule denies a string amount, naming the field."""
    out = await call(guard(model=RefundArgs), {"charge_id": "c1", "amount": "12"}, ctx)
    assert out["reason"].startswith("amount:")


async def test_pydantic_model_allows_valid_arguments(ctx: Any) -> None:
    """A pydantic model rule lets valid arguments through."""
    assert await call(guard(model=RefundArgs), {"charge_id": "c1", "amount": 12.5}, ctx) is None


async def test_check_returning_a_reason_denies(ctx: Any) -> None:
    """A check returning a string denies with that string as the reason."""

    def no_test_charges(args: Any) -> str | None:
        return "test charges cannot be refunded" if args["charge_id"].startswith("t") else None

    out = await call(guard(checks=[no_test_charges]), {"charge_id": "t1", "amount": 1}, ctx)
    assert out["reason"] == "test charges cannot be refunded"


async def test_check_that_raises_denies_instead_of_crashing(ctx: Any) -> None:
    """A check raising KeyError on missing input denies; it does not propagate."""
    out = await call(guard(checks=[lambda a: a["missing"] > 1]), {"amount": 1}, ctx)
    assert out["reason"] == "arguments rejected by <lambda>: a value it needs is missing"


async def test_clamp_and_round_rewrite_in_place(ctx: Any) -> None:
    """Clamp and Round change the arguments the tool receives."""
    args = {"charge_id": "c1", "amount": 1234.5678}
    g = guard(rewrites=[Clamp("amount", 0, 500), Round("amount", 2)])
    assert await call(g, args, ctx) is None
    assert args["amount"] == 500.0
    args = {"charge_id": "c1", "amount": 12.3456}
    await call(g, args, ctx)
    assert args["amount"] == 12.35


async def test_inject_state_overwrites_a_crafted_value(ctx: Any) -> None:
    """InjectState replaces a model-chosen tenant with the user's own."""
    g = ToolGuard({"issue_refund": ToolRule(rewrites=[InjectState("tenant", TENANT)])})
    args = {"charge_id": "c1", "amount": 1, "tenant": "globex"}
    assert await call(g, args, ctx, **{"user:tenant_id": "acme"}) is None
    assert args["tenant"] == "acme"


async def test_inject_state_can_deny_a_crafted_value(ctx: Any) -> None:
    """InjectState(on_conflict='deny') refuses a request for another tenant."""
    rule = ToolRule(rewrites=[InjectState("tenant", TENANT, on_conflict="deny")])
    args = {"charge_id": "c1", "amount": 1, "tenant": "globex"}
    out = await call(ToolGuard({"issue_refund": rule}), args, ctx, **{"user:tenant_id": "acme"})
    assert out["status"] == "denied"
    assert "globex" not in out["reason"]


async def test_inject_state_denies_when_state_is_missing(ctx: Any) -> None:
    """Without a tenant in state the call is denied rather than run unscoped."""
    g = ToolGuard({"issue_refund": ToolRule(rewrites=[InjectState("tenant", TENANT)])})
    out = await call(g, {"charge_id": "c1", "amount": 1}, ctx)
    assert "user:tenant_id is not set" in out["reason"]


async def test_threshold_denied_without_role(ctx: Any) -> None:
    """Over the threshold, a user without the role is denied."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    out = await call(g, {"charge_id": "c1", "amount": 250}, ctx)
    assert "needs approval" in out["reason"]


async def test_an_int_past_float_range_needs_approval_not_a_crash(ctx: Any) -> None:
    """An amount of 10**400 crosses the threshold and is denied; nothing raises."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    out = await call(g, {"charge_id": "c1", "amount": 10**400}, ctx)
    assert out["code"] == "approval_required"


async def test_threshold_allowed_with_role(ctx: Any) -> None:
    """Over the threshold, a manager (from state) goes ahead."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    assert (
        await call(g, {"charge_id": "c1", "amount": 250}, ctx, **{"user:is_manager": True}) is None
    )


async def test_threshold_role_is_not_fooled_by_a_string(ctx: Any) -> None:
    """The string "true" in the role key does not grant approval."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    out = await call(g, {"charge_id": "c1", "amount": 250}, ctx, **{"user:is_manager": "true"})
    assert out["status"] == "denied"


async def test_under_the_threshold_needs_no_approval(ctx: Any) -> None:
    """Under the threshold, no approval is asked."""
    g = guard(approval=Approval(("amount", 100), confirm=True))
    assert await call(g, {"charge_id": "c1", "amount": 50}, ctx) is None


async def test_confirmation_is_requested_over_the_threshold(ctx: Any) -> None:
    """Over the threshold with confirm=True, ADK's confirmation is requested and the call waits."""
    g = guard(approval=Approval(("amount", 100), confirm=True, hint="Approve a large refund?"))
    c = await ctx({}, function_call_id="fc-9")
    out = g.before_tool(tool=TOOL, tool_args={"charge_id": "c1", "amount": 250}, tool_context=c)
    assert out["status"] == "pending_approval"
    assert c.actions.requested_tool_confirmations["fc-9"].hint == "Approve a large refund?"


async def _refund_run(answer: bool) -> tuple[list[float], Any, ToolGuard]:
    done: list[float] = []

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
    g = guard(approval=Approval(("amount", 100), confirm=True))
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    run = await run_app(agent, [Lattice(policy=[g])], "refund c1")
    assert done == []
    resumed = await run.send(confirmation_reply(run.events, confirmed=answer))
    return done, resumed, g


async def test_runner_refund_over_threshold_runs_after_approval() -> None:
    """Through a Runner, a large refund pauses for a person and runs once they approve."""
    done, resumed, g = await _refund_run(True)
    assert done == [250.0]
    assert resumed.responses("issue_refund") == [{"status": "refunded", "amount": 250.0}]
    assert g.counts["approved"] == 1


async def test_runner_refund_rejected_by_the_person_is_denied() -> None:
    """Through a Runner, a rejected confirmation denies the refund legibly."""
    done, resumed, _ = await _refund_run(False)
    assert done == []
    assert resumed.responses("issue_refund")[0]["status"] == "denied"


async def test_runner_malformed_arguments_reach_the_model_as_a_denial() -> None:
    """Through a Runner, NaN in the arguments becomes a denial the model reads, not a crash."""
    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=math.nan),
            ScriptedResponse.text("Sorry."),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    run = await run_app(agent, [Lattice(policy=[guard(schema=REFUND_SCHEMA)])], "refund")
    assert run.responses("issue_refund")[0]["reason"] == "amount must be a finite number"
    assert run.texts[-1] == "Sorry."


async def test_default_rule_applies_hygiene_to_tools_without_a_rule(ctx: Any) -> None:
    """default=ToolRule() denies NaN for a tool that has no rule of its own."""
    g = ToolGuard({}, default=ToolRule())
    out = await call(g, {"charge_id": "c1", "amount": math.inf}, ctx)
    assert out["reason"] == "amount must be a finite number"


async def _noted_call(g: ToolGuard, args: Any, ctx: Any, **state: Any) -> tuple[Any, Any]:
    c = await ctx(state, function_call_id="fc-1", agent_name=state.pop("_agent", "billing"))
    out = g.before_tool(tool=TOOL, tool_args=args, tool_context=c)
    return out, noted(c, "before_tool")


class Refund(BaseModel):
    charge_id: str
    amount: float


@pytest.mark.parametrize(
    ("g", "args", "state", "code"),
    [
        (ToolGuard({}, unknown="deny"), {"charge_id": "c"}, {}, "unknown_tool"),
        (guard(agents={"refunds"}), {"charge_id": "c", "amount": 1}, {}, "agent_not_allowed"),
        (guard(), {"charge_id": "c", "amount": math.nan}, {}, "hygiene"),
        (guard(), ["not", "an", "object"], {}, "hygiene"),
        (guard(schema=REFUND_SCHEMA), {"charge_id": "c", "amount": -1}, {}, "schema"),
        (guard(model=Refund), {"charge_id": "c", "amount": "1"}, {}, "model"),
        (guard(checks=[lambda a: "no"]), {"charge_id": "c", "amount": 1}, {}, "check"),
        (
            guard(rewrites=[InjectState("tenant", TENANT)]),
            {"charge_id": "c", "amount": 1},
            {},
            "inject_state",
        ),
        (
            guard(approval=Approval(("amount", 100), role=IS_MANAGER)),
            {"charge_id": "c", "amount": 250},
            {},
            "approval_required",
        ),
    ],
)
async def test_each_denial_carries_and_notes_its_code(
    g: ToolGuard, args: Any, state: dict[str, Any], code: str, ctx: Any
) -> None:
    """A denial dict carries a content-free code and is noted as deny with that code."""
    out, notes = await _noted_call(g, args, ctx, **state)
    assert out["code"] == code
    assert notes == [("deny", code)]


async def test_an_allowed_call_notes_nothing(ctx: Any) -> None:
    """A call allowed unchanged leaves no note."""
    out, notes = await _noted_call(
        guard(schema=REFUND_SCHEMA), {"charge_id": "c", "amount": 1.5}, ctx
    )
    assert (out, notes) == (None, [])


async def test_a_rewrite_that_changes_a_value_is_noted(ctx: Any) -> None:
    """Rounding 10.456 to 10.46 is noted as rewrite round."""
    args = {"charge_id": "c", "amount": 10.456}
    out, notes = await _noted_call(guard(rewrites=[Round("amount", 2)]), args, ctx)
    assert out is None
    assert notes == [("rewrite", "round")]


async def test_a_rewrite_that_changes_nothing_is_not_noted(ctx: Any) -> None:
    """Rounding a value that is already rounded, or clamping one in range, leaves no note."""
    g = guard(rewrites=[Clamp("amount", 0, 500), Round("amount", 2)])
    _, notes = await _noted_call(g, {"charge_id": "c", "amount": 10.5}, ctx)
    assert notes == []


async def test_an_injected_value_equal_to_the_asked_one_is_not_noted(ctx: Any) -> None:
    """InjectState writing the value the model already chose leaves no note."""
    g = guard(rewrites=[InjectState("tenant", TENANT)])
    args = {"charge_id": "c", "amount": 1, "tenant": "acme"}
    _, notes = await _noted_call(g, args, ctx, **{"user:tenant_id": "acme"})
    assert notes == []


async def test_several_rewrites_are_noted_once_in_order(ctx: Any) -> None:
    """Clamp and InjectState that both change a value are one rewrite note: clamp,inject_state."""
    g = guard(rewrites=[Clamp("amount", 0, 500), InjectState("tenant", TENANT)])
    args = {"charge_id": "c", "amount": 900, "tenant": "globex"}
    _, notes = await _noted_call(g, args, ctx, **{"user:tenant_id": "acme"})
    assert notes == [("rewrite", "clamp,inject_state")]


async def test_a_rewrite_before_a_denial_is_noted_first(ctx: Any) -> None:
    """A value rounded and then refused by the schema is noted rewrite, then deny."""
    g = guard(rewrites=[Round("amount", 2)], schema=REFUND_SCHEMA)
    _, notes = await _noted_call(g, {"charge_id": "c" * 100, "amount": 1.234}, ctx)
    assert notes == [("rewrite", "round"), ("deny", "schema")]


async def test_a_pending_approval_is_noted_as_defer_with_its_code(ctx: Any) -> None:
    """A call waiting for a person carries code approval_required and is noted as defer."""
    g = guard(approval=Approval(("amount", 100), confirm=True))
    out, notes = await _noted_call(g, {"charge_id": "c", "amount": 250}, ctx)
    assert (out["status"], out["code"]) == ("pending_approval", "approval_required")
    assert notes == [("defer", "approval_required")]


async def test_a_rejection_by_the_approver_is_noted_with_its_code(ctx: Any) -> None:
    """A confirmation the person rejected is a denial coded rejected_by_approver."""
    g = guard(approval=Approval(("amount", 100), confirm=True))
    c = await ctx({}, function_call_id="fc-1")
    c.tool_confirmation = ToolConfirmation(confirmed=False)
    out = g.before_tool(tool=TOOL, tool_args={"charge_id": "c", "amount": 250}, tool_context=c)
    assert out["code"] == "rejected_by_approver"
    assert noted(c, "before_tool") == [("deny", "rejected_by_approver")]


async def test_a_rule_given_as_a_mapping_is_enforced_like_a_tool_rule(ctx: Any) -> None:
    """A rule written as a table of ToolRule fields (a config file's form) is enforced."""
    schema = {"type": "object", "properties": {"amount": {"type": "number", "maximum": 500}}}
    g = ToolGuard({"issue_refund": {"agents": ["billing"], "schema": schema}})
    out = await call(g, {"charge_id": "c1", "amount": 5000}, ctx)
    assert out["code"] == "schema"


def test_a_rule_mapping_with_an_unknown_field_is_refused() -> None:
    """A misspelt field of a rule table fails at construction, naming the fields."""
    with pytest.raises(TypeError, match="unknown field"):
        ToolGuard({"issue_refund": {"shema": {}}})
