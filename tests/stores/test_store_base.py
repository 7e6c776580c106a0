"""What every store inherits from ``Store``: its counters, its settings' checks, and the pause
after a backend failure (``retry_after``)."""

from __future__ import annotations

import logging

import pytest

from adk_lattice.stores import Store, StoreUnavailable
from adk_lattice.stores._base import STAT_NAMES


class Switchable(Store):
    """A dict-backed store whose backend can be switched off, as a network store goes down."""

    def __init__(self, *, retry_after: float = 0.0) -> None:
        super().__init__(name="switchable", retry_after=retry_after)
        self.data: dict[str, bytes] = {}
        self.down = False
        self.calls = 0

    def _check(self) -> None:
        self.calls += 1
        if self.down:
            raise ConnectionError("connection refused")

    async def _get(self, key: str) -> bytes | None:
        self._check()
        return self.data.get(key)

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        self._check()
        self.data[key] = value
        return True

    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        self._check()
        return amount

    async def _delete(self, key: str) -> None:
        self._check()
        self.data.pop(key, None)

    async def _delete_prefix(self, prefix: str) -> int:
        self._check()
        gone = [k for k in self.data if k.startswith(prefix)]
        for key in gone:
            del self.data[key]
        return len(gone)

    async def _close(self) -> None:
        return None


async def _paused() -> Switchable:
    """A store whose backend failed once and is paused for a minute, its backend back up."""
    store = Switchable(retry_after=60)
    store.down = True
    assert await store.get("k") is None
    store.down = False
    store.data["a:1"] = b"1"
    return store


def test_a_fresh_store_lists_every_counter_at_zero() -> None:
    """A new store's stats name every documented counter, each at zero, for a metrics export."""
    assert dict(Switchable().stats) == dict.fromkeys(STAT_NAMES, 0)


def test_a_negative_retry_after_is_refused_naming_the_setting() -> None:
    """retry_after below zero is a ValueError that names the setting and its rule."""
    with pytest.raises(ValueError, match=r"^retry_after must be >= 0$"):
        Switchable(retry_after=-1)


async def test_every_hit_and_every_set_is_counted() -> None:
    """Each set that stores and each get that finds adds one to its counter."""
    store = Switchable()
    for key in ("a", "b"):
        assert await store.set(key, b"v")
    for key in ("a", "b", "c"):
        await store.get(key)
    assert (store.stats["sets"], store.stats["hits"], store.stats["misses"]) == (2, 2, 1)


async def test_each_call_during_a_pause_is_counted_as_skipped() -> None:
    """Every call made while the store is paused adds one to skipped and reaches no backend."""
    store = await _paused()
    before = store.calls
    await store.get("a:1")
    await store.set("b", b"v")
    await store.incr("n", window=60)
    assert (store.stats["skipped"], store.calls) == (3, before)


async def test_a_set_during_a_pause_reports_nothing_stored() -> None:
    """set() while the store is paused returns False: the caller knows the value is not kept."""
    store = await _paused()
    assert await store.set("b", b"v") is False


async def test_a_delete_prefix_during_a_pause_reports_nothing_removed() -> None:
    """delete_prefix() while the store is paused removes nothing and says so with 0."""
    store = await _paused()
    assert await store.delete_prefix("a:") == 0
    assert store.data == {"a:1": b"1"}


async def test_a_failed_delete_prefix_reports_nothing_removed() -> None:
    """delete_prefix() whose backend call fails returns 0, not a count it cannot know."""
    store = Switchable()
    store.data["a:1"] = b"1"
    store.down = True
    assert await store.delete_prefix("a:") == 0


async def test_an_outage_first_met_by_a_get_is_logged_naming_get(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """When a get is the first call to fail, the warning names get and the error's type."""
    store = Switchable()
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.get("k") is None
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'switchable' failed on get (ConnectionError); treating it as a miss"
    ]


async def test_fetch_of_an_absent_key_is_none() -> None:
    """fetch misses like get when the backend answers that nothing is stored."""
    assert await Switchable().fetch("k") is None


async def test_fetch_raises_when_the_backend_fails() -> None:
    """A failing backend makes fetch raise StoreUnavailable (get would read a miss)."""
    store = Switchable()
    store.down = True
    with pytest.raises(StoreUnavailable, match="ConnectionError"):
        await store.fetch("k")
    assert store.stats["errors"] == 1


async def test_fetch_raises_while_the_store_is_paused() -> None:
    """A store paused after a failure makes fetch raise, its backend not asked."""
    store = await _paused()
    calls = store.calls
    with pytest.raises(StoreUnavailable, match="paused"):
        await store.fetch("a:1")
    assert store.calls == calls
