"""RedisStore's settings: a hung server costs one timeout, failures pause it, bad clients and
namespaces are refused with the rule."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as redis_asyncio

from adk_lattice.stores import RedisStore
from tests._redis import RedisServer

pytestmark = pytest.mark.redis


@pytest.fixture
async def silent_port() -> AsyncIterator[int]:
    """A loopback port that accepts connections and reads, but never answers."""

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(4096):
            pass
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    yield int(server.sockets[0].getsockname()[1])
    server.close()


async def test_a_server_that_never_answers_costs_one_timeout_then_a_miss(silent_port: int) -> None:
    """A hung Redis is a counted miss after socket_timeout, not a request that waits forever."""
    store = RedisStore(f"redis://127.0.0.1:{silent_port}/0", socket_timeout=0.2)
    assert await asyncio.wait_for(store.get("k"), 5) is None
    assert (store.stats["errors"], store.healthy) == (1, False)
    await store.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_by_default_a_failed_store_pauses_for_one_second() -> None:
    """With default settings, calls after a failure are skipped for one second, then sent."""
    store = RedisStore(f"redis://127.0.0.1:{_closed_port()}/0")
    await store.get("k")
    await store.get("k")
    assert (store.stats["errors"], store.stats["skipped"]) == (1, 1)
    await asyncio.sleep(1.05)
    await store.get("k")
    assert (store.stats["errors"], store.stats["skipped"]) == (2, 1)
    await store.close()


def test_a_default_store_is_named_redis_and_names_its_namespace() -> None:
    """A RedisStore is named redis in logs and counters unless named, and keeps its namespace."""
    assert RedisStore(namespace="billing").name == "redis"
    assert RedisStore(namespace="billing", name="shared").name == "shared"
    assert RedisStore(namespace="billing").namespace == "billing"


@pytest.mark.parametrize("namespace", ["", "a:b", "a#b", "a~b"])
def test_a_bad_namespace_is_refused_with_the_rule(namespace: str) -> None:
    """An empty namespace, or one holding ':', '#' or '~', is refused saying what is allowed."""
    rule = "namespace must be a non-empty string without ':', '#' or '~'"
    with pytest.raises(ValueError, match=f"^{rule}$"):
        RedisStore(namespace=namespace)


async def test_a_client_decoding_responses_is_refused(redis_server: RedisServer) -> None:
    """A client that decodes replies to text is refused: the store holds bytes."""
    client = redis_asyncio.Redis.from_url(redis_server.url, decode_responses=True)
    rule = "RedisStore stores bytes: give it a client without decode_responses"
    with pytest.raises(ValueError, match=f"^{rule}$"):
        RedisStore(client=client)
    await client.aclose()


async def test_a_given_client_is_used_and_left_open(redis_server: RedisServer) -> None:
    """A store made on an existing client writes through it and does not close it."""
    client = redis_asyncio.Redis.from_url(redis_server.url)
    store = RedisStore(client=client, namespace="given")
    assert await store.set("k", b"v")
    await store.close()
    assert await client.get("given:k") == b"v"
    await client.aclose()


async def test_a_server_that_never_accepts_costs_one_connect_timeout() -> None:
    """A Redis whose listen queue is full is a counted miss after connect_timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = int(listener.getsockname()[1])
    queued = socket.create_connection(("127.0.0.1", port), timeout=1)  # fills the queue
    try:
        store = RedisStore(f"redis://127.0.0.1:{port}/0", connect_timeout=0.2)
        assert await asyncio.wait_for(store.get("k"), 5) is None
        assert store.stats["errors"] == 1
        await store.close()
    finally:
        queued.close()
        listener.close()


def test_the_default_timeouts_are_half_a_second() -> None:
    """By default a RedisStore waits half a second to connect and half a second for a reply."""
    kwargs = RedisStore(namespace="defaults").client.connection_pool.connection_kwargs
    assert (kwargs["socket_connect_timeout"], kwargs["socket_timeout"]) == (0.5, 0.5)


async def test_delete_prefix_removes_keys_in_batches_of_scan_count(
    redis_server: RedisServer,
) -> None:
    """delete_prefix over more keys than one scan step removes and counts them all."""
    store = RedisStore(redis_server.url, namespace="batches", scan_count=2)
    for i in range(5):
        await store.set(f"p:{i}", b"v")
    await store.set("q:0", b"v")
    assert await store.delete_prefix("p:") == 5
    assert [await store.get(f"p:{i}") for i in range(5)] == [None] * 5
    assert await store.get("q:0") == b"v"
    await store.close()


def test_without_the_redis_package_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making a RedisStore without the redis package says which extra to install."""
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ImportError) as info:
        RedisStore(namespace="missing")
    assert str(info.value) == (
        "RedisStore needs the 'redis' package; install it with: pip install 'adk-lattice[redis]'"
    )
