"""The shared store interface, run against every backend: memory, SQLite, real Redis."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_lattice.stores import MemoryStore, RedisStore, SQLiteStore, Store

_ns = itertools.count()


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh store of each kind."""
    made: Store
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(tmp_path / "cache.sqlite3")
    else:
        server = request.getfixturevalue("redis_server")
        made = RedisStore(server.url, namespace=f"contract{next(_ns)}")
    yield made
    await made.close()


async def test_set_then_get_returns_the_bytes(store: Store) -> None:
    """A stored value comes back byte for byte."""
    assert await store.set("k", b"\x00value\xff")
    assert await store.get("k") == b"\x00value\xff"


async def test_get_of_an_absent_key_is_none(store: Store) -> None:
    """An absent key is a miss, counted."""
    assert await store.get("absent") is None
    assert store.stats["misses"] == 1


async def test_set_overwrites(store: Store) -> None:
    """A second set of one key replaces the value."""
    await store.set("k", b"one")
    await store.set("k", b"two")
    assert await store.get("k") == b"two"


async def test_entry_expires_after_its_ttl(store: Store) -> None:
    """An entry is not returned once its TTL has passed."""
    await store.set("k", b"v", ttl=0.05)
    await asyncio.sleep(0.15)
    assert await store.get("k") is None


async def test_delete_removes_one_key(store: Store) -> None:
    """delete removes the key and leaves others."""
    await store.set("a", b"1")
    await store.set("b", b"2")
    await store.delete("a")
    assert (await store.get("a"), await store.get("b")) == (None, b"2")


async def test_delete_prefix_removes_only_matching_keys(store: Store) -> None:
    """delete_prefix removes keys under the prefix, not a sibling prefix."""
    for key in ("tool:s1:lookup:1", "tool:s1:lookup:2", "tool:s1:lookupx:1", "tool:s2:lookup:1"):
        await store.set(key, b"v")
    assert await store.delete_prefix("tool:s1:lookup:") == 2
    remaining = [await store.get(k) for k in ("tool:s1:lookupx:1", "tool:s2:lookup:1")]
    assert remaining == [b"v", b"v"]


async def test_delete_prefix_counts_only_live_entries(store: Store) -> None:
    """delete_prefix's count leaves out entries already expired, on every store."""
    await store.set("p:old", b"1", ttl=0.05)
    await store.set("p:live", b"2")
    await asyncio.sleep(0.15)
    assert await store.delete_prefix("p:") == 1
    assert await store.get("p:live") is None


async def test_delete_prefix_treats_glob_characters_literally(store: Store) -> None:
    """Glob characters in a prefix match only themselves."""
    await store.set("a*b:1", b"v")
    await store.set("axb:1", b"v")
    assert await store.delete_prefix("a*b:") == 1
    assert await store.get("axb:1") == b"v"


async def test_non_bytes_value_is_a_clear_error(store: Store) -> None:
    """A str value is refused with a TypeError naming the type."""
    with pytest.raises(TypeError, match="bytes"):
        await store.set("k", "text")  # type: ignore[arg-type]


async def test_bad_ttl_is_a_clear_error(store: Store) -> None:
    """A non-positive TTL is refused."""
    with pytest.raises(ValueError, match="ttl"):
        await store.set("k", b"v", ttl=0)


@pytest.mark.parametrize("ttl", [float("inf"), 1e300])
async def test_a_ttl_past_a_century_is_kept_a_century(store: Store, ttl: float) -> None:
    """An infinite or huge TTL stores the entry (kept ``MAX_TTL``), with no backend error."""
    assert await store.set("k", b"v", ttl=ttl) is True
    assert await store.get("k") == b"v"
    assert store.stats["errors"] == 0


async def test_empty_key_is_a_clear_error(store: Store) -> None:
    """An empty key is refused."""
    with pytest.raises(ValueError, match="key"):
        await store.get("")


async def test_counters_count_hits_misses_and_sets(store: Store) -> None:
    """The counters follow what happened."""
    await store.set("k", b"v")
    await store.get("k")
    await store.get("nope")
    assert (store.stats["sets"], store.stats["hits"], store.stats["misses"]) == (1, 1, 1)


async def test_concurrent_tasks_see_consistent_values(store: Store) -> None:
    """Many tasks writing and reading distinct keys at once each read their own value."""

    async def one(i: int) -> bytes | None:
        await store.set(f"c:{i}", str(i).encode())
        return await store.get(f"c:{i}")

    got = await asyncio.gather(*(one(i) for i in range(50)))
    assert got == [str(i).encode() for i in range(50)]


async def test_delete_prefix_spares_keys_that_only_share_its_stem(store: Store) -> None:
    """delete_prefix("a:") removes a:... only, not aa:... or a;..., and a one-letter prefix
    works too."""
    for key in ("a:1", "a:2", "aa:1", "a;1", "b1"):
        await store.set(key, b"v")
    assert await store.delete_prefix("a:") == 2
    assert [await store.get(k) for k in ("a:1", "aa:1", "a;1")] == [None, b"v", b"v"]
    assert await store.delete_prefix("b") == 1
    assert await store.get("b1") is None
