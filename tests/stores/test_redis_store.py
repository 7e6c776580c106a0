"""RedisStore against a real redis-server: namespaces, outages, recovery."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from adk_lattice.stores import RedisStore
from tests._redis import RedisServer

pytestmark = pytest.mark.redis


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_namespaces_do_not_see_each_other(redis_server: RedisServer) -> None:
    """Two namespaces on one Redis keep separate entries."""
    a = RedisStore(redis_server.url, namespace="ns_a")
    b = RedisStore(redis_server.url, namespace="ns_b")
    await a.set("k", b"from a")
    assert await b.get("k") is None
    await b.set("k", b"from b")
    assert await b.delete_prefix("k") == 1
    assert await a.get("k") == b"from a"
    await a.close()
    await b.close()


async def test_closed_port_is_a_counted_miss() -> None:
    """Connection refused: get misses, set fails, both counted, nothing raised."""
    store = RedisStore(f"redis://127.0.0.1:{_closed_port()}/0", retry_after=0)
    assert await store.get("k") is None
    assert not await store.set("k", b"v")
    assert store.stats["errors"] == 2
    assert not store.healthy
    await store.close()


async def test_after_a_failure_calls_pause_for_retry_after() -> None:
    """Within retry_after of a failure, calls are skipped rather than sent."""
    store = RedisStore(f"redis://127.0.0.1:{_closed_port()}/0", retry_after=60)
    await store.get("k")
    await store.get("k")
    assert (store.stats["errors"], store.stats["skipped"]) == (1, 1)
    await store.close()


async def test_store_resumes_after_redis_restarts(
    redis_factory: Callable[[], RedisServer],
) -> None:
    """Redis stopped: misses; Redis back on the same port: the same store works again."""
    server = redis_factory()
    store = RedisStore(server.url, namespace="restart", retry_after=0)
    assert await store.set("k", b"v")
    server.stop()
    assert await store.get("k") is None
    assert store.stats["errors"] >= 1
    server.start()
    assert await store.set("k", b"again")
    assert await store.get("k") == b"again"
    assert store.healthy
    await store.close()


def test_namespace_with_a_colon_is_refused() -> None:
    """A namespace containing ':' is a clear error."""
    with pytest.raises(ValueError, match="namespace"):
        RedisStore(namespace="a:b")


async def test_namespaces_count_apart(redis_server: RedisServer) -> None:
    """The same counter key in two namespaces has two counts."""
    a = RedisStore(redis_server.url, namespace="cnt_a")
    b = RedisStore(redis_server.url, namespace="cnt_b")
    await a.incr("k", 60)
    assert await b.incr("k", 60) == 1
    await a.close()
    await b.close()


async def test_a_counter_is_stored_under_its_namespace_with_an_expiry(
    redis_server: RedisServer,
) -> None:
    """incr writes {namespace}#{key} and sets its expiry on the first increment."""
    store = RedisStore(redis_server.url, namespace="cnt_layout")
    await store.incr("k", 60)
    assert await store.client.get("cnt_layout#k") == b"1"
    assert 0 < await store.client.pttl("cnt_layout#k") <= 60_000
    await store.close()


async def test_closed_port_incr_is_a_counted_none() -> None:
    """Connection refused: incr returns None, counted as an error, nothing raised."""
    store = RedisStore(f"redis://127.0.0.1:{_closed_port()}/0", retry_after=0)
    assert await store.incr("k", 60) is None
    assert store.stats["errors"] == 1
    await store.close()


def test_namespace_with_a_tilde_is_refused() -> None:
    """A namespace containing '~' is a clear error: "billing~h" would share the rows hash of
    namespace "billing"'s space "h~x"."""
    with pytest.raises(ValueError, match="namespace"):
        RedisStore(namespace="billing~h")


def test_namespace_with_a_hash_is_refused() -> None:
    """A namespace containing '#' (the counter separator) is a clear error."""
    with pytest.raises(ValueError, match="namespace"):
        RedisStore(namespace="a#b")


async def test_the_default_namespace_is_adk_lattice(redis_server: RedisServer) -> None:
    """Without a namespace, keys live under adk_lattice, where operators look for them."""
    store = RedisStore(redis_server.url)
    await store.incr("default-ns-probe", 60)
    assert await store.client.get("adk_lattice#default-ns-probe") == b"1"
    await store.close()
