"""Per-invocation records are keyed, bounded and freed."""

from __future__ import annotations

import hashlib

import pytest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from adk_lattice import CallRecord
from adk_lattice._records import Records, call_key, tool_label


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


def test_bounds_of_one_are_accepted_and_the_message_says_so() -> None:
    """A bound of 1 is valid; 0 for either bound is refused with the rule in the message."""
    one = Records(max_invocations=1, max_calls=1)
    one.open("a")
    assert len(one) == 1
    for bad in ({"max_invocations": 0}, {"max_calls": 0}):
        with pytest.raises(ValueError, match=r"^max_invocations and max_calls must be at least 1$"):
            Records(**bad)


def test_default_bounds_are_4096_invocations_and_1024_calls() -> None:
    """By default 4096 invocations stay open (the next evicts the oldest) and 1024 calls each."""
    evicted: list[str] = []
    records = Records(on_evict=lambda r: evicted.append(r.invocation_id))
    for i in range(4097):
        records.open(str(i))
    assert (len(records), evicted) == (4096, ["0"])
    inv, _ = records.open("4096")
    for i in range(1025):
        records.open_call(inv, CallRecord(str(i), "t", "a", "4096"))
    assert len(inv.open_calls) == 1024
    assert "0" not in inv.open_calls


def test_popping_an_unknown_invocation_returns_none() -> None:
    """pop() of an invocation that is not open is None, not an error."""
    assert Records().pop("never-opened") is None


def test_abandoned_invocations_are_remembered_within_the_bound() -> None:
    """abandon() remembers the newest max_invocations ids; older ones are forgotten."""
    records = Records(max_invocations=2)
    for iid in ("a", "b", "c"):
        records.abandon(iid)
    assert [records.abandoned(i) for i in ("a", "b", "c", "d")] == [False, True, True, False]


def test_a_made_up_tool_name_is_hashed_not_echoed() -> None:
    """A name ADK could not resolve reads unknown-tool-<12 hex>, stable per name."""
    label = tool_label(BaseTool(name="mail alice@example.com", description=""))
    assert label.startswith("unknown-tool-") and len(label) == len("unknown-tool-") + 12
    assert "alice" not in label
    assert label == tool_label(BaseTool(name="mail alice@example.com", description=""))
    assert label != tool_label(BaseTool(name="mail bob@example.com", description=""))


def test_a_made_up_tool_name_with_a_lone_surrogate_is_labelled() -> None:
    """A made-up name holding text UTF-8 cannot encode still gets a label, without raising."""
    label = tool_label(BaseTool(name="x\ud800y", description=""))
    assert label == "unknown-tool-" + hashlib.sha256(b"x?y").hexdigest()[:12]


def test_a_tool_without_a_string_name_is_labelled_by_its_type() -> None:
    """An object whose name is not a string is labelled by its class name."""

    class Lookup:
        name = None

    assert tool_label(Lookup()) == "Lookup"
    assert tool_label(FunctionTool(len)) == "len"


def test_a_tool_with_no_name_attribute_is_labelled_by_its_type() -> None:
    """An object with no name attribute at all is labelled by its class name, not refused."""

    class Lookup:
        pass

    assert tool_label(Lookup()) == "Lookup"


def test_a_call_without_an_id_is_held_under_its_tool_name() -> None:
    """A tool call ADK gave no id is held under its tool's name, where its after_tool finds it."""
    records = Records()
    inv, _ = records.open("inv-1")
    call = CallRecord(None, "lookup_charge", "billing", "inv-1")
    records.open_call(inv, call)
    assert inv.open_calls == {call_key(None, "lookup_charge"): call}
    assert call_key(None, "lookup_charge") == "tool:lookup_charge"
