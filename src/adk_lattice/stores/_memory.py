"""``MemoryStore``: an in-process LRU of bytes, bounded by entries and bytes, with TTL.

Fixed-window counters (``incr``) are kept in a table of their own with its own bound, so
cache entries can never push a live counter out (which would silently reset a rate limit).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import OrderedDict
from typing import Any

from cachetools import TLRUCache

from ._base import _MAKE_TWIN, COUNTER_MAX, COUNTER_MIN, Store, VectorRow, VectorRows, logger

# Per-entry bookkeeping of a dict slot, counted against max_bytes with the key and value.
_ENTRY_OVERHEAD = 64


class _Entries(TLRUCache[str, tuple[bytes, float | None]]):
    """cachetools' time-aware LRU that counts what it evicts for room."""

    evicted = 0

    def popitem(self) -> tuple[str, tuple[bytes, float | None]]:
        item = super().popitem()
        self.evicted += 1
        return item


def _ttu(_key: str, value: tuple[bytes, float | None], now: float) -> float:
    ttl = value[1]
    return now + ttl if ttl is not None else math.inf


class MemoryStore(Store):
    """A process-local store: least recently used entries go first, expired ones never hit.

    Built on ``cachetools.TLRUCache`` (per-entry expiry plus LRU order). The byte bound
    counts each value plus a fixed per-entry overhead; the entry bound is enforced after each
    write. A lock makes every operation atomic, so concurrent tasks (and threads running
    sync tools) can share one instance.

    Args:
        max_entries: most entries kept.
        max_bytes: most bytes kept (values + per-entry overhead); a single larger value is
            refused (``set`` returns False, counted as ``too_large``).
        max_vectors: most vector rows kept across every space (``vector_add``); past it
            the oldest rows of any space go first.
        max_counters: most live counters kept (``incr``). Expired counters are dropped
            first; when every slot holds a live window, ``incr`` of a new key returns None
            (counted as ``counters_full``, logged once) rather than evicting a live window,
            so a rate limit applies its ``on_store_error`` instead of silently resetting a
            user's count. Keys already counted go on counting.
        name: the name used in logs and counters.

    Example::

        store = MemoryStore(max_entries=1000, max_bytes=16 * 2**20)
        await store.set("k", b"v", ttl=60)
    """

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        max_bytes: int = 64 * 2**20,
        max_counters: int = 100_000,
        max_vectors: int = 100_000,
        name: str = "memory",
    ) -> None:
        super().__init__(name=name)
        if max_entries < 1 or max_bytes < 1 or max_counters < 1:
            raise ValueError("max_entries, max_bytes and max_counters must be at least 1")
        if max_vectors < 1:
            raise ValueError("max_vectors must be at least 1")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries = _Entries(
            maxsize=max_bytes, ttu=_ttu, timer=time.monotonic, getsizeof=self._sizeof
        )
        self.max_counters = max_counters
        # key -> (count, monotonic expiry); insertion order is window start order.
        self._counters: dict[str, tuple[int, float]] = {}
        self._counters_full = False
        self._lock = threading.Lock()
        self._stats["too_large"] = 0
        self._stats["evictions"] = 0
        self._stats["counters_full"] = 0
        self.max_vectors = max_vectors
        # space -> (version, member -> row); rows in insertion order (oldest first).
        self._spaces: dict[str, tuple[int, dict[str, VectorRow]]] = {}
        # Every row of every space, oldest first, for the store-wide bound.
        self._vector_order: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._versions = itertools.count(1)
        self._stats["vector_evictions"] = 0

    @staticmethod
    def _sizeof(value: Any) -> int:
        return len(value[0]) + _ENTRY_OVERHEAD

    def __len__(self) -> int:
        with self._lock:
            self._entries.expire()
            return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """Bytes held now, as counted against ``max_bytes``."""
        with self._lock:
            self._entries.expire()
            return int(self._entries.currsize)

    async def _get(self, key: str) -> bytes | None:
        with self._lock:
            entry = self._entries.get(key)
        return entry[0] if entry is not None else None

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        with self._lock:
            try:
                self._entries[key] = (value, ttl)
            except ValueError:  # larger than max_bytes on its own
                self._stats["too_large"] += 1
                return False
            while len(self._entries) > self.max_entries:
                self._entries.popitem()
            self._stats["evictions"] = self._entries.evicted
        return True

    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        with self._lock:
            now = time.monotonic()
            count, expires = self._counters.get(key, (0, 0.0))
            if expires <= now:
                self._counters.pop(key, None)  # a new window goes to the end of the order
                if amount < 0:  # giving back to a window that is over: nothing to give
                    return 0
                if len(self._counters) >= self.max_counters and not self._purge_counters(now):
                    self._stats["counters_full"] += 1
                    if not self._counters_full:
                        self._counters_full = True
                        logger.warning(
                            "adk_lattice: store %r holds %d live counters; new counters are"
                            " refused until windows expire",
                            self.name,
                            self.max_counters,
                        )
                    return None
                count, expires = 0, now + window
                self._counters_full = False
            if not COUNTER_MIN <= count + amount <= COUNTER_MAX:  # a live counter's sum
                self._stats["out_of_range"] += 1
                return None
            self._counters[key] = (count + amount, expires)
            return count + amount

    def _purge_counters(self, now: float) -> bool:
        """Drop expired counters; True when there is room for one more."""
        for k in [k for k, (_, exp) in self._counters.items() if exp <= now]:
            del self._counters[k]
        return len(self._counters) < self.max_counters

    async def _delete(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    async def _delete_prefix(self, prefix: str) -> int:
        with self._lock:
            doomed = [k for k in self._entries if k.startswith(prefix)]
            for k in doomed:
                self._entries.pop(k, None)
        return len(doomed)

    # -- vectors -----------------------------------------------------------------------------

    async def _vector_add(
        self, space: str, member: str, vector: bytes, meta: bytes, ttl: float | None, limit: int
    ) -> None:
        now = time.time()
        row = VectorRow(member, vector, meta, now + ttl if ttl is not None else None)
        with self._lock:
            _, rows = self._spaces.get(space, (0, {}))
            rows.pop(member, None)  # a replaced row is the newest again
            self._vector_order.pop((space, member), None)
            if len(rows) >= limit:  # full: expired rows make room before live ones go
                expired = [
                    m for m, r in rows.items() if r.expires_at is not None and r.expires_at <= now
                ]
                for old in expired:
                    del rows[old]
                    self._vector_order.pop((space, old), None)
            rows[member] = row
            self._vector_order[(space, member)] = None
            while len(rows) > limit:
                oldest = next(iter(rows))
                del rows[oldest]
                self._vector_order.pop((space, oldest), None)
            self._spaces[space] = (next(self._versions), rows)
            while len(self._vector_order) > self.max_vectors:
                (other, gone), _ = self._vector_order.popitem(last=False)
                self._stats["vector_evictions"] += 1
                _, kept = self._spaces[other]
                kept.pop(gone, None)
                if kept:
                    self._spaces[other] = (next(self._versions), kept)
                else:
                    del self._spaces[other]

    async def _vector_version(self, space: str) -> int:
        with self._lock:
            return self._spaces.get(space, (0, {}))[0]

    async def _vector_rows(self, space: str) -> VectorRows:
        now = time.time()
        with self._lock:
            version, rows = self._spaces.get(space, (0, {}))
            live = tuple(r for r in rows.values() if r.expires_at is None or r.expires_at > now)
        return VectorRows(version, live)

    async def _vector_remove(self, space: str, member: str) -> None:
        with self._lock:
            _, rows = self._spaces.get(space, (0, {}))
            if rows.pop(member, None) is not None:
                self._vector_order.pop((space, member), None)
                if rows:
                    self._spaces[space] = (next(self._versions), rows)
                else:
                    del self._spaces[space]

    async def _close(self) -> None:
        with self._lock:
            self._entries.clear()
            self._counters.clear()
            self._spaces.clear()
            self._vector_order.clear()


# A shadow handler's store calls go to an in-memory twin of the store (see Store._twin).
_MAKE_TWIN.append(lambda name: MemoryStore(name=name))
