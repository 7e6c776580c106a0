"""Store bookkeeping every backend shares: outages logged once and counted, deletes counted,
bad arguments refused with the rule."""

from __future__ import annotations

import logging

import pytest

from adk_lattice.stores import MemoryStore


class Flaky(MemoryStore):
    """A memory store whose backend can be switched off, as a network store goes down."""

    def __init__(self) -> None:
        super().__init__(name="flaky")
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("connection refused by cache-host.internal for user alice")

    async def _get(self, key: str) -> bytes | None:
        self._check()
        return await super()._get(key)

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        self._check()
        return await super()._set(key, value, ttl)

    async def _delete(self, key: str) -> None:
        self._check()
        await super()._delete(key)

    async def _delete_prefix(self, prefix: str) -> int:
        self._check()
        return await super()._delete_prefix(prefix)

    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        self._check()
        return await super()._incr(key, window, amount)


async def test_an_outage_is_logged_once_naming_the_operation_and_error_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first failure logs one warning naming the store, the call and the error's type,
    never its message; further failures of the same outage log nothing more."""
    store = Flaky()
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.set("k", b"v") is False
        assert await store.get("k") is None
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'flaky' failed on set (ConnectionError); treating it as a miss"
    ]
    assert "alice" not in caplog.text


async def test_each_failed_call_is_counted_as_an_error() -> None:
    """Every call that fails adds one to the errors counter, and the store reads unhealthy."""
    store = Flaky()
    store.down = True
    await store.set("k", b"v")
    await store.get("k")
    assert store.stats["errors"] == 2
    assert not store.healthy


async def test_a_store_that_answers_again_is_healthy_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """After an outage, the first call that succeeds marks the store healthy and logs it."""
    store = Flaky()
    store.down = True
    await store.get("k")
    store.down = False
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.set("k", b"v") is True
        assert await store.get("k") == b"v"
    assert store.healthy
    assert [r.getMessage() for r in caplog.records] == ["adk_lattice: store 'flaky' answers again"]


async def test_delete_and_delete_prefix_count_one_delete_each() -> None:
    """Each delete and each delete_prefix call adds one to the deletes counter."""
    store = MemoryStore()
    await store.set("a:1", b"1")
    await store.set("a:2", b"2")
    await store.delete("a:1")
    assert store.stats["deletes"] == 1
    assert await store.delete_prefix("a:") == 1
    assert store.stats["deletes"] == 2


@pytest.mark.parametrize("prefix", ["", None, b"a:"])
async def test_delete_prefix_refuses_an_empty_or_non_string_prefix(prefix: object) -> None:
    """delete_prefix with an empty or non-string prefix is refused, so it never wipes all."""
    store = MemoryStore()
    await store.set("a:1", b"1")
    with pytest.raises(ValueError, match=r"^delete_prefix needs a non-empty string prefix$"):
        await store.delete_prefix(prefix)  # type: ignore[arg-type]
    assert await store.get("a:1") == b"1"


async def test_a_non_bytes_value_is_refused_naming_its_type() -> None:
    """set() with text instead of bytes is refused, naming the type it got."""
    with pytest.raises(TypeError, match=r"^store values are bytes, got str$"):
        await MemoryStore().set("k", "v")  # type: ignore[arg-type]


@pytest.mark.parametrize("window", ["60", None, True])
async def test_a_window_that_is_not_a_number_is_refused(window: object) -> None:
    """incr() with a window that is not a number of seconds is a ValueError naming it."""
    with pytest.raises(ValueError, match=r"^window must be a positive number of seconds"):
        await MemoryStore().incr("k", window)  # type: ignore[arg-type]


@pytest.mark.parametrize("ttl", ["60", True, 0, -1])
async def test_a_ttl_that_is_not_a_positive_number_is_refused(ttl: object) -> None:
    """set() with a ttl that is not a positive number of seconds is a ValueError naming it."""
    with pytest.raises(ValueError, match=r"^ttl must be a positive number of seconds or None"):
        await MemoryStore().set("k", b"v", ttl)  # type: ignore[arg-type]


async def test_a_failed_delete_is_an_error_not_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    """While the backend is down, delete and delete_prefix log, count an error and go on;
    delete_prefix reports nothing removed and no delete is counted."""
    store = Flaky()
    await store.set("a:1", b"v")
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        await store.delete("a:1")
    assert (
        caplog.records[0].getMessage().startswith("adk_lattice: store 'flaky' failed on delete (")
    )
    assert await store.delete_prefix("a:") == 0
    assert (store.stats["errors"], store.stats.get("deletes", 0)) == (2, 0)


async def test_a_failed_delete_prefix_is_logged_by_its_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A delete_prefix starting an outage logs the call's name and the error type."""
    store = Flaky()
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.delete_prefix("a:") == 0
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'flaky' failed on delete_prefix (ConnectionError);"
        " treating it as a miss"
    ]


async def test_every_delete_is_counted() -> None:
    """Two deletes count two."""
    store = Flaky()
    await store.delete("a")
    await store.delete("b")
    assert store.stats["deletes"] == 2


async def test_a_failed_incr_is_logged_by_its_name_and_error_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An incr starting an outage returns None and logs the call's name and the error type."""
    store = Flaky()
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        assert await store.incr("calls", 60) is None
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'flaky' failed on incr (ConnectionError); treating it as a miss"
    ]
    assert store.stats["errors"] == 1


async def test_a_failed_delete_is_logged_by_its_name_and_error_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A delete starting an outage logs the call's name and the error type."""
    store = Flaky()
    store.down = True
    with caplog.at_level(logging.WARNING, logger="adk_lattice.stores"):
        await store.delete("a")
    assert [r.getMessage() for r in caplog.records] == [
        "adk_lattice: store 'flaky' failed on delete (ConnectionError); treating it as a miss"
    ]


async def test_a_non_int_amount_is_refused_naming_its_type() -> None:
    """incr() with a float amount is a TypeError naming the type it got."""
    with pytest.raises(TypeError, match=r"^amount must be an int, got float$"):
        await MemoryStore().incr("k", 60, amount=1.5)  # type: ignore[arg-type]
