"""``SQLiteStore``: a persistent store in one file, shared safely by several processes.

Runs on ``aiosqlite`` (already installed with google-adk): one connection on its own
thread, so SQLite's blocking calls, and its busy-waits while another process holds the
write lock, never stall the event loop, with no thread plumbing of our own.
Several processes may use one file: the database runs in WAL mode (readers never block
the writer) with a busy timeout, and every write is one short transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import AsyncIterator
from typing import Any

import aiosqlite

from ._base import Store
from ._sqlite_vectors import VECTOR_SCHEMA, SQLiteVectors

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    expires_at REAL,
    accessed_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_accessed ON entries (accessed_at);
CREATE INDEX IF NOT EXISTS entries_expires ON entries (expires_at);
CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER, bytes INTEGER);
INSERT OR IGNORE INTO totals VALUES (0, 0, 0);
CREATE TRIGGER IF NOT EXISTS entries_ins AFTER INSERT ON entries BEGIN
    UPDATE totals SET n = n + 1, bytes = bytes + NEW.size WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS entries_del AFTER DELETE ON entries BEGIN
    UPDATE totals SET n = n - 1, bytes = bytes - OLD.size WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS entries_upd AFTER UPDATE OF size ON entries BEGIN
    UPDATE totals SET bytes = bytes - OLD.size + NEW.size WHERE id = 0; END;
CREATE TABLE IF NOT EXISTS counters (
    key TEXT PRIMARY KEY,
    n INTEGER NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_expires ON counters (expires_at);
"""


# One statement: a live counter goes up by the amount, an expired or absent one starts a
# new window. A live counter the amount would carry past a signed 64-bit integer is left as
# it is and no row is returned (SQLite would turn the sum into an inexact REAL).
_INCR = """
INSERT INTO counters (key, n, expires_at) VALUES (:key, :amount, :expires)
ON CONFLICT (key) DO UPDATE SET
    n = CASE WHEN counters.expires_at <= :now THEN :amount ELSE counters.n + :amount END,
    expires_at = CASE WHEN counters.expires_at <= :now THEN :expires ELSE counters.expires_at END
WHERE counters.expires_at <= :now OR counters.n <= 9223372036854775807 - :amount
RETURNING n
"""

# Giving back (a negative amount) only ever touches a live counter.
_GIVE_BACK = (
    "UPDATE counters SET n = n + :amount WHERE key = :key AND expires_at > :now RETURNING n"
)
# Whether the live counter a give-back found no row for exists (then the sum was refused).
_GIVE_BACK_REFUSED = (
    "SELECT 1 FROM counters WHERE key = :key AND expires_at > :now"
    " AND n < -9223372036854775808 - :amount"
)

# Eviction deletes the least recently used rows in batches of at least this many.
_EVICT_BATCH = 32


