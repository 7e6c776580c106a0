"""SQLiteStore's settings: bounds and timeouts checked at construction, the defaults, and
how long it waits for another process holding the file's write lock, opening or writing."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_lattice.stores import SQLiteStore


def test_a_default_store_keeps_100k_entries_and_256_mib() -> None:
    """Without bounds a store keeps at most 100,000 entries and 256 MiB of values."""
    store = SQLiteStore("unused.sqlite3")
    assert (store.max_entries, store.max_bytes) == (100_000, 256 * 2**20)


@pytest.mark.parametrize("bounds", [{"max_entries": 0}, {"max_bytes": 0}])
def test_a_bound_under_one_is_refused_with_the_rule(bounds: dict[str, int]) -> None:
    """A max_entries or a max_bytes of 0 is refused at construction, saying what is allowed."""
    with pytest.raises(ValueError, match=r"^max_entries and max_bytes must be at least 1$"):
        SQLiteStore("unused.sqlite3", **bounds)


async def test_bounds_of_one_keep_one_entry_of_one_byte(tmp_path: Path) -> None:
    """The smallest bounds, one entry of one byte, are allowed and hold that entry."""
    store = SQLiteStore(tmp_path / "c.sqlite3", max_entries=1, max_bytes=1)
    assert await store.set("k", b"x")
    assert await store.get("k") == b"x"
    await store.close()


def test_a_negative_busy_timeout_is_refused_with_the_rule() -> None:
    """A busy_timeout below zero is refused at construction, saying what is allowed."""
    with pytest.raises(ValueError, match=r"^busy_timeout must be >= 0$"):
        SQLiteStore("unused.sqlite3", busy_timeout=-1)


@pytest.fixture
def made(tmp_path: Path) -> Path:
    """A store file another store has created (WAL mode, its tables) and closed."""
    path = tmp_path / "c.sqlite3"

    async def create() -> None:
        store = SQLiteStore(path)
        await store.set("made", b"1")
        await store.close()

    asyncio.run(create())
    return path


@pytest.fixture
def holder(made: Path) -> Iterator[sqlite3.Connection]:
    """Another connection to the file, holding its write lock until the test releases it."""
    conn = sqlite3.connect(made, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


def _release_after(holder: sqlite3.Connection, seconds: float) -> None:
    asyncio.get_running_loop().call_later(seconds, holder.execute, "ROLLBACK")


async def test_a_write_waits_out_a_lock_held_within_busy_timeout(
    made: Path, holder: sqlite3.Connection
) -> None:
    """A write waits while another process holds the lock shorter than busy_timeout."""
    holder.execute("ROLLBACK")
    store = SQLiteStore(made, busy_timeout=5)
    assert await store.get("made") == b"1"
    holder.execute("BEGIN IMMEDIATE")
    _release_after(holder, 0.3)
    assert await store.set("k", b"v")
    assert store.stats["errors"] == 0
    await store.close()


async def test_opening_retries_while_another_process_briefly_holds_the_lock(
    made: Path, holder: sqlite3.Connection
) -> None:
    """With no busy wait, opening a file locked for a moment retries and then succeeds."""
    store = SQLiteStore(made, busy_timeout=0)
    _release_after(holder, 0.03)
    assert await store.set("k", b"v")
    assert (store.stats["errors"], await store.get("k")) == (0, b"v")
    await store.close()


async def test_opening_gives_up_after_a_tenth_of_a_second_with_a_short_busy_timeout(
    made: Path, holder: sqlite3.Connection
) -> None:
    """With a busy_timeout under 0.1 s, opening a locked file fails (a counted miss) within
    about 0.1 s, long before a lock released 0.2 s later; then it opens."""
    store = SQLiteStore(made, busy_timeout=0.001)
    _release_after(holder, 0.2)
    assert await asyncio.wait_for(store.set("k", b"v"), 5) is False
    assert store.stats["errors"] == 1
    await asyncio.sleep(0.25)
    assert await store.set("k", b"v")
    await store.close()


async def test_a_file_holding_another_programs_table_is_a_prompt_miss_left_intact(
    tmp_path: Path,
) -> None:
    """A database whose 'entries' table is another program's fails at once (a counted miss,
    not a wait of busy_timeout), and that program's table is left as it was."""
    path = tmp_path / "other.sqlite3"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE entries (key TEXT, note TEXT)")
    other.execute("INSERT INTO entries VALUES ('a', 'theirs')")
    store = SQLiteStore(path)
    assert await asyncio.wait_for(store.set("k", b"v"), 2.5) is False
    assert store.stats["errors"] == 1
    assert other.execute("SELECT * FROM entries").fetchall() == [("a", "theirs")]
    other.close()
    await store.close()
