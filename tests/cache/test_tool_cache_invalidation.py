"""ToolResultCache on real Runners: when a mutating tool clears entries and how often; how
denied, failed and skipped calls are counted, every one of them."""

from __future__ import annotations

from typing import Any

import pytest

from adk_lattice import on
from adk_lattice.cache import MemoryStore, ToolResultCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig
from tests.cache.test_tool_result_cache import _reset_runs, lookup_charge, runs  # noqa: F401 (autouse)

S = ScriptedResponse


def issue_refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    runs["issue_refund"] += 1
    if charge_id == "down":
        raise ConnectionError("payments backend down")
    return {"status": "refunded", "charge_id": charge_id}


def sync_account(account: str) -> dict[str, Any]:
    """Sync an account from its bank (cacheable, and it changes what lookups see)."""
    raise ConnectionError("bank down")


@on("on_tool_error")
def _recover(**_: Any) -> dict[str, Any]:
    return {"status": "failed"}


@on("before_tool", tools={"issue_refund"})
def _deny_refunds(**_: Any) -> dict[str, Any]:
    return {"blocked": "refunds are off"}


@on("before_tool", tools={"lookup_charge"}, on_error="deny")
def _broken_check(**_: Any) -> None:
    raise RuntimeError("check failed")


def _lookup(charge_id: str = "c1") -> list[ScriptedResponse]:
    return [S.call("lookup_charge", charge_id=charge_id), S.text("ok")]


def _refund(charge_id: str = "c1") -> list[ScriptedResponse]:
    return [S.call("issue_refund", charge_id=charge_id), S.text("ok")]


def _cache(store: MemoryStore | None = None, **kwargs: Any) -> ToolResultCache:
    return ToolResultCache(
        MemoryStore() if store is None else store,
        ["lookup_charge"],
        invalidates={"issue_refund": ["lookup_charge"]},
        **kwargs,
    )


def _rig(script: list[ScriptedResponse], cache: ToolResultCache, **tiers: Any) -> Rig:
    return Rig(script, cache=[cache], tools=[lookup_charge, issue_refund], **tiers)


async def test_every_invalidation_is_counted() -> None:
    """Two refunds that each clear a stored lookup count two entries invalidated."""
    cache = _cache()
    rig = _rig((_lookup() + _refund()) * 2, cache)
    for _ in range(4):
        await rig.ask("Go")
    await rig.close()
    assert (runs["lookup_charge"], cache.stats["invalidated"]) == (2, 2)


async def test_a_mutating_tool_that_raised_still_clears_its_targets() -> None:
    """A refund that failed may have changed the charge: the next lookup runs again."""
    cache = _cache()
    rig = _rig(_lookup() + _refund("down") + _lookup(), cache, handlers=[_recover])
    for _ in range(3):
        await rig.ask("Go")
    await rig.close()
    assert (runs["lookup_charge"], cache.stats["invalidated"]) == (2, 1)


async def test_a_denied_mutating_call_clears_nothing() -> None:
    """A refund a policy denied changed nothing: the next lookup is still a hit."""
    cache = _cache()
    rig = _rig(_lookup() + _refund() + _lookup(), cache, policy=[_deny_refunds])
    for _ in range(3):
        await rig.ask("Go")
    await rig.close()
    assert (runs["lookup_charge"], runs["issue_refund"], cache.stats["hits"]) == (1, 0, 1)


@pytest.mark.parametrize("cached", [False, True], ids=["mutator", "cached-mutator"])
async def test_a_failed_recovered_mutating_call_sweeps_the_store_once(cached: bool) -> None:
    """A mutating call that raised and was recovered clears its targets once, not twice."""
    store = MemoryStore()
    tools = ["lookup_charge", "sync_account"] if cached else ["lookup_charge"]
    cache = ToolResultCache(store, tools, invalidates={"sync_account": ["lookup_charge"]})
    script = [S.call("sync_account", account="a1"), S.text("ok")]
    rig = Rig(script, cache=[cache], tools=[sync_account, lookup_charge], handlers=[_recover])
    await rig.ask("Sync")
    await rig.close()
    assert store.stats["deletes"] == 1


async def test_a_mutating_tool_the_cache_does_not_store_raises_no_observer_error() -> None:
    """Observing a refund (invalidating, not cached) runs cleanly: no observer error."""
    rig = _rig(_refund(), _cache())
    await rig.ask("Refund")
    await rig.close()
    assert rig.lattice.stats == {}


async def test_a_call_whose_error_ended_the_run_counts_no_unstored_result() -> None:
    """A cached tool that raised, unrecovered, returned nothing: no not_stored count."""
    cache = ToolResultCache(MemoryStore(), ["issue_refund"])
    rig = _rig(_refund("down"), cache)
    with pytest.raises(ConnectionError):
        await rig.ask("Refund")
    await rig.close()
    assert dict(cache.stats) == {**dict.fromkeys(cache.stats, 0), "misses": 1}


async def test_a_call_denied_after_the_cache_missed_is_counted_as_denied() -> None:
    """A later handler failing closed denies the call: counted not_stored.denied."""
    cache = _cache()
    rig = _rig(_lookup(), cache, handlers=[_broken_check])
    await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["not_stored.denied"], cache.stats["not_stored.stood_in"]) == (1, 0)
    assert runs["lookup_charge"] == 0


async def test_every_unkeyed_call_is_counted() -> None:
    """Two calls the scope says not to cache count two unkeyed."""
    cache = _cache(scope=lambda ctx: None)
    rig = _rig(_lookup() * 2, cache)
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["unkeyed"], runs["lookup_charge"]) == (2, 2)


async def test_every_corrupt_entry_is_counted() -> None:
    """Two corrupt entries found count two corrupt."""
    store = MemoryStore()
    cache = _cache(store)
    rig = _rig(_lookup() * 3, cache)
    await rig.ask("Charge?")
    for _ in range(2):
        [key] = list(store._entries)
        await store.set(key, b"not json")
        await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["corrupt"], runs["lookup_charge"]) == (2, 3)


class RefusingStore(MemoryStore):
    """A store that keeps nothing (every set fails)."""

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        return False


async def test_every_failed_store_is_counted() -> None:
    """Two results the store refused count two not_stored.store_failed."""
    cache = _cache(RefusingStore())
    rig = _rig(_lookup("c1") + _lookup("c2"), cache)
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    assert cache.stats["not_stored.store_failed"] == 2