class SQLiteStore(SQLiteVectors, Store):
    """A store in an SQLite file: TTL, an entry and byte bound, least recently used evicted.

    A read refreshes an entry's recency at most every ``touch_interval`` seconds, so
    repeated hits on a hot entry do not write.
    Totals are kept by triggers in the same transaction as each write, so the bound holds
    across processes without scanning the table. Expired rows are never returned and are
    removed when met or when room is needed. Counters (``incr``) are a table of their own,
    never evicted by entries; expired counters are removed as counting goes on.

    Args:
        path: the database file (created with its directory if missing).
        max_entries: most entries kept.
        max_bytes: most value bytes kept.
        max_vectors: most vector rows kept across every space (``vector_add``); past it
            the oldest rows of any space go first.
        busy_timeout: seconds to wait for another process's write lock before failing
            (a failure is a miss, like any store failure).
        touch_interval: seconds between recency updates of one entry on reads (the
            granularity of least-recently-used order); 0 updates on every read.
        name: the name used in logs and counters.

    Example::

        store = SQLiteStore("var/cache.sqlite3", max_bytes=256 * 2**20)
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_entries: int = 100_000,
        max_bytes: int = 256 * 2**20,
        max_vectors: int = 1_000_000,
        busy_timeout: float = 5.0,
        touch_interval: float = 1.0,
        name: str = "sqlite",
    ) -> None:
        super().__init__(name=name)
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be at least 1")
        if max_vectors < 1:
            raise ValueError("max_vectors must be at least 1")
        if busy_timeout < 0:
            raise ValueError("busy_timeout must be >= 0")
        self.path = os.fspath(path)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_vectors = max_vectors
        self._busy_ms = int(busy_timeout * 1000)
        self._touch_interval = float(touch_interval)
        self._db: aiosqlite.Connection | None = None
        self._opening: asyncio.Lock | None = None
        # One connection serves every task: statements of two tasks must not interleave
        # (a delete run inside another task's transaction would roll back with it).
        self._busy: asyncio.Lock | None = None
        self._stats["evictions"] = 0
        self._stats["vector_evictions"] = 0

    async def _conn(self) -> aiosqlite.Connection:
        if self._db is not None:
            return self._db
        if self._opening is None:
            self._opening = asyncio.Lock()
            self._busy = asyncio.Lock()
        async with self._opening:
            if self._db is None:
                await asyncio.to_thread(_make_parent, self.path)
                self._db = await self._open_retrying()
        return self._db

    async def _open_retrying(self) -> aiosqlite.Connection:
        """Open and set up the file, retrying while another process sets it up too.

        SQLite answers "database is locked" without waiting on its busy timeout when two
        processes switch a new file to WAL at the same moment; retrying is the cure.
        """
        deadline = time.monotonic() + max(self._busy_ms / 1000, 0.1)
        pause = 0.005
        while True:
            db = await aiosqlite.connect(self.path, isolation_level=None)
            try:
                # busy_timeout first: switching to WAL needs a lock another process may hold.
                await db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
                await db.execute("PRAGMA journal_mode = WAL")
                await db.execute("PRAGMA synchronous = NORMAL")
                await db.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}{VECTOR_SCHEMA}COMMIT;")
            except sqlite3.OperationalError as exc:
                await db.close()
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() + pause > deadline:
                    raise
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.1)
                continue
            except BaseException:
                await db.close()
                raise
            return db

    @contextlib.asynccontextmanager
    async def _use(self) -> AsyncIterator[aiosqlite.Connection]:
        db = await self._conn()
        assert self._busy is not None
        async with self._busy:
            yield db

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), rolled back on any
        failure or cancellation, one that lands while ``BEGIN`` is still in flight included:
        the connection runs statements in order on its thread, so the rollback runs after
        it, and is a no-op when no transaction is open. Left open, the transaction would
        hold the file's write lock and fail every later write."""
        async with self._use() as db:
            try:
                await db.execute("BEGIN IMMEDIATE")
                yield db
                await db.execute("COMMIT")
            except BaseException:
                await db.rollback()
                raise

    async def _get(self, key: str) -> bytes | None:
        async with self._use() as db:
            now = time.time()
            sql = "SELECT value, expires_at, accessed_at FROM entries WHERE key = ?"
            async with db.execute(sql, (key,)) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            value, expires_at, accessed_at = row
            if expires_at is not None and expires_at <= now:
                sql = "DELETE FROM entries WHERE key = ? AND expires_at <= ?"
                await db.execute(sql, (key, now))
                return None
            if accessed_at <= now - self._touch_interval:  # hot keys' reads stay read-only
                await db.execute("UPDATE entries SET accessed_at = ? WHERE key = ?", (now, key))
        return bytes(value)

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        if len(value) > self.max_bytes:
            return False
        now = time.time()
        expires = now + ttl if ttl is not None else None
        async with self._write() as db:
            await db.execute(
                "INSERT INTO entries (key, value, size, expires_at, accessed_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET"
                " value = excluded.value, size = excluded.size,"
                " expires_at = excluded.expires_at, accessed_at = excluded.accessed_at",
                (key, value, len(value), expires, now),
            )
            await self._make_room(db, now, keep=key)
        return True

    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        now = time.time()
        # IMMEDIATE takes the write lock first, so processes on one file count in turn.
        async with self._write() as db:
            params = {"key": key, "now": now, "expires": now + window, "amount": amount}
            sql = _INCR if amount >= 0 else _GIVE_BACK
            if amount < 0:
                async with db.execute(_GIVE_BACK_REFUSED, params) as cur:
                    refused = await cur.fetchone() is not None
                if refused:
                    self._stats["out_of_range"] += 1
                    return None
            async with db.execute(sql, params) as cur:
                row: Any = await cur.fetchone()
            # Expired counters of other keys go here; the index keeps this a short range.
            await db.execute("DELETE FROM counters WHERE expires_at <= ?", (now,))
        if row is None and amount >= 0:  # the live counter would have left the range
            self._stats["out_of_range"] += 1
            return None
        return int(row[0]) if row is not None else 0

    async def _make_room(self, db: aiosqlite.Connection, now: float, keep: str) -> None:
        """Drop expired entries, then the least recently used, until both bounds hold.

        ``keep``, the entry this write stored, is never evicted (its value fits: ``_set``
        refuses one larger than ``max_bytes``), so a write that crosses the byte bound
        evicts a batch of older entries, never itself.
        """
        n, size = await self._totals(db)
        if n <= self.max_entries and size <= self.max_bytes:
            return
        await db.execute("DELETE FROM entries WHERE expires_at <= ?", (now,))
        n, size = await self._totals(db)
        while n > 0 and (n > self.max_entries or size > self.max_bytes):
            batch = max(n - self.max_entries, _EVICT_BATCH if size > self.max_bytes else 0)
            cur = await db.execute(
                "DELETE FROM entries WHERE key IN"
                " (SELECT key FROM entries WHERE key != ? ORDER BY accessed_at LIMIT ?)",
                (keep, batch),
            )
            self._stats["evictions"] += max(cur.rowcount, 0)
            n, size = await self._totals(db)

    @staticmethod
    async def _totals(db: aiosqlite.Connection) -> tuple[int, int]:
        async with db.execute("SELECT n, bytes FROM totals WHERE id = 0") as cur:
            row: Any = await cur.fetchone()
        return int(row[0]), int(row[1])

    async def _delete(self, key: str) -> None:
        async with self._use() as db:
            await db.execute("DELETE FROM entries WHERE key = ?", (key,))

    async def _delete_prefix(self, prefix: str) -> int:
        # A range on the primary key: code point order is SQLite's binary UTF-8 order.
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        async with self._write() as db:
            # Counted like the other stores: live entries only (expired ones go too, unsaid).
            live = (
                "SELECT COUNT(*) FROM entries WHERE key >= ? AND key < ?"
                " AND (expires_at IS NULL OR expires_at > ?)"
            )
            cur = await db.execute(live, (prefix, upper, time.time()))
            row = await cur.fetchone()
            await db.execute("DELETE FROM entries WHERE key >= ? AND key < ?", (prefix, upper))
        return int(row[0]) if row is not None else 0

    async def _close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await db.close()


def _make_parent(path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
