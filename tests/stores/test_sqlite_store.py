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
