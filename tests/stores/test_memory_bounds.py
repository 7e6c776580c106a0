"""MemoryStore's settings and counters: each bound checked alone, defaults, one warning."""

from __future__ import annotations

import logging

import pytest

from adk_lattice.stores import MemoryStore


@pytest.mark.parametrize("bound", ["max_entries", "max_bytes", "max_counters"])
def test_each_bound_below_one_is_refused_on_its_own(bound: str) -> None:
    """Any one bound below 1 is refused with the rule, whatever the others are."""
    rule = "max_entries, max_bytes and max_counters must be at least 1"
    with pytest.raises(ValueError, match=f"^{rule}$"):
        MemoryStore(**{bound: 0})


async def test_bounds_of_one_are_accepted_and_hold_one() -> None:
    """A store bounded to one entry and one counter keeps exactly one of each."""
    store = MemoryStore(max_entries=1, max_counters=1)
    await store.set("a", b"1")
    await store.set("b", b"2")
    assert (await store.get("a"), await store.get("b")) == (None, b"2")
    assert await store.incr("n", 60) == 1


def test_a_new_store_has_its_name_and_zeroed_counters() -> None:
    """A default store is named memory and reports every counter, its own included, at zero."""
    store = MemoryStore()
    assert store.name == "memory"
    own = ("too_large", "evictions", "counters_full")
    assert {k: v for k, v in store.stats.items() if k in own} == dict.fromkeys(own, 0)


async def test_deleting_an_absent_key_is_not_an_error() -> None:
    """delete of a key never stored succeeds quietly: no error counted, the store healthy."""
    store = MemoryStore()
    await store.delete("never-set")
    assert (store.stats["errors"], store.stats["deletes"], store.healthy) == (0, 1, True)


async def test_a_full_counter_table_warns_once_until_a_counter_fits_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Refused new counters log one warning, not one per refusal."""
    store = MemoryStore(max_counters=1)
    await store.incr("a", 60)
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.incr("b", 60) is None
        assert await store.incr("c", 60) is None
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'memory' holds 1 live counters; new counters are refused until"
        " windows expire"
    ]
    assert store.stats["counters_full"] == 2


async def test_every_entry_evicted_for_room_is_counted() -> None:
    """Each entry dropped past max_entries adds one to the evictions counter."""
    store = MemoryStore(max_entries=1)
    for key in "abc":
        await store.set(key, b"v")
    assert store.stats["evictions"] == 2
