"""ToolGuard: rule outcomes users rely on that the main suite leaves implicit."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import BaseModel

from adk_lattice import Outcome
from adk_lattice.policy import Approval, Clamp, InjectState, ToolGuard, ToolRule
from adk_lattice.state import StateKey
from adk_lattice.telemetry import notes_of

from .test_tool_guard import TOOL, call, guard

IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")
TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")


class Amount(BaseModel):
    amount: float


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


class Declared(BaseTool):
    """A tool declaring its parameters as a Schema (not a JSON schema)."""

    def __init__(self, declaration: types.FunctionDeclaration | None) -> None:
        super().__init__(name="issue_refund", description="Refund a charge.")
        self.declaration = declaration

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self.declaration


def _notes(c: Any) -> list[tuple[str, str, str | None]]:
    outcome = Outcome(hook="before_tool", args={"tool_context": c})
    return [(n.handler, n.decision, n.reason) for n in notes_of(outcome)]


def _denials() -> list[tuple[ToolGuard, Any]]:
    deep: Any = 1
    for _ in range(30):
        deep = {"a": deep}
    return [
        (ToolGuard({}, unknown="deny"), {"charge_id": "c"}),
        (ToolGuard({"issue_refund": ToolRule()}), ["not", "an", "object"]),
        (ToolGuard({"issue_refund": ToolRule()}), {"x": deep}),
        (ToolGuard({"issue_refund": ToolRule(rewrites=[InjectState("t", TENANT)])}), {}),
        (ToolGuard({"issue_refund": ToolRule(schema={"required": ["amount"]})}), {}),
        (ToolGuard({"issue_refund": ToolRule(checks=[lambda a: False])}), {}),
        (ToolGuard({"issue_refund": ToolRule(approval=Approval(("amount", 1)))}), {"amount": 5}),
    ]


async def test_every_denial_names_the_tool_and_is_counted_per_tool(ctx: Any) -> None:
    """Each way to deny returns a dict naming the tool and policy, counted under denied:<tool>."""
    for g, args in _denials():
        c = await ctx({}, function_call_id="fc-1", agent_name="billing")
        out = g.before_tool(tool=TOOL, tool_args=args, tool_context=c)
        assert (out["status"], out["tool"], out["policy"]) == (
            "denied",
            "issue_refund",
            "ToolGuard",
        )
        assert g.counts["denied:issue_refund"] == 1
        assert _notes(c) == [("ToolGuard", "deny", out["code"])]


async def test_unknown_tools_and_non_objects_are_denied_with_plain_reasons(ctx: Any) -> None:
    """The reasons for an unknown tool and for arguments that are not an object are fixed text."""
    unknown, not_object = _denials()[:2]
    c = await ctx({}, function_call_id="fc-1")
    out = unknown[0].before_tool(tool=TOOL, tool_args=unknown[1], tool_context=c)
    assert out["reason"] == "the tool issue_refund is not allowed here"
    out = not_object[0].before_tool(tool=TOOL, tool_args=not_object[1], tool_context=c)
    assert out["reason"] == "arguments must be an object"


async def test_a_pending_approval_says_which_call_waits(ctx: Any) -> None:
    """A call waiting for a person returns the full pending dict; the request names the tool."""
    g = ToolGuard({"issue_refund": ToolRule(approval=Approval(("amount", 1), confirm=True))})
    c = await ctx({}, function_call_id="fc-9")
    out = g.before_tool(tool=TOOL, tool_args={"amount": 5}, tool_context=c)
    assert out == {
        "status": "pending_approval",
        "reason": "this issue_refund call waits for a person to approve it",
        "code": "approval_required",
        "policy": "ToolGuard",
        "tool": "issue_refund",
    }
    assert c.actions.requested_tool_confirmations["fc-9"].payload == {"tool": "issue_refund"}
    assert _notes(c) == [("ToolGuard", "defer", "approval_required")]


async def test_reasons_for_approval_denials_are_plain(ctx: Any) -> None:
    """Without a role the reason names no role; a rejection says the approver rejected it."""
    g = ToolGuard({"issue_refund": ToolRule(approval=Approval(("amount", 1)))})
    c = await ctx({}, function_call_id="fc-1")
    out = g.before_tool(tool=TOOL, tool_args={"amount": 5}, tool_context=c)
    assert out["reason"] == "this issue_refund call needs approval by an authorised person"
    g = ToolGuard({"issue_refund": ToolRule(approval=Approval(("amount", 1), confirm=True))})
    c.tool_confirmation = ToolConfirmation(confirmed=False)
    out = g.before_tool(tool=TOOL, tool_args={"amount": 5}, tool_context=c)
    assert out["reason"] == "the issue_refund call was rejected by the approver"


async def test_a_rewrite_is_noted_under_the_guards_name(ctx: Any) -> None:
    """A rewrite note carries the guard's handler name."""
    g = ToolGuard({"issue_refund": ToolRule(rewrites=[Clamp("amount", 0, 5)])}, name="refunds")
    c = await ctx({}, function_call_id="fc-1")
    assert g.before_tool(tool=TOOL, tool_args={"amount": 50}, tool_context=c) is None
    assert _notes(c) == [("refunds", "rewrite", "clamp")]


def test_bad_settings_are_refused_with_the_fix() -> None:
    """A bad unknown=, a rule or a default that is not a ToolRule fail at construction."""
    with pytest.raises(ValueError, match=r"^unknown must be 'allow' or 'deny'$"):
        ToolGuard({}, unknown="maybe")
    with pytest.raises(TypeError, match=r"^rule for 'refund' must be a ToolRule, not int$"):
        ToolGuard({"refund": 3})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"^default must be a ToolRule, not dict$"):
        ToolGuard({}, default={})  # type: ignore[arg-type]


