"""ToolResultCache on real Runners: hits, final arguments, scopes, what is never stored,
declared invalidation."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from google.adk.tools.tool_context import ToolContext

from adk_lattice import on
from adk_lattice.cache import MemoryStore, ToolResultCache
from adk_lattice.cache._tool import default_is_error
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig

S = ScriptedResponse
runs: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _reset_runs() -> None:
    runs.clear()


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    runs["lookup_charge"] += 1
    if charge_id == "broken":
        return {"error": "charge store unavailable"}
    return {"charge_id": charge_id, "amount": "10.00", "run": runs["lookup_charge"]}


def issue_refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    runs["issue_refund"] += 1
    return {"status": "refunded", "charge_id": charge_id}


def _lookup(charge_id: str = "c1") -> list[ScriptedResponse]:
    return [S.call("lookup_charge", charge_id=charge_id), S.text("ok")]


def _rig(script: list[ScriptedResponse], cache: ToolResultCache, **tiers: Any) -> Rig:
    return Rig(script, cache=[cache], tools=[lookup_charge, issue_refund], **tiers)


def _cache(**kwargs: Any) -> ToolResultCache:
    return ToolResultCache(MemoryStore(), tools={"lookup_charge": 60}, **kwargs)


async def test_repeated_call_is_served_without_running_the_tool() -> None:
    """The second identical call is answered from the cache; the tool runs once."""
    cache = _cache()
    rig = _rig(_lookup() * 2, cache)
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    assert (runs["lookup_charge"], cache.stats["hits"]) == (1, 1)
    await rig.close()


async def test_the_hit_is_the_stored_result_and_is_marked() -> None:
    """A hit returns the first result and tells observers the cache served it."""
    rig = _rig(_lookup() * 2, _cache())
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    before = rig.recorder.of("before_tool")[-1]
    assert (before.acted_by, before.acted_tier) == ("tool_result_cache", "cache")
    assert before.call is not None and before.call.data["tool_result_cache"]["result"] == "hit"
    after = rig.recorder.of("after_tool")[-1]
    assert after.final["run"] == 1
    await rig.close()


async def test_different_arguments_miss() -> None:
    """Another charge id runs the tool."""
    rig = _rig(_lookup("c1") + _lookup("c2"), _cache())
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    assert runs["lookup_charge"] == 2
    await rig.close()


@on("before_tool", tools={"lookup_charge"})
def _normalise(*, tool: object, tool_args: dict[str, Any], tool_context: ToolContext) -> None:
    tool_args["charge_id"] = tool_args["charge_id"].strip().lower()


async def test_key_uses_the_final_arguments_after_policy_rewrites() -> None:
    """Arguments a policy normalised in place key the entry, so ' C1' hits 'c1'."""
    rig = _rig(_lookup("c1") + _lookup(" C1"), _cache(), policy=[_normalise])
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    assert runs["lookup_charge"] == 1
    await rig.close()


async def test_two_users_never_share_a_result() -> None:
    """With the default scope another user's identical call runs the tool."""
    rig = _rig(_lookup() * 2, _cache())
    await rig.ask("Charge?", user="alice")
    await rig.ask("Charge?", user="bob")
    assert runs["lookup_charge"] == 2
    await rig.close()


