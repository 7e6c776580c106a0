"""SQLiteStore: persistent, bounded, shared by several processes on one file."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import textwrap
from pathlib import Path

from adk_lattice.stores import SQLiteStore

_SRC = str(Path(__file__).resolve().parents[2] / "src")

_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from adk_lattice.stores import SQLiteStore

    async def main(path, me, n):
        store = SQLiteStore(path)
        for i in range(n):
            assert await store.set(f"{me}:{i}", f"{me}-{i}".encode())
            await store.get(f"{me}:{i}")
        await store.close()
        print(dict(store.stats)["errors"])

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)

_COUNTER = textwrap.dedent(
    """
    import asyncio, json, sys
    from adk_lattice.stores import SQLiteStore

    async def main(path, n):
        store = SQLiteStore(path)
        counts = [await store.incr("shared", 60) for _ in range(n)]
        await store.close()
        print(json.dumps(counts))

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


async def test_entries_survive_a_new_store_on_the_same_file(tmp_path: Path) -> None:
    """What one store instance wrote, a later one on the same file reads."""
    first = SQLiteStore(tmp_path / "c.sqlite3")
    await first.set("k", b"v")
    await first.close()
    second = SQLiteStore(tmp_path / "c.sqlite3")
    assert await second.get("k") == b"v"
    await second.close()


async def test_entry_bound_evicts_the_least_recently_used(tmp_path: Path) -> None:
    """Past max_entries the least recently read entry goes first."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=2, touch_interval=0)
    await store.set("a", b"1")
    await store.set("b", b"2")
    await store.get("a")
    await store.set("c", b"3")
    assert [await store.get(k) for k in "abc"] == [b"1", None, b"3"]
    await store.close()


async def test_byte_bound_keeps_values_under_max_bytes(tmp_path: Path) -> None:
    """Past max_bytes old entries are evicted; the newest stays."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_bytes=1000)
    for i in range(10):
        await store.set(f"k{i}", b"x" * 300)
    kept = [k for k in range(10) if await store.get(f"k{k}") is not None]
    assert 9 in kept
    assert len(kept) * 300 <= 1000
    await store.close()


