"""SQLiteStore at the edges of time: an entry's last instant, how often a read refreshes
recency, and how opening a locked file paces its retries (on a clock the test moves)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import types
from pathlib import Path

import pytest

from adk_lattice.stores import SQLiteStore, _sqlite
from tests.stores.test_memory_clock import Clock


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The wall clock SQLiteStore stamps entries with (expiry and recency)."""
    fake = Clock()
    monkeypatch.setattr(
        _sqlite, "time", types.SimpleNamespace(time=fake.monotonic, monotonic=fake.monotonic)
    )
    return fake


async def test_an_entry_is_gone_at_the_instant_its_ttl_ends(tmp_path: Path, clock: Clock) -> None:
    """An entry set with ttl=10 is read 9.999 s later and missed exactly 10 s later."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    await store.set("k", b"v", ttl=10)
    clock.now += 9.999
    before = await store.get("k")
    clock.now += 0.001
    at_the_end = await store.get("k")
    await store.close()
    assert (before, at_the_end) == (b"v", None)


async def _survivor_of_a_read_at(tmp_path: Path, clock: Clock, read_after: float) -> list[str]:
    """Set a, then b 0.1 s later; read a ``read_after`` s after its write; then a third
    entry past max_entries=2 evicts the least recently used: the keys left."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=2)
    await store.set("a", b"1")
    clock.now += 0.1
    await store.set("b", b"2")
    clock.now += read_after - 0.1
    await store.get("a")
    clock.now += 5
    await store.set("c", b"3")
    left = [k for k in "abc" if await store.get(k) is not None]
    await store.close()
    return left


async def test_a_read_one_touch_interval_after_the_write_refreshes_recency(
    tmp_path: Path, clock: Clock
) -> None:
    """With the default touch_interval of 1 s, a read exactly 1 s after the write counts as
    a use: the entry written after it is evicted instead."""
    assert await _survivor_of_a_read_at(tmp_path, clock, 1.0) == ["a", "c"]


async def test_a_read_within_the_touch_interval_leaves_recency_as_it_was(
    tmp_path: Path, clock: Clock
) -> None:
    """A read 0.5 s after the write (under the default 1 s) does not refresh the entry, so
    it is still the least recently used and is evicted first."""
    assert await _survivor_of_a_read_at(tmp_path, clock, 0.5) == ["b", "c"]


async def test_a_store_waits_five_seconds_for_another_process_lock_by_default(
    tmp_path: Path,
) -> None:
    """Without busy_timeout, the store's connection waits 5,000 ms on a locked file."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    await store.set("k", b"v")
    async with store._use() as db, db.execute("PRAGMA busy_timeout") as cur:
        waits = await cur.fetchone()
    await store.close()
    assert waits == (5000,)


async def test_eviction_stops_once_the_byte_bound_holds_exactly(tmp_path: Path) -> None:
    """A write past max_bytes evicts the oldest batch and stops when what is left fills
    max_bytes exactly: the entries left and the value written stay."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_bytes=100)
    for i in range(32):
        assert await store.set(f"a{i:02}", b"x")
    assert await store.set("big", b"y" * 68)
    stored = await asyncio.wait_for(store.set("new", b"z" * 32), 5)
    left = (await store.get("big"), await store.get("new"))
    await store.close()
    assert stored and left == (b"y" * 68, b"z" * 32)
    assert store.stats["evictions"] == 32


async def test_opening_a_locked_file_retries_at_doubling_pauses_until_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a file another process holds locked retries after 5 ms, doubling the pause
    up to 0.1 s, and gives up (a counted miss) when the next pause would pass busy_timeout."""
    path = tmp_path / "c.sqlite3"
    first = SQLiteStore(path)
    await first.set("made", b"1")
    await first.close()
    fake, pauses = Clock(now=0.0), []

    async def sleep(pause: float) -> None:
        pauses.append(pause)
        assert len(pauses) < 20, "never gives up"
        fake.now += pause

    monkeypatch.setattr(
        _sqlite, "time", types.SimpleNamespace(time=time.time, monotonic=fake.monotonic)
    )
    monkeypatch.setattr(
        _sqlite,
        "asyncio",
        types.SimpleNamespace(sleep=sleep, Lock=asyncio.Lock, to_thread=asyncio.to_thread),
    )
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    store = SQLiteStore(path, busy_timeout=0.3)
    try:
        stored = await store.set("k", b"v")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        await store.close()
    assert (stored, store.stats["errors"]) == (False, 1)
    assert pauses == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.1])