def test_the_default_rules_state_keys_are_protected() -> None:
    """Keys read by the default rule (an approval role, an injected key) are trusted keys."""
    default = ToolRule(
        rewrites=[InjectState("t", TENANT)], approval=Approval(("n", 1), role=IS_MANAGER)
    )
    assert ToolGuard({}, default=default).state_keys == (IS_MANAGER, TENANT)


async def test_default_limits_are_20_levels_and_1000_items(ctx: Any) -> None:
    """By default 20 levels and 1000 items pass; 21 levels or 1001 items are denied."""
    g = ToolGuard({"issue_refund": ToolRule()})

    def nested(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = {"a": value}
        return value  # the innermost value sits `levels` keys down

    for args, allowed in [
        ({"ids": list(range(1000))}, True),
        ({"ids": list(range(1001))}, False),
        (nested(20), True),
        (nested(21), False),
    ]:
        assert (await call(g, args, ctx) is None) is allowed


async def test_fields_declared_only_by_the_rule_are_named_in_reasons(ctx: Any) -> None:
    """A tool that declares nothing still gets reasons naming the fields its rule declares."""
    tool = Declared(None)
    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    for rule in (ToolRule(schema=schema), ToolRule(model=Amount)):
        g = ToolGuard({"issue_refund": rule})
        c = await ctx({}, function_call_id="fc-1")
        out = g.before_tool(tool=tool, tool_args={"amount": math.nan}, tool_context=c)
        assert out["reason"] == "amount must be a finite number"


async def test_fields_a_tool_declares_as_a_schema_are_named_in_reasons(ctx: Any) -> None:
    """Parameters declared as a genai Schema are names a reason may show."""
    params = types.Schema(
        type=types.Type.OBJECT, properties={"amount": types.Schema(type=types.Type.NUMBER)}
    )
    tool = Declared(types.FunctionDeclaration(name="issue_refund", parameters=params))
    g = ToolGuard({"issue_refund": ToolRule()})
    c = await ctx({}, function_call_id="fc-1")
    out = g.before_tool(tool=tool, tool_args={"amount": math.inf}, tool_context=c)
    assert out["reason"] == "amount must be a finite number"


async def test_a_model_rule_denies_with_code_model(ctx: Any) -> None:
    """A pydantic model rule's denial carries the code model."""
    g = ToolGuard({"issue_refund": ToolRule(model=Amount)})
    out = await call(g, {"amount": "12"}, ctx)
    assert out["code"] == "model"


async def test_a_tool_without_a_name_is_labelled_by_its_type(ctx: Any) -> None:
    """A tool object with no name attribute is denied as unknown under its class name."""

    class Nameless:
        pass

    c = await ctx({}, function_call_id="fc-1")
    out = ToolGuard({}, unknown="deny").before_tool(tool=Nameless(), tool_args={}, tool_context=c)
    assert (out["code"], out["tool"]) == ("unknown_tool", "Nameless")


def test_a_rule_may_be_given_as_a_mapping_of_every_field() -> None:
    """A mapping with any of ToolRule's fields builds that rule; an unknown field is refused."""
    approval = Approval(("amount", 1))
    fields = {
        "agents": {"billing"},
        "schema": {"type": "object"},
        "model": Amount,
        "checks": [bool],
        "rewrites": [Clamp("amount", 0, 5)],
        "approval": approval,
        "sensitive": {"amount": "money"},
    }
    rule = ToolGuard({"refund": fields}).rules["refund"]
    assert {f: getattr(rule, f) for f in fields} == fields
    with pytest.raises(
        TypeError,
        match=r"^rule for 'refund': unknown field\(s\) limit, when; a ToolRule has agents, "
        r"schema, model, checks, rewrites, approval, sensitive$",
    ):
        ToolGuard({"refund": {"when": 1, "limit": 2}})


async def test_a_tool_without_a_rule_is_counted_allowed(ctx: Any) -> None:
    """With unknown='allow' and no default, a tool without a rule passes and counts allowed."""
    g = ToolGuard({"other_tool": ToolRule()})
    assert await call(g, {"amount": 1}, ctx) is None
    assert g.counts == {"allowed": 1}


async def test_each_tool_keeps_its_own_declared_names(ctx: Any) -> None:
    """Reasons for two tools name each tool's own declared field, not the other's."""

    def declared(field: str) -> Declared:
        params = types.Schema(
            type=types.Type.OBJECT, properties={field: types.Schema(type=types.Type.NUMBER)}
        )
        tool = Declared(types.FunctionDeclaration(name="t", parameters=params))
        tool.name = f"tool_{field}"
        return tool

    g = ToolGuard({}, default=ToolRule())
    for field in ("amount", "fee"):
        c = await ctx({}, function_call_id="fc-1")
        args = {field: math.nan}
        out = g.before_tool(tool=declared(field), tool_args=args, tool_context=c)
        assert out["reason"] == f"{field} must be a finite number"


async def test_names_from_both_schema_and_model_are_declared(ctx: Any) -> None:
    """A rule with a schema and a model may name the fields either declares."""

    class Note(BaseModel):
        note: str = ""

    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    g = ToolGuard({"issue_refund": ToolRule(schema=schema, model=Note)})
    for field in ("amount", "note"):
        c = await ctx({}, function_call_id="fc-1")
        out = g.before_tool(tool=Declared(None), tool_args={field: math.inf}, tool_context=c)
        assert out["reason"] == f"{field} must be a finite number"
