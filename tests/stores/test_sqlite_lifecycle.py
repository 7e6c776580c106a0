"""SQLiteStore's lifecycle: counters from the start, a clean file after close, writes that
are cancelled midway leave the store usable."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from adk_lattice.stores import SQLiteStore


def test_a_new_store_reports_evictions_from_the_start(tmp_path: Path) -> None:
    """A new store's counters include evictions at zero, before any write."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    assert store.name == "sqlite"
    assert "evictions" in store.stats and store.stats["evictions"] == 0


async def test_close_releases_the_file_leaving_no_write_ahead_log(tmp_path: Path) -> None:
    """After close() the database is one file again: its write-ahead log is merged and gone."""
    path = tmp_path / "c.sqlite3"
    store = SQLiteStore(path)
    wal = Path(f"{path}-wal")
    await store.set("k", b"v")
    assert await asyncio.to_thread(wal.exists)
    await store.close()
    assert not await asyncio.to_thread(wal.exists)
    reopened = SQLiteStore(path)
    assert await reopened.get("k") == b"v"
    await reopened.close()


async def _cancel_midway(make: object, steps: int) -> None:
    task = asyncio.ensure_future(make)  # type: ignore[call-overload]
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_writes_cancelled_midway_leave_the_store_usable(tmp_path: Path) -> None:
    """Sets and increments cancelled at any point roll back cleanly: later ones still work."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    await store.set("warm", b"up")
    for steps in range(24):
        await _cancel_midway(store.set(f"k{steps}", b"v" * 64), steps)
        await _cancel_midway(store.incr("n", 60), steps)
        assert await asyncio.wait_for(store.set("probe", b"ok"), 5)
        assert await asyncio.wait_for(store.incr("probe", 60), 5) is not None
    assert store.stats["errors"] == 0
    await store.close()
