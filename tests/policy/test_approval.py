"""Approval with a predicate: when a call needs a person, decided by the app's own code."""

from __future__ import annotations

import math
from typing import Any

from adk_lattice.policy import Approval


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
