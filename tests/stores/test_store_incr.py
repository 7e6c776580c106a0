"""The counter half of the store interface (``incr``), run against memory, SQLite, real Redis."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from adk_lattice.stores import MemoryStore, RedisStore, SQLiteStore, Store

_ns = itertools.count()

Clients = Callable[[], Store]


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def clients(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Clients]:
    """Make clients of one backend that share its data (one memory store is its own client)."""
    made: list[Store] = []
    namespace = f"incr{next(_ns)}"
    memory = MemoryStore()

    def make() -> Store:
        store: Store
        if request.param == "memory":
            store = memory
        elif request.param == "sqlite":
            store = SQLiteStore(tmp_path / "counters.sqlite3")
        else:
            server = request.getfixturevalue("redis_server")
            # Generous timeouts: these tests check atomicity, not a loaded machine's latency.
            store = RedisStore(
                server.url, namespace=namespace, connect_timeout=5.0, socket_timeout=5.0
            )
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


@pytest.fixture
def store(clients: Clients) -> Store:
    """One client of each backend."""
    return clients()


async def test_incr_counts_up_from_one(store: Store) -> None:
    """Successive increments of one key return 1, 2, 3."""
    assert [await store.incr("k", 60) for _ in range(3)] == [1, 2, 3]


async def test_keys_count_separately(store: Store) -> None:
    """Each key has its own count."""
    await store.incr("a", 60)
    assert await store.incr("b", 60) == 1


async def test_the_count_starts_again_after_the_window(store: Store) -> None:
    """Once the window has passed, the next increment returns 1."""
    await store.incr("k", 0.1)
    await asyncio.sleep(0.25)
    assert await store.incr("k", 0.1) == 1


async def test_later_increments_do_not_extend_the_window(store: Store) -> None:
    """The window runs from the first increment, not from the latest one."""
    await store.incr("k", 0.4)
    await asyncio.sleep(0.25)
    assert await store.incr("k", 0.4) == 2
    await asyncio.sleep(0.25)
    assert await store.incr("k", 0.4) == 1


async def test_an_amount_adds_that_much(store: Store) -> None:
    """``incr(key, window, amount=n)`` adds n: a sum of tokens or money, not a call count."""
    assert await store.incr("spent", 60, amount=120) == 120
    assert await store.incr("spent", 60, amount=30) == 150
    assert await store.incr("spent", 60) == 151


async def test_amount_zero_reads_the_counter(store: Store) -> None:
    """``amount=0`` returns the current sum without changing it (0 for a new counter)."""
    assert await store.incr("fresh", 60, amount=0) == 0
    await store.incr("fresh", 60, amount=7)
    assert await store.incr("fresh", 60, amount=0) == 7


async def test_a_summed_counter_starts_again_after_its_window(store: Store) -> None:
    """A sum expires with its window, like a count, also when it began with a read."""
    await store.incr("sum", 0.1, amount=0)
    await store.incr("sum", 0.1, amount=50)
    await asyncio.sleep(0.25)
    assert await store.incr("sum", 0.1, amount=5) == 5


async def test_counters_are_apart_from_entries(store: Store) -> None:
    """get, set and delete_prefix neither see nor reset a counter of the same key."""
    await store.incr("rl:k", 60)
    await store.set("rl:k", b"entry")
    assert await store.delete_prefix("rl:") == 1
    assert await store.get("rl:k") is None
    assert await store.incr("rl:k", 60) == 2


async def test_increments_are_counted_in_stats(store: Store) -> None:
    """Each increment adds one to stats["incrs"]."""
    await store.incr("k", 60)
    await store.incr("k", 60)
    assert store.stats["incrs"] == 2


async def test_a_read_of_a_new_counter_starts_its_window(store: Store) -> None:
    """A read (``amount=0``) of an absent counter starts its window: the sum it then takes
    ends with the window the read began."""
    await store.incr("sum", 0.4, amount=0)
    await asyncio.sleep(0.25)
    assert await store.incr("sum", 0.4, amount=50) == 50
    await asyncio.sleep(0.25)
    assert await store.incr("sum", 0.4, amount=5) == 5


async def test_a_non_positive_window_is_a_clear_error(store: Store) -> None:
    """A window of 0 is refused with a ValueError naming it."""
    with pytest.raises(ValueError, match="window"):
        await store.incr("k", 0)


async def test_an_empty_key_is_a_clear_error(store: Store) -> None:
    """An empty counter key is refused."""
    with pytest.raises(ValueError, match="key"):
        await store.incr("", 60)


async def test_concurrent_increments_from_two_clients_give_each_count_once(
    clients: Clients,
) -> None:
    """200 concurrent increments through two clients return every count 1..200 exactly once."""
    a, b = clients(), clients()
    got = await asyncio.gather(*(s.incr("shared", 60) for s in [a, b] * 100))
    assert sorted(c for c in got if c is not None) == list(range(1, 201))


async def test_incr_adds_an_amount(store: Store) -> None:
    """incr(key, window, amount=...) adds that amount: a sum in cents, not a count."""
    assert await store.incr("sum", 60, amount=10_000) == 10_000
    assert await store.incr("sum", 60, amount=250) == 10_250


async def test_a_negative_amount_gives_back(store: Store) -> None:
    """A negative amount takes a reservation back out of a live window."""
    await store.incr("sum", 60, amount=500)
    assert await store.incr("sum", 60, amount=-500) == 0
    assert await store.incr("sum", 60, amount=1) == 1


async def test_giving_back_never_starts_a_window(store: Store) -> None:
    """A negative amount on an absent counter changes nothing (no negative credit)."""
    assert await store.incr("fresh", 60, amount=-500) == 0
    assert await store.incr("fresh", 60, amount=100) == 100


async def test_concurrent_amounts_sum_exactly(clients: Clients) -> None:
    """Concurrent adds from two clients of one backend lose no amount."""
    a, b = clients(), clients()
    got = await asyncio.gather(*(s.incr("total", 60, amount=7) for s in [a, b] * 8))
    assert sorted(got) == [7 * i for i in range(1, 17)]  # every add saw a distinct total


async def test_a_non_int_amount_is_refused(store: Store) -> None:
    """A float amount is a TypeError, never silently truncated."""
    with pytest.raises(TypeError, match="amount"):
        await store.incr("k", 60, amount=1.5)  # type: ignore[arg-type]


async def test_a_store_written_before_amounts_still_counts() -> None:
    """A Store subclass whose _incr takes no amount keeps counting by one."""

    class OldStore(MemoryStore):
        async def _incr(self, key: str, window: float) -> int | None:  # type: ignore[override]
            return await super()._incr(key, window)

    store = OldStore()
    assert [await store.incr("k", 60) for _ in range(2)] == [1, 2]


async def test_an_amount_past_2_53_counts_exactly(store: Store) -> None:
    """Amounts a float cannot hold (2**53 + 1, 2**63 - 1) are added digit for digit."""
    assert await store.incr("a", 60, 2**53 + 1) == 2**53 + 1
    assert await store.incr("b", 60, 2**63 - 1) == 2**63 - 1


async def test_a_sum_past_64_bits_is_refused_and_leaves_the_counter(store: Store) -> None:
    """An increment that would carry a counter past 2**63 - 1 returns None; the count stays."""
    await store.incr("k", 60, 2**63 - 2)
    assert await store.incr("k", 60, 5) is None
    assert await store.incr("k", 60, 0) == 2**63 - 2
    assert (store.stats["out_of_range"], store.stats["errors"], store.healthy) == (1, 0, True)


async def test_a_give_back_past_64_bits_is_refused(store: Store) -> None:
    """A give-back that would carry a counter below -2**63 returns None; the count stays."""
    await store.incr("k", 60, 1)
    assert await store.incr("k", 60, -(2**63)) == 1 - 2**63
    assert await store.incr("k", 60, -2) is None
    assert await store.incr("k", 60, 0) == 1 - 2**63


async def test_an_amount_past_64_bits_is_refused_without_an_outage(store: Store) -> None:
    """An amount of 2**63 is refused (None) without reaching the backend or pausing it."""
    assert await store.incr("k", 60, 2**63) is None
    assert await store.incr("k", 60) == 1
    assert (store.stats["out_of_range"], store.stats["errors"]) == (1, 0)


async def test_an_infinite_window_counts(store: Store) -> None:
    """A window of infinity (the longest a store keeps) counts like any other."""
    assert [await store.incr("k", float("inf")) for _ in range(2)] == [1, 2]
    assert store.stats["errors"] == 0