async def test_two_processes_share_one_file(tmp_path: Path) -> None:
    """Two processes writing one file at once lose nothing and see each other's entries."""
    path = str(tmp_path / "shared.sqlite3")
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _WORKER,
            path,
            me,
            "200",
            stdout=asyncio.subprocess.PIPE,
            env={"PYTHONPATH": _SRC},
        )
        for me in ("p1", "p2")
    ]
    outs = [(await p.communicate())[0].decode().strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["0", "0"]
    store = SQLiteStore(path)
    assert await store.get("p1:199") == b"p1-199"
    assert await store.get("p2:0") == b"p2-0"
    await store.close()


async def test_a_file_that_is_not_a_database_is_a_counted_miss(tmp_path: Path) -> None:
    """A corrupt file makes gets miss and sets fail, counted, without raising."""
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    store = SQLiteStore(path)
    assert await store.get("k") is None
    assert not await store.set("k", b"v")
    assert store.stats["errors"] == 2
    await store.close()


async def test_two_processes_count_one_key_without_losing_an_increment(tmp_path: Path) -> None:
    """Two processes incrementing one key on one file get every count 1..200 exactly once."""
    path = str(tmp_path / "counters.sqlite3")
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _COUNTER,
            path,
            "100",
            stdout=asyncio.subprocess.PIPE,
            env={"PYTHONPATH": _SRC},
        )
        for _ in range(2)
    ]
    outs = [(await p.communicate())[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert sorted(json.loads(outs[0]) + json.loads(outs[1])) == list(range(1, 201))


async def test_incr_on_a_locked_database_is_a_counted_none(tmp_path: Path) -> None:
    """While another connection holds the write lock, incr returns None, counted."""
    path = tmp_path / "locked.sqlite3"
    store = SQLiteStore(path, busy_timeout=0)
    assert await store.incr("k", 60) == 1
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert await store.incr("k", 60) is None
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.stats["errors"] == 1
    assert await store.incr("k", 60) == 2
    await store.close()


async def test_incr_on_a_file_that_is_not_a_database_is_a_counted_none(tmp_path: Path) -> None:
    """A corrupt file makes incr return None, counted, without raising."""
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    store = SQLiteStore(path)
    assert await store.incr("k", 60) is None
    assert store.stats["errors"] == 1
    await store.close()


async def test_exactly_max_entries_and_max_bytes_are_kept(tmp_path: Path) -> None:
    """A store filled to exactly its entry and byte bounds evicts nothing."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=2, max_bytes=1_000)
    await store.set("a", b"x" * 500)
    await store.set("b", b"y" * 500)
    assert [await store.get(k) for k in "ab"] == [b"x" * 500, b"y" * 500]
    assert store.stats["evictions"] == 0
    await store.close()


async def test_every_eviction_is_counted(tmp_path: Path) -> None:
    """Each entry evicted for room adds one to the evictions counter."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=1)
    for key in "abc":
        await store.set(key, b"v")
    assert store.stats["evictions"] == 2
    await store.close()


async def test_a_value_of_exactly_max_bytes_is_stored_and_a_larger_one_refused(
    tmp_path: Path,
) -> None:
    """A value as large as max_bytes fits; one byte more is refused (set returns False)."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_bytes=100)
    assert await store.set("fits", b"x" * 100) is True
    assert await store.set("big", b"x" * 101) is False
    assert (await store.get("fits"), await store.get("big")) == (b"x" * 100, None)
    await store.close()


async def test_a_value_with_a_ttl_is_read_until_it_expires(tmp_path: Path) -> None:
    """An entry set with a ttl is returned within it and gone after it."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    await store.set("k", b"v", ttl=0.2)
    assert await store.get("k") == b"v"
    await asyncio.sleep(0.3)
    assert await store.get("k") is None
    await store.close()


async def test_expired_entries_go_before_live_ones_are_evicted(tmp_path: Path) -> None:
    """Making room drops expired entries first, so the oldest live entry stays."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=2)
    await store.set("old", b"1")
    await store.set("brief", b"2", ttl=0.1)
    await asyncio.sleep(0.2)
    await store.set("new", b"3")
    assert (await store.get("old"), await store.get("new")) == (b"1", b"3")
    await store.close()


async def test_delete_prefix_reports_how_many_it_removed(tmp_path: Path) -> None:
    """delete_prefix returns the number of entries removed: 2, then 0."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    for key in ("t:1", "t:2", "u:1"):
        await store.set(key, b"v")
    assert await store.delete_prefix("t:") == 2
    assert await store.delete_prefix("t:") == 0
    assert await store.get("u:1") == b"v"
    await store.close()


async def test_a_write_past_the_byte_bound_keeps_the_value_it_stored(tmp_path: Path) -> None:
    """A set that crosses max_bytes returns True and its value stays: older ones go."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_bytes=1000)
    for i in range(4):
        assert await store.set(f"k{i}", b"x" * 300)
    assert await store.get("k3") == b"x" * 300
    assert [await store.get(f"k{i}") for i in range(3)] == [None] * 3
    assert store.stats["evictions"] == 3
    await store.close()


async def test_reading_an_expired_entry_is_a_plain_miss_that_removes_its_row(
    tmp_path: Path,
) -> None:
    """An expired entry read is a counted miss (no error) and its row leaves the file."""
    path = tmp_path / "c.sqlite3"
    store = SQLiteStore(path)
    await store.set("k", b"v", ttl=0.05)
    await asyncio.sleep(0.1)
    assert await store.get("k") is None
    assert (store.stats["misses"], store.stats["errors"]) == (1, 0)
    reader = sqlite3.connect(path)
    assert reader.execute("SELECT count(*) FROM entries").fetchone() == (0,)
    reader.close()
    await store.close()


async def test_past_the_entry_bound_at_exactly_max_bytes_only_the_oldest_goes(
    tmp_path: Path,
) -> None:
    """A write one entry past max_entries that fills max_bytes exactly evicts one entry."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=2, max_bytes=3)
    for key in "abc":
        await store.set(key, b"x")
    assert [await store.get(k) for k in "abc"] == [None, b"x", b"x"]
    assert store.stats["evictions"] == 1
    await store.close()
