"""MemoryStore at the edges of time and of its bounds: windows that end exactly now, entries
that expire while a prefix is deleted, the default bounds."""

from __future__ import annotations

import types

import pytest

from adk_lattice.stores import MemoryStore, _memory


class Clock:
    """A monotonic clock the test moves by hand (``tick`` added on every reading)."""

    def __init__(self, now: float = 1000.0, tick: float = 0.0) -> None:
        self.now, self.tick = now, tick

    def monotonic(self) -> float:
        now = self.now
        self.now += self.tick
        return now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock MemoryStore reads (entries' expiry and counters' windows)."""
    fake = Clock()
    monkeypatch.setattr(_memory, "time", types.SimpleNamespace(monotonic=fake.monotonic))
    return fake


async def test_a_window_that_ends_now_frees_its_slot_for_a_new_counter(clock: Clock) -> None:
    """A full counter table takes a new key once a window has ended, at its last instant too."""
    store = MemoryStore(max_counters=1)
    assert await store.incr("a", 10) == 1
    clock.now += 10
    assert await store.incr("b", 10) == 1
    assert store.stats["counters_full"] == 0


async def test_a_window_is_over_at_its_last_instant(clock: Clock) -> None:
    """An increment exactly ``window`` seconds after the first starts a new window at one."""
    store = MemoryStore()
    assert await store.incr("k", 10) == 1
    clock.now += 10
    assert await store.incr("k", 10) == 1


async def test_an_entry_is_gone_when_its_ttl_ends(clock: Clock) -> None:
    """An entry is read until its ttl ends and missed from that instant on."""
    store = MemoryStore()
    await store.set("k", b"v", ttl=5)
    clock.now += 4.9
    assert await store.get("k") == b"v"
    clock.now += 0.1
    assert await store.get("k") is None


async def test_adding_zero_starts_the_window(clock: Clock) -> None:
    """An increment of zero on a new key starts its window, like any first increment."""
    store = MemoryStore()
    assert await store.incr("k", 10, amount=0) == 0
    clock.now += 5
    assert await store.incr("k", 10) == 1
    clock.now += 6  # the window begun by the zero increment has ended
    assert await store.incr("k", 10) == 1


async def test_an_entry_expiring_during_delete_prefix_is_not_an_error(clock: Clock) -> None:
    """delete_prefix succeeds when an entry it found expires before it is removed."""
    store = MemoryStore()
    await store.set("user:1", b"a", ttl=5)
    await store.set("user:2", b"b", ttl=5)
    clock.now += 4.5
    clock.tick = 0.3  # each reading of the clock moves time on: the entries expire mid-call
    assert await store.delete_prefix("user:") == 2
    assert store.stats["errors"] == 0
    assert store.healthy


async def test_the_default_store_keeps_ten_thousand_entries() -> None:
    """A default store holds 10,000 entries and evicts the oldest for the next one."""
    store = MemoryStore()
    for i in range(10_001):
        await store.set(f"k{i}", b"")
    assert len(store) == 10_000
    assert await store.get("k0") is None
    assert await store.get("k10000") == b""


async def test_the_default_store_keeps_a_hundred_thousand_counters() -> None:
    """A default store counts 100,000 keys at once and refuses the next new one."""
    store = MemoryStore()
    for i in range(100_000):
        await store.incr(f"c{i}", 60)
    assert await store.incr("one-more", 60) is None
    assert await store.incr("c0", 60) == 2


def test_a_byte_bound_of_one_is_accepted() -> None:
    """max_bytes=1 is a valid (if useless) bound: only values of more refuse construction."""
    assert MemoryStore(max_bytes=1).max_bytes == 1


async def test_each_value_too_large_is_counted() -> None:
    """Every refused oversize value adds one to too_large, not just the first."""
    store = MemoryStore(max_bytes=100)
    assert not await store.set("a", b"x" * 200)
    assert not await store.set("b", b"x" * 200)
    assert store.stats["too_large"] == 2
