"""ToolResultCache bookkeeping on real Runners: corrupt entries, failed stores, skipped
calls, each counted and noted for telemetry; settings refused with the rule."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from adk_lattice import on, telemetry
from adk_lattice.cache import MemoryStore, ToolResultCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig

S = ScriptedResponse
runs: Counter[str] = Counter()


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    runs[charge_id] += 1
    if charge_id == "broken":
        return {"error": "charge store unavailable"}
    return {"charge_id": charge_id, "amount": "10.00"}


def _rig(cache: ToolResultCache, *charges: str) -> Rig:
    runs.clear()
    script = [t for c in charges for t in (S.call("lookup_charge", charge_id=c), S.text("ok"))]
    return Rig(script, cache=[cache], tools=[lookup_charge])


def _notes(rig: Rig, hook: str) -> list[tuple[str, str | None]]:
    return [
        (n.decision, n.reason)
        for o in rig.recorder.of(hook)
        for n in telemetry.notes_of(o)
        if n.handler == "tool_result_cache"
    ]


class RefusingStore(MemoryStore):
    """A store that keeps nothing (every set fails)."""

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        return False


async def test_a_corrupt_entry_is_dropped_counted_noted_and_the_tool_runs() -> None:
    """An entry that is not a JSON object is deleted, counted and noted; the tool runs."""
    store = MemoryStore()
    cache = ToolResultCache(store, ["lookup_charge"])
    rig = _rig(cache, "c1", "c1")
    await rig.ask("Charge?")
    [key] = list(store._entries)
    await store.set(key, b"not json")
    await rig.ask("Charge?")
    assert await store.get(key) is not None  # the second run stored its fresh result
    await rig.close()  # closes the store too: read it before
    assert runs["c1"] == 2
    assert cache.stats["corrupt"] == 1
    assert ("cache_error", "corrupt") in _notes(rig, "before_tool")
    assert store.stats["deletes"] == 1


async def test_a_result_the_store_did_not_keep_is_counted_and_noted() -> None:
    """A store refusing the write is counted as not_stored.store_failed and noted."""
    cache = ToolResultCache(RefusingStore(), ["lookup_charge"])
    rig = _rig(cache, "c1")
    await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["not_stored.store_failed"], cache.stats["stores"]) == (1, 0)
    assert _notes(rig, "after_tool") == [("cache_error", "store_failed")]


async def test_each_unstored_result_is_counted() -> None:
    """Every result not fit to store adds one to its not_stored reason."""
    cache = ToolResultCache(MemoryStore(), ["lookup_charge"])
    rig = _rig(cache, "broken", "broken")
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    assert cache.stats["not_stored.error"] == 2
    assert _notes(rig, "after_tool") == [("cache_skip", "error")] * 2


async def test_an_unscoped_call_is_counted_and_noted_as_unkeyed() -> None:
    """A call the scope says not to cache is counted and noted as unkeyed, and runs."""
    cache = ToolResultCache(MemoryStore(), ["lookup_charge"], scope=lambda ctx: None)
    rig = _rig(cache, "c1")
    await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["unkeyed"], runs["c1"]) == (1, 1)
    assert _notes(rig, "before_tool") == [("cache_skip", "unkeyed")]


def test_a_new_cache_reports_every_counter_at_zero() -> None:
    """A new cache's counters are all present at zero."""
    cache = ToolResultCache(MemoryStore(), ["lookup_charge"])
    assert dict(cache.stats) == dict.fromkeys(
        ("hits", "misses", "stores", "corrupt", "invalidated"), 0
    )


@pytest.mark.parametrize("ttl", [0, -5])
def test_a_tool_ttl_that_is_not_positive_is_refused(ttl: float) -> None:
    """A zero or negative TTL for a tool is refused, naming the tool."""
    rule = "TTL for 'lookup_charge' must be positive seconds or None"
    with pytest.raises(ValueError, match=f"^{re.escape(rule)}$"):
        ToolResultCache(MemoryStore(), {"lookup_charge": ttl})


def issue_refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    return {"status": "refunded", "charge_id": charge_id}


def list_nothing() -> dict[str, Any]:
    """List what there is: nothing."""
    return {}


async def test_a_tool_the_cache_does_not_hold_never_runs_the_cache() -> None:
    """A call to a tool that is neither cached nor invalidating has no cache step at all."""
    cache = ToolResultCache(MemoryStore(), ["lookup_charge"])
    script = [S.call("issue_refund", charge_id="c1"), S.text("ok")]
    rig = Rig(script, cache=[cache], tools=[lookup_charge, issue_refund])
    await rig.ask("Refund?")
    await rig.close()
    (before,) = rig.recorder.of("before_tool")
    assert [s.handler for s in before.steps] == []


async def test_an_empty_result_is_not_stored_and_counted_as_empty() -> None:
    """A tool result with nothing in it is not stored, counted under not_stored.empty."""
    cache = ToolResultCache(MemoryStore(), ["list_nothing"])
    rig = Rig([S.call("list_nothing"), S.text("ok")], cache=[cache], tools=[list_nothing])
    await rig.ask("Anything?")
    await rig.close()
    assert (cache.stats["not_stored.empty"], cache.stats["stores"]) == (1, 0)
    assert _notes(rig, "after_tool") == [("cache_skip", "empty")]


async def test_a_tool_that_raised_is_not_stored_and_is_counted_as_an_error() -> None:
    """A call whose tool raised (recovered by another handler) is never stored: error."""

    def flaky(charge_id: str) -> dict[str, Any]:
        """Look up a charge on a failing backend."""
        raise ConnectionError("backend down")

    @on("on_tool_error")
    def recover(*, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> dict[str, Any]:
        return {"status": "failed"}

    cache = ToolResultCache(MemoryStore(), ["flaky"])
    script = [S.call("flaky", charge_id="c1"), S.text("ok")] * 2
    rig = Rig(script, cache=[cache], tools=[flaky], handlers=[recover])
    await rig.ask("Charge?")
    await rig.ask("Charge?")
    await rig.close()
    assert (cache.stats["not_stored.error"], cache.stats["stores"]) == (2, 0)
    assert _notes(rig, "after_tool") + _notes(rig, "on_tool_error") == [("cache_skip", "error")] * 2


async def test_a_result_json_cannot_hold_is_not_stored() -> None:
    """A result holding a value JSON cannot write is counted as not_json and not stored."""

    def tags(charge_id: str) -> dict[str, Any]:
        """The tags of a charge."""
        return {"tags": {"a", "b"}}

    cache = ToolResultCache(MemoryStore(), ["tags"])
    rig = Rig([S.call("tags", charge_id="c1"), S.text("ok")], cache=[cache], tools=[tags])
    await rig.ask("Tags?")
    await rig.close()
    assert (cache.stats["not_stored.not_json"], cache.stats["stores"]) == (1, 0)
