"""Vector spaces on every store (memory, SQLite, real Redis): rows, bounds, versions, failures."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from adk_lattice.stores import MemoryStore, RedisStore, SQLiteStore, Store
from tests._redis import RedisServer

_ns = itertools.count()


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh store of each kind."""
    made: Store
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(tmp_path / "vectors.sqlite3")
    else:
        server = request.getfixturevalue("redis_server")
        made = RedisStore(server.url, namespace=f"vectors{next(_ns)}")
    yield made
    await made.close()


async def _members(store: Store, space: str) -> list[str]:
    rows = await store.vector_rows(space)
    assert rows is not None
    return [r.member for r in rows.rows]


async def test_rows_come_back_with_their_bytes(store: Store) -> None:
    """A row's vector and metadata come back byte for byte, with no expiry when ttl is None."""
    assert await store.vector_add("s", "m", b"\x00\x01vec", b'{"text":"hi"}', None, 10)
    rows = await store.vector_rows("s")
    assert rows is not None
    assert [(r.member, r.vector, r.meta, r.expires_at) for r in rows.rows] == [
        ("m", b"\x00\x01vec", b'{"text":"hi"}', None)
    ]


async def test_a_space_keeps_at_most_its_limit_oldest_out(store: Store) -> None:
    """Past the limit, the oldest rows of the space go first."""
    for i in range(5):
        await store.vector_add("s", f"m{i}", b"v", b"", 60, 3)
    assert await _members(store, "s") == ["m2", "m3", "m4"]


async def test_adding_a_member_again_replaces_it(store: Store) -> None:
    """The same member added twice is one row, with the newer bytes, now the newest."""
    await store.vector_add("s", "a", b"old", b"", None, 10)
    await store.vector_add("s", "b", b"v", b"", None, 10)
    await store.vector_add("s", "a", b"new", b"", None, 10)
    rows = await store.vector_rows("s")
    assert rows is not None
    assert [(r.member, r.vector) for r in rows.rows] == [("b", b"v"), ("a", b"new")]


async def test_an_expired_row_is_not_returned(store: Store) -> None:
    """A row past its TTL is left out of the rows."""
    await store.vector_add("s", "short", b"v", b"", 0.05, 10)
    await store.vector_add("s", "long", b"v", b"", 60, 10)
    await asyncio.sleep(0.15)
    assert await _members(store, "s") == ["long"]


async def test_spaces_are_apart(store: Store) -> None:
    """Rows of one space are never rows of another, however the names start."""
    await store.vector_add("a", "m", b"v", b"", None, 10)
    await store.vector_add("a~z", "n", b"v", b"", None, 10)
    assert (await _members(store, "a"), await _members(store, "a~z")) == (["m"], ["n"])


async def test_the_version_changes_with_every_write(store: Store) -> None:
    """A space never written is version 0; each add and remove gives it a new version."""
    assert await store.vector_version("s") == 0
    await store.vector_add("s", "m", b"v", b"", None, 10)
    first = await store.vector_version("s")
    await store.vector_add("s", "n", b"v", b"", None, 10)
    second = await store.vector_version("s")
    await store.vector_remove("s", "m")
    third = await store.vector_version("s")
    assert len({0, first, second, third}) == 4
    rows = await store.vector_rows("s")
    assert rows is not None and rows.version == third


async def test_remove_drops_one_row(store: Store) -> None:
    """vector_remove takes one member out and leaves the others."""
    await store.vector_add("s", "a", b"v", b"", None, 10)
    await store.vector_add("s", "b", b"v", b"", None, 10)
    await store.vector_remove("s", "a")
    assert await _members(store, "s") == ["b"]


async def test_vectors_are_a_key_space_of_their_own(store: Store) -> None:
    """delete_prefix and get never see vector rows, and vector rows never see entries."""
    await store.set("sem:k", b"entry")
    await store.vector_add("sem:k", "m", b"v", b"", None, 10)
    assert await store.delete_prefix("sem:") == 1
    assert await _members(store, "sem:k") == ["m"]
    assert await store.get("sem:k") is None


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("", "m", b"v", b"", None, 1), ValueError),
        (("s", "", b"v", b"", None, 1), ValueError),
        (("s", "m", "v", b"", None, 1), TypeError),
        (("s", "m", b"v", b"", 0, 1), ValueError),
        (("s", "m", b"v", b"", None, 0), ValueError),
    ],
)
async def test_bad_input_is_a_clear_error(store: Store, args: tuple, error: type) -> None:  # type: ignore[type-arg]
    """Empty names, text for bytes, a non-positive TTL or a limit under one are refused."""
    with pytest.raises(error):
        await store.vector_add(*args)


async def test_the_memory_store_bounds_rows_across_spaces() -> None:
    """MemoryStore(max_vectors=) keeps that many rows in all, the oldest of any space out."""
    store = MemoryStore(max_vectors=3)
    for space in ("a", "b"):
        for i in range(2):
            await store.vector_add(space, f"{space}{i}", b"v", b"", None, 10)
    assert (await _members(store, "a"), await _members(store, "b")) == (["a1"], ["b0", "b1"])
    assert store.stats["vector_evictions"] == 1


async def test_the_sqlite_store_bounds_rows_across_spaces(tmp_path: Path) -> None:
    """SQLiteStore(max_vectors=) keeps that many rows in all, the oldest of any space out."""
    store = SQLiteStore(tmp_path / "v.sqlite3", max_vectors=3)
    for space in ("a", "b"):
        for i in range(2):
            await store.vector_add(space, f"{space}{i}", b"v", b"", None, 10)
    assert (await _members(store, "a"), await _members(store, "b")) == (["a1"], ["b0", "b1"])
    await store.close()


@pytest.mark.redis
async def test_a_redis_outage_is_a_miss_not_an_error(
    redis_factory: Callable[[], RedisServer],
) -> None:
    """With Redis down, vector calls return None or False, counted, and work again after."""
    server = redis_factory()
    store = RedisStore(server.url, namespace="outage", retry_after=0)
    await store.vector_add("s", "m", b"v", b"", None, 10)
    server.stop()
    assert await store.vector_rows("s") is None
    assert await store.vector_version("s") is None
    assert await store.vector_add("s", "n", b"v", b"", None, 10) is False
    assert store.stats["errors"] == 3
    server.start()
    assert await store.vector_add("s", "n", b"v", b"", None, 10) is True
    await store.close()


@pytest.mark.redis
async def test_redis_space_keys_expire_with_their_newest_row(redis_server: RedisServer) -> None:
    """A space whose rows all expired leaves no key behind in Redis."""
    store = RedisStore(redis_server.url, namespace="ttl")
    await store.vector_add("s", "m", b"v", b"", 0.2, 10)
    await asyncio.sleep(0.4)
    assert await store.client.keys("ttl~*") == [b"ttl~clock"]
    await store.close()
