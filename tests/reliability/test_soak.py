"""A small version of the concurrency soak (``make soak`` runs the full one)."""

from __future__ import annotations

import itertools

import pytest
from benchmarks.soak import soak

from adk_lattice.cache import RedisStore
from tests._redis import RedisServer

_ns = itertools.count()


async def test_a_small_soak_keeps_every_invariant() -> None:
    """40 concurrent sessions over 8 users with faults: every soak invariant holds."""
    report = await soak(40, 8)
    assert report.broken() == [], report.table()
    assert report.response_hits and report.tool_hits and report.handler_errors, report.table()


@pytest.mark.redis
async def test_a_small_soak_on_redis_keeps_every_invariant(redis_server: RedisServer) -> None:
    """The same soak with the caches on a real Redis: every invariant holds."""
    store = RedisStore(redis_server.url, namespace=f"soak{next(_ns)}")
    report = await soak(40, 8, store=store)
    await store.close()
    assert report.broken() == [], report.table()
