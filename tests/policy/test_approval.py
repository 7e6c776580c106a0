"""Approval with a predicate: when a call needs a person, decided by the app's own code."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.adk.tools.tool_confirmation import ToolConfirmation

from adk_lattice.policy import Approval
from adk_lattice.state import StateKey


def over_budget(args: Any) -> bool:
    return bool(args["amount"] > args["budget"])


def test_a_callable_when_asks_only_when_it_says_so() -> None:
    """A predicate `when` asks for approval exactly when it returns True."""
    approval = Approval(over_budget, confirm=True)
    assert approval.needed({"amount": 50, "budget": 100}) is False
    assert approval.needed({"amount": 150, "budget": 100}) is True


def test_a_callable_when_that_raises_asks_for_approval() -> None:
    """A predicate that cannot decide (it raises) fails closed: a person must approve."""
    approval = Approval(over_budget, confirm=True)
    assert approval.needed({"amount": 150}) is True


def test_a_threshold_exactly_met_needs_no_approval() -> None:
    """A value equal to the threshold is not over it; anything above is."""
    approval = Approval(("amount", 100), confirm=True)
    assert approval.needed({"amount": 100}) is False
    assert approval.needed({"amount": 100.01}) is True


def test_a_threshold_on_an_unreadable_value_asks_for_approval() -> None:
    """A missing, boolean, text or non-finite amount cannot be judged: a person must approve."""
    approval = Approval(("amount", 100), confirm=True)
    for value in (None, True, "5", math.nan, -math.inf):
        assert approval.needed({"amount": value}) is True


IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve calls over the limit.")


async def _context(
    ctx: Any, state: dict[str, Any] | None = None, confirmed: bool | None = None
) -> Any:
    c = await ctx(state or {}, function_call_id="fc-1")
    if confirmed is not None:
        c.tool_confirmation = ToolConfirmation(confirmed=confirmed)
    return c


async def test_without_confirm_a_call_needing_approval_is_denied(ctx: Any) -> None:
    """Without confirm=True and without the role, the verdict is deny approval_required."""
    approval = Approval(("amount", 100), role=IS_MANAGER)
    assert approval.decide(await _context(ctx)) == ("deny", "approval_required")


async def test_the_role_allows_without_asking(ctx: Any) -> None:
    """A user holding the role is allowed, coded role, without a confirmation."""
    approval = Approval(("amount", 100), role=IS_MANAGER, confirm=True)
    c = await _context(ctx, {"user:is_manager": True})
    assert approval.decide(c) == ("allow", "role")


async def test_with_confirm_and_no_answer_yet_a_person_is_asked(ctx: Any) -> None:
    """With confirm=True and no confirmation yet, the verdict is defer approval_required."""
    approval = Approval(("amount", 100), confirm=True)
    assert approval.decide(await _context(ctx)) == ("defer", "approval_required")


async def test_a_rejected_confirmation_is_denied(ctx: Any) -> None:
    """A person's "no" is deny rejected_by_approver."""
    approval = Approval(("amount", 100), confirm=True)
    c = await _context(ctx, confirmed=False)
    assert approval.decide(c) == ("deny", "rejected_by_approver")


async def test_a_yes_without_role_or_approver_is_approved(ctx: Any) -> None:
    """With neither role nor approver, a "yes" allows the call, coded approved."""
    approval = Approval(("amount", 100), confirm=True)
    c = await _context(ctx, confirmed=True)
    assert approval.decide(c) == ("allow", "approved")


async def test_a_yes_from_someone_without_the_role_is_not_authorised(ctx: Any) -> None:
    """With a role, a "yes" in a run where the role does not hold is deny not authorised."""
    approval = Approval(("amount", 100), role=IS_MANAGER, confirm=True)
    c = await _context(ctx, confirmed=True)
    assert approval.decide(c) == ("deny", "approver_not_authorised")


@pytest.mark.parametrize(
    ("approver", "verdict"),
    [
        (lambda ctx, conf: True, ("allow", "approved")),
        (lambda ctx, conf: False, ("deny", "approver_not_authorised")),
        (lambda ctx, conf: "yes", ("deny", "approver_not_authorised")),
        (lambda ctx, conf: 1 / 0, ("deny", "approver_not_authorised")),
    ],
)
async def test_the_approver_decides_whose_yes_counts(
    ctx: Any, approver: Any, verdict: tuple[str, str]
) -> None:
    """Only an approver returning True allows; False, another value or an exception denies."""
    approval = Approval(("amount", 100), confirm=True, approver=approver)
    c = await _context(ctx, confirmed=True)
    assert approval.decide(c) == verdict


def test_a_bad_approver_is_refused_with_the_fix() -> None:
    """A non-callable approver, or an approver without confirm=True, fails at construction."""
    with pytest.raises(
        TypeError, match=r"^approver must be a callable \(tool_context, confirmation\) -> bool$"
    ):
        Approval(("amount", 100), confirm=True, approver="alice")  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"^an approver checks confirmations: pass confirm=True with it$"
    ):
        Approval(("amount", 100), approver=lambda ctx, conf: True)


async def test_the_approver_reads_the_calls_own_context(ctx: Any) -> None:
    """The approver is handed the tool context, so it can check who answered in its state."""
    manager = StateKey("user:is_manager", bool, False, "The user is a manager.")
    approval = Approval(
        ("amount", 100), confirm=True, approver=lambda c, conf: manager.get(c.state) is True
    )
    c = await _context(ctx, confirmed=True)
    c.state["user:is_manager"] = True
    assert approval.decide(c) == ("allow", "approved")
