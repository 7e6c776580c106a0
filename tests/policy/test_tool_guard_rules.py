"""ToolGuard: rule outcomes users rely on that the main suite leaves implicit."""

from __future__ import annotations

from typing import Any

from google.adk.tools.tool_confirmation import ToolConfirmation

from adk_lattice.policy import Approval, Clamp, ToolGuard, ToolRule
from adk_lattice.state import StateKey

from .test_tool_guard import TOOL, call, guard

IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")


def over_budget(args: Any) -> bool:
    return bool(args["amount"] > args["budget"])


async def test_a_check_returning_false_denies_the_call(ctx: Any) -> None:
    """A ToolRule check returning False denies the call with code check."""
    g = guard(checks=[lambda args: args["amount"] < 100])
    out = await call(g, {"charge_id": "c1", "amount": 500}, ctx)
    assert (out["status"], out["code"]) == ("denied", "check")
    assert await call(g, {"charge_id": "c1", "amount": 5}, ctx) is None
    assert g.counts == {"denied": 1, "denied:issue_refund": 1, "allowed": 1}


async def test_a_check_returning_true_allows_the_call(ctx: Any) -> None:
    """A ToolRule check returning True lets the call through and counts it allowed."""
    g = guard(checks=[lambda args: True])
    assert await call(g, {"charge_id": "c1", "amount": 5}, ctx) is None
    assert g.counts == {"allowed": 1}


async def test_clamp_raises_an_amount_below_the_lower_bound(ctx: Any) -> None:
    """Clamp's lower bound lifts a too-small amount before the tool sees it."""
    args = {"charge_id": "c1", "amount": -40}
    assert await call(guard(rewrites=[Clamp("amount", 1, 500)]), args, ctx) is None
    assert args["amount"] == 1


async def test_deep_list_nesting_is_denied(ctx: Any) -> None:
    """Lists nested past max_depth are denied as hygiene, like nested objects."""
    deep: Any = 1
    for _ in range(4):
        deep = [deep]  # the innermost value sits five levels down: "ids" and four lists
    g = ToolGuard({"issue_refund": ToolRule()}, max_depth=4)
    out = await call(g, {"charge_id": "c", "amount": 1, "ids": deep}, ctx)
    assert (out["code"], out["reason"]) == ("hygiene", "arguments are nested deeper than 4 levels")
    assert await call(g, {"charge_id": "c", "amount": 1, "ids": deep[0]}, ctx) is None


async def test_a_predicate_approval_asks_when_it_returns_true(ctx: Any) -> None:
    """Approval with a callable `when` pauses the call for a person when it returns True."""
    g = guard(approval=Approval(over_budget, confirm=True))
    out = await call(g, {"charge_id": "c1", "amount": 150, "budget": 100}, ctx)
    assert (out["status"], out["code"]) == ("pending_approval", "approval_required")
    assert await call(g, {"charge_id": "c1", "amount": 50, "budget": 100}, ctx) is None


async def test_a_predicate_approval_that_raises_asks_for_approval(ctx: Any) -> None:
    """A `when` predicate that raises does not let the call through: a person must approve."""
    g = guard(approval=Approval(over_budget, confirm=True))
    out = await call(g, {"charge_id": "c1", "amount": 150}, ctx)
    assert out["status"] == "pending_approval"
    assert g.counts["pending_approval"] == 1


async def test_a_rejection_is_counted_as_rejected(ctx: Any) -> None:
    """A confirmation the person turned down counts as rejected and as denied."""
    g = guard(approval=Approval(("amount", 100), confirm=True))
    c = await ctx({}, function_call_id="fc-1")
    c.tool_confirmation = ToolConfirmation(confirmed=False)
    g.before_tool(tool=TOOL, tool_args={"charge_id": "c", "amount": 250}, tool_context=c)
    assert g.counts == {"rejected": 1, "denied": 1, "denied:issue_refund": 1}


async def test_a_yes_from_someone_without_the_role_is_counted_as_rejected(ctx: Any) -> None:
    """A confirmation given where the approving role does not hold is refused and counted."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER, confirm=True))
    c = await ctx({}, function_call_id="fc-1")
    c.tool_confirmation = ToolConfirmation(confirmed=True)
    out = g.before_tool(tool=TOOL, tool_args={"charge_id": "c", "amount": 250}, tool_context=c)
    assert out["code"] == "approver_not_authorised"
    assert (
        out["reason"] == "the issue_refund call was confirmed by someone not allowed to approve it"
    )
    assert g.counts["rejected"] == 1


async def test_a_role_holder_is_counted_as_approved_by_role(ctx: Any) -> None:
    """A call over the threshold by a role holder runs and counts as approved_by_role."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    args = {"charge_id": "c", "amount": 250}
    assert await call(g, args, ctx, **{"user:is_manager": True}) is None
    assert g.counts == {"allowed": 1, "approved_by_role": 1}


async def test_a_denial_without_confirm_names_the_role(ctx: Any) -> None:
    """Without confirm, a call over the threshold is denied naming the role that may approve."""
    g = guard(approval=Approval(("amount", 100), role=IS_MANAGER))
    out = await call(g, {"charge_id": "c", "amount": 250}, ctx)
    assert out["reason"] == (
        "this issue_refund call needs approval by an authorised person (user:is_manager)"
    )
