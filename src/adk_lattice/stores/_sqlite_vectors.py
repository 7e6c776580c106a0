"""The vector spaces of ``SQLiteStore`` (the semantic cache): tables, bounds, versions.

A mixin of :class:`SQLiteStore`, kept apart so each module reads in one sitting. Rows are
keyed by space and member; one clock numbers every change, so a row's sequence number
orders a space oldest first and a space's version is the number of its last change.
Triggers keep the row count, so the store-wide bound holds without scans.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from ._base import VectorRow, VectorRows, read_row

if TYPE_CHECKING:
    import aiosqlite

VECTOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    space TEXT NOT NULL,
    member TEXT NOT NULL,
    vector BLOB NOT NULL,
    meta BLOB NOT NULL,
    expires_at REAL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (space, member)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_space_seq ON vectors (space, seq);
CREATE INDEX IF NOT EXISTS vectors_seq ON vectors (seq);
CREATE INDEX IF NOT EXISTS vectors_expires ON vectors (expires_at);
CREATE TABLE IF NOT EXISTS vector_spaces (space TEXT PRIMARY KEY, version INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_clock (
    id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER, rows INTEGER);
INSERT OR IGNORE INTO vector_clock VALUES (0, 0, 0);
CREATE TRIGGER IF NOT EXISTS vectors_ins AFTER INSERT ON vectors BEGIN
    UPDATE vector_clock SET rows = rows + 1 WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS vectors_del AFTER DELETE ON vectors BEGIN
    UPDATE vector_clock SET rows = rows - 1 WHERE id = 0; END;
"""

_VECTOR_UPSERT = """
INSERT INTO vectors (space, member, vector, meta, expires_at, seq) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (space, member) DO UPDATE SET vector = excluded.vector, meta = excluded.meta,
    expires_at = excluded.expires_at, seq = excluded.seq
"""
# Past the space's limit, every row older than the limit-th newest goes.
_VECTOR_TRIM = """
DELETE FROM vectors WHERE space = :space AND seq <= (
    SELECT seq FROM vectors WHERE space = :space ORDER BY seq DESC LIMIT 1 OFFSET :limit)
"""

#: Expired rows of other spaces removed on each write.
_PURGE_BATCH = 32


class SQLiteVectors:
    """The vector methods of :class:`SQLiteStore` (``vector_add``, ``vector_rows``...)."""

    max_vectors: int
    _stats: Counter[str]

    if TYPE_CHECKING:

        def _use(self) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]: ...

        def _write(self) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]: ...

    async def _vector_add(
        self, space: str, member: str, vector: bytes, meta: bytes, ttl: float | None, limit: int
    ) -> None:
        now = time.time()
        expires = now + ttl if ttl is not None else None
        async with self._write() as db:
            seq = await self._tick(db)
            await db.execute(_VECTOR_UPSERT, (space, member, vector, meta, expires, seq))
            await db.execute(
                "DELETE FROM vectors WHERE space = ? AND expires_at <= ?", (space, now)
            )
            await db.execute(_VECTOR_TRIM, {"space": space, "limit": limit})
            touched = {space}
            # A few expired rows of other spaces go on every write (readers skip them anyway).
            cur = await db.execute(
                "DELETE FROM vectors WHERE (space, member) IN (SELECT space, member FROM vectors"
                " WHERE expires_at <= ? LIMIT ?) RETURNING space",
                (now, _PURGE_BATCH),
            )
            await cur.fetchall()
            async with db.execute("SELECT rows FROM vector_clock WHERE id = 0") as cur:
                row: Any = await cur.fetchone()
            excess = int(row[0]) - self.max_vectors
            if excess > 0:
                cur = await db.execute(
                    "DELETE FROM vectors WHERE (space, member) IN (SELECT space, member FROM"
                    " vectors ORDER BY seq LIMIT ?) RETURNING space",
                    (excess,),
                )
                gone = list(await cur.fetchall())
                self._stats["vector_evictions"] += len(gone)
                touched |= {g[0] for g in gone}
            for name in touched:
                await db.execute(
                    "INSERT INTO vector_spaces (space, version) VALUES (?, ?)"
                    " ON CONFLICT (space) DO UPDATE SET version = excluded.version",
                    (name, seq),
                )

    @staticmethod
    async def _tick(db: aiosqlite.Connection) -> int:
        async with db.execute("UPDATE vector_clock SET n = n + 1 WHERE id = 0 RETURNING n") as cur:
            row: Any = await cur.fetchone()
        return int(row[0])

    async def _vector_version(self, space: str) -> int:
        async with self._use() as db:
            sql = "SELECT version FROM vector_spaces WHERE space = ?"
            async with db.execute(sql, (space,)) as cur:
                row = await cur.fetchone()
        return int(row[0]) if row is not None else 0

    async def _vector_rows(self, space: str) -> VectorRows:
        async with self._use() as db:
            # The version first: a write landing in between makes the next read load again.
            async with db.execute(
                "SELECT version FROM vector_spaces WHERE space = ?", (space,)
            ) as cur:
                row = await cur.fetchone()
            version = int(row[0]) if row is not None else 0
            async with db.execute(
                "SELECT member, vector, meta, expires_at FROM vectors WHERE space = ?"
                " AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq",
                (space, time.time()),
            ) as cur:
                found = await cur.fetchall()
        rows: list[VectorRow] = []
        for found_row in found:
            kept = read_row(*found_row)
            if kept is None:  # a row another writer left that does not read: skipped
                self._stats["vector_corrupt"] += 1
            else:
                rows.append(kept)
        return VectorRows(version, tuple(rows))

    async def _vector_remove(self, space: str, member: str) -> None:
        async with self._write() as db:
            cur = await db.execute(
                "DELETE FROM vectors WHERE space = ? AND member = ?", (space, member)
            )
            if cur.rowcount > 0:
                seq = await self._tick(db)
                await db.execute(
                    "UPDATE vector_spaces SET version = ? WHERE space = ?", (seq, space)
                )
