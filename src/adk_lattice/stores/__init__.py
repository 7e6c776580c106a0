"""Async key-value stores shared by the caches (and rate limits): memory, SQLite, Redis.

Every store has the same interface (:class:`Store`): ``get``, ``set`` with a TTL, ``incr``
(fixed-window counters), ``delete``, ``delete_prefix``, ``close`` and live ``stats``
counters. A failing backend is a miss, logged once per outage and counted, never an
exception in the run.
"""

from ._base import Store, StoreUnavailable, VectorRow, VectorRows
from ._memory import MemoryStore
from ._redis import RedisStore
from ._sqlite import SQLiteStore

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "Store",
    "StoreUnavailable",
    "VectorRow",
    "VectorRows",
]
