"""Per-invocation records are keyed, bounded and freed."""

from __future__ import annotations

import pytest

from adk_lattice import CallRecord
from adk_lattice._records import Records


def test_open_returns_the_same_record_per_invocation() -> None:
    """Opening an invocation twice gives one record, created once."""
    records = Records()
    first, created = records.open("inv-1")
    again, created_again = records.open("inv-1")
    assert first is again
    assert (created, created_again) == (True, False)


def test_oldest_invocation_is_evicted_past_the_bound() -> None:
    """Past max_invocations the oldest record is handed to on_evict and forgotten."""
    evicted: list[str] = []
    records = Records(max_invocations=2, on_evict=lambda r: evicted.append(r.invocation_id))
    for iid in ("a", "b", "c"):
        records.open(iid)
    assert evicted == ["a"]
    assert len(records) == 2
    assert records.get("a") is None


def test_pop_frees_the_record() -> None:
    """pop() forgets an invocation."""
    records = Records()
    records.open("x")
    assert records.pop("x") is not None
    assert len(records) == 0


def test_open_calls_are_bounded_per_invocation() -> None:
    """One invocation holds at most max_calls open tool calls, oldest dropped first."""
    records = Records(max_calls=2)
    inv, _ = records.open("x")
    for fcid in ("1", "2", "3"):
        records.open_call(inv, CallRecord(fcid, "t", "a", "x"))
    assert list(inv.open_calls) == ["2", "3"]


def test_bounds_must_be_positive() -> None:
    """A zero bound is refused."""
    with pytest.raises(ValueError, match="at least 1"):
        Records(max_invocations=0)
