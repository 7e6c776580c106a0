"""Arbitrary tool arguments into ToolGuard and the ToolResultCache key: a defined result."""

from __future__ import annotations

import asyncio
import copy
import math
from typing import Any

from hypothesis import HealthCheck, given, settings

from adk_lattice.cache import KEY_VERSION, MemoryStore, ToolResultCache
from adk_lattice.policy import Approval, InjectState, Round, ToolGuard, ToolRule
from adk_lattice.state import StateKey, StateKeys
from adk_lattice.testing import function_tool, tool_context
from tests.reliability._strategies import tool_args

KEYS = StateKeys()
IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve.", registry=KEYS)
TENANT = StateKey("user:tenant_id", str, "", "The tenant.", registry=KEYS)
SCHEMA = {
    "type": "object",
    "required": ["charge_id", "amount"],
    "properties": {
        "charge_id": {"type": "string", "maxLength": 64},
        "amount": {"type": "number", "exclusiveMinimum": 0},
    },
}
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def issue_refund(charge_id: str, amount: float, tenant_id: str) -> dict[str, Any]:
    """Refund a charge."""
    return {"status": "ok"}


TOOL = function_tool(issue_refund)
GUARD = ToolGuard(
    {
        "issue_refund": ToolRule(
            schema=SCHEMA,
            rewrites=[Round("amount", 2), InjectState("tenant_id", TENANT)],
            approval=Approval(("amount", 100), role=IS_MANAGER),
        )
    }
)
CACHE = ToolResultCache(MemoryStore(), tools=["issue_refund"])
CTX = tool_context(state={"user:tenant_id": "t1", "user:is_manager": False})


@FUZZ
@given(args=tool_args)
def test_tool_guard_allows_with_clean_arguments_or_denies_legibly(args: dict[str, Any]) -> None:
    """Any arguments: None with the tenant injected and a finite amount, or a coded denial."""
    result = GUARD.before_tool(tool=TOOL, tool_args=args, tool_context=CTX)
    if result is None:
        assert args["tenant_id"] == "t1"
        assert isinstance(args["amount"], int | float) and math.isfinite(args["amount"])
        assert 0 < args["amount"] <= 100
    else:
        assert isinstance(result, dict) and result["status"] == "denied"
        assert isinstance(result["code"], str) and isinstance(result["reason"], str)
        assert len(result["reason"]) < 2_000  # names the field and the rule, not the value


@FUZZ
@given(args=tool_args)
def test_tool_cache_key_is_a_stable_string_or_none(args: dict[str, Any]) -> None:
    """Any arguments: the key is None (unkeyable) or the same prefixed string twice."""
    key = CACHE.key("issue_refund", args, CTX)
    assert key is None or (
        key.startswith(f"tool:{KEY_VERSION}:tool_result_cache:")
        and key == CACHE.key("issue_refund", copy.deepcopy(args), CTX)
    )


@FUZZ
@given(args=tool_args)
def test_tool_cache_lookup_is_a_miss_not_a_crash(args: dict[str, Any]) -> None:
    """Any arguments: the lookup answers None (a miss or unkeyed) and never raises."""
    result = asyncio.run(CACHE.before_tool(tool=TOOL, tool_args=args, tool_context=CTX))
    assert result is None