@on("before_tool", tools={"lookup_charge"})
def _deny_flagged(
    *, tool: object, tool_args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    return {"blocked": "flagged"} if tool_context.state.get("flag") else None


async def test_a_denied_call_is_not_stored() -> None:
    """A policy denial is not stored nor served to the next, allowed call."""
    cache = _cache()
    rig = _rig(_lookup() * 2, cache, policy=[_deny_flagged])
    await rig.ask("Charge?", state={"flag": True})
    await rig.ask("Charge?")
    assert (runs["lookup_charge"], cache.stats["stores"]) == (1, 1)
    await rig.close()


async def test_an_error_result_is_not_stored() -> None:
    """A result reporting an error is not stored; the next call runs the tool again."""
    cache = _cache()
    rig = _rig(_lookup("broken") * 2, cache)
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    assert (runs["lookup_charge"], cache.stats["not_stored.error"]) == (2, 2)
    await rig.close()


@on("after_tool", tools={"lookup_charge"})
def _cap(**_: Any) -> dict[str, Any]:
    return {"summary": "capped"}


async def test_a_rewritten_result_is_not_stored_unless_configured() -> None:
    """A result an after_tool handler replaced is not stored by default."""
    cache = _cache()
    rig = _rig(_lookup() * 2, cache, handlers=[_cap])
    await rig.ask("Charge?")
    assert cache.stats["not_stored.rewritten"] == 1
    await rig.close()


async def test_a_rewritten_result_is_stored_when_configured() -> None:
    """store_rewritten=True stores what the model received."""
    cache = _cache(store_rewritten=True)
    rig = _rig(_lookup() * 2, cache, handlers=[_cap])
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    assert (runs["lookup_charge"], cache.stats["hits"]) == (1, 1)
    await rig.close()


async def test_a_mutating_tool_invalidates_its_scope_entries() -> None:
    """issue_refund clears the user's lookup_charge entries; other users keep theirs."""
    cache = _cache(invalidates={"issue_refund": ["lookup_charge"]})
    refund = [S.call("issue_refund", charge_id="c1"), S.text("refunded")]
    rig = _rig(_lookup() * 2 + refund + _lookup() * 2, cache)
    await rig.ask("Charge?", user="alice")
    await rig.ask("Charge?", user="bob")
    await rig.ask("Refund", user="alice")
    await rig.ask("Charge?", user="alice")
    await rig.ask("Charge?", user="bob")
    assert runs["lookup_charge"] == 3
    assert cache.stats["invalidated"] == 1
    await rig.close()


async def test_entry_expires_after_its_tool_ttl() -> None:
    """Past the tool's TTL the tool runs again."""
    cache = ToolResultCache(MemoryStore(), tools={"lookup_charge": 0.1})
    rig = _rig(_lookup() * 2, cache)
    await rig.ask("Charge?")
    await asyncio.sleep(0.2)
    await rig.ask("Charge?")
    assert runs["lookup_charge"] == 2
    await rig.close()


async def test_tools_not_declared_cacheable_always_run() -> None:
    """A tool outside the cacheable set is never looked up or stored."""
    cache = ToolResultCache(MemoryStore(), tools=["lookup_charge"])
    refund = [S.call("issue_refund", charge_id="c1"), S.text("done")]
    rig = _rig(refund * 2, cache)
    await rig.ask("Refund")
    await rig.ask("Refund")
    assert runs["issue_refund"] == 2 and cache.store.stats["sets"] == 0
    await rig.close()


def test_bad_settings_are_refused() -> None:
    """A bare string, an empty set or an invalidation of an uncached tool is an error."""
    with pytest.raises(ValueError, match="not a str"):
        ToolResultCache(MemoryStore(), tools="lookup_charge")
    with pytest.raises(ValueError, match="at least one"):
        ToolResultCache(MemoryStore(), tools=[])
    with pytest.raises(ValueError, match="cacheable"):
        ToolResultCache(MemoryStore(), tools=["a"], invalidates={"b": ["c"]})


@on("before_tool", tools={"lookup_charge"})
def _stand_in(**_: Any) -> dict[str, Any]:
    return {"charge_id": "c1", "amount": "0.00", "source": "stand-in"}


async def test_a_result_another_handler_stood_in_for_is_not_stored() -> None:
    """When a later handler short-circuits the call after the cache missed, nothing is stored."""
    cache = _cache()
    rig = _rig(_lookup(), cache, handlers=[_stand_in])
    await rig.ask("Charge?")
    assert (cache.stats["not_stored.stood_in"], cache.stats["stores"]) == (1, 0)
    assert runs["lookup_charge"] == 0
    await rig.close()


@pytest.mark.parametrize(
    ("result", "is_error"),
    [
        ({"error": "backend down"}, True),
        ({"status": "error", "detail": "x"}, True),
        ({"status": "denied"}, True),
        ({"status": "ok", "rows": []}, False),
        ({"rows": [1]}, False),
    ],
)
def test_a_result_reporting_failure_is_an_error(result: dict[str, Any], is_error: bool) -> None:
    """An "error" key or a status of error or denied marks a failed result (not cached)."""
    assert default_is_error(result) is is_error


async def test_every_hit_is_counted_and_keeps_its_marker() -> None:
    """Two hits count two; each hit's call is marked as served by this cache."""
    cache = _cache()
    rig = _rig(_lookup() * 3, cache)
    for _ in range(3):
        await rig.ask("Charge?")
    before = rig.recorder.of("before_tool")[-1]
    assert before.call is not None
    assert before.call.data["tool_result_cache"] == {"result": "hit", "cache": "tool_result_cache"}
    assert (runs["lookup_charge"], cache.stats["hits"]) == (1, 2)
    await rig.close()


async def test_unstored_results_and_stores_are_counted_by_number() -> None:
    """Two stood-in results count two under not_stored.stood_in; two stored results two."""
    stood = _cache()
    rig = _rig(_lookup() * 2, stood, handlers=[_stand_in])
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    stored = _cache()
    rig = _rig(_lookup("c1") + _lookup("c2"), stored)
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    assert (stood.stats["not_stored.stood_in"], stored.stats["stores"]) == (2, 2)
