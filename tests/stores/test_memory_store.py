"""MemoryStore: bounded by entries and bytes, least recently used evicted first."""

from __future__ import annotations

import asyncio

import pytest

from adk_lattice.stores import MemoryStore


async def test_entry_bound_evicts_the_least_recently_used() -> None:
    """Past max_entries the least recently read entry goes first."""
    store = MemoryStore(max_entries=2)
    await store.set("a", b"1")
    await store.set("b", b"2")
    await store.get("a")
    await store.set("c", b"3")
    assert (await store.get("a"), await store.get("b"), await store.get("c")) == (b"1", None, b"3")
    assert store.stats["evictions"] == 1


async def test_byte_bound_keeps_the_total_under_max_bytes() -> None:
    """Past max_bytes old entries are evicted so the total stays within the bound."""
    store = MemoryStore(max_bytes=1000)
    for i in range(10):
        await store.set(f"k{i}", b"x" * 200)
    assert store.size_bytes <= 1000
    assert await store.get("k9") == b"x" * 200
    assert await store.get("k0") is None


async def test_value_larger_than_max_bytes_is_refused_and_counted() -> None:
    """A single value over the byte bound is not stored; set says so."""
    store = MemoryStore(max_bytes=100)
    assert not await store.set("big", b"x" * 500)
    assert store.stats["too_large"] == 1


def test_bad_bounds_are_refused() -> None:
    """Zero bounds are a clear error."""
    with pytest.raises(ValueError, match="at least 1"):
        MemoryStore(max_entries=0)


async def test_cache_entries_never_evict_a_live_counter() -> None:
    """Writing far more entries than max_entries leaves a counter's count intact."""
    store = MemoryStore(max_entries=2)
    await store.incr("rl:u1", 60)
    for i in range(20):
        await store.set(f"k{i}", b"v")
    assert await store.incr("rl:u1", 60) == 2


async def test_a_new_counter_is_refused_when_every_slot_holds_a_live_window() -> None:
    """Past max_counters live windows, incr of a new key is None, counted; old keys count on."""
    store = MemoryStore(max_counters=2)
    await store.incr("a", 60)
    await store.incr("b", 60)
    assert await store.incr("c", 60) is None
    assert store.stats["counters_full"] == 1
    assert await store.incr("a", 60) == 2


async def test_expired_counters_make_room_for_new_ones() -> None:
    """When the counter table is full, expired windows are dropped for a new key."""
    store = MemoryStore(max_counters=1)
    await store.incr("a", 0.05)
    await asyncio.sleep(0.1)
    assert await store.incr("b", 60) == 1


def test_a_zero_counter_bound_is_refused() -> None:
    """max_counters=0 is a clear error."""
    with pytest.raises(ValueError, match="max_counters"):
        MemoryStore(max_counters=0)
