"""ToolResultCache entries on real Runners: their TTL, their stored form, what is served
back, what counts as corrupt; and the messages of refused settings."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from adk_lattice.cache import MemoryStore, ToolResultCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import RecordingStore, Rig

S = ScriptedResponse
runs: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _reset_runs() -> None:
    runs.clear()


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    runs[charge_id] += 1
    return {"charge_id": charge_id, "amount": "10,00 €"}


def read_note(note_id: str) -> dict[str, Any]:
    """Read a note whose text holds a lone surrogate."""
    runs[note_id] += 1
    return {"note": "half \ud800 pair"}


class TtlStore(MemoryStore):
    """A MemoryStore that also keeps the TTL of every write."""

    def __init__(self) -> None:
        super().__init__(name="ttls")
        self.ttls: list[float | None] = []

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        self.ttls.append(ttl)
        return await super()._set(key, value, ttl)


def _lookups(*charges: str) -> list[ScriptedResponse]:
    return [t for c in charges for t in (S.call("lookup_charge", charge_id=c), S.text("ok"))]


@pytest.mark.parametrize(
    ("tools", "kwargs", "ttl"),
    [
        (["lookup_charge"], {}, 300.0),
        (["lookup_charge"], {"ttl": 42}, 42.0),
        ({"lookup_charge": None}, {"ttl": 42}, 42.0),
        ({"lookup_charge": 7}, {"ttl": 42}, 7.0),
    ],
    ids=["default", "ttl-argument", "none-takes-the-default", "own-ttl"],
)
async def test_an_entry_lives_for_its_tools_ttl(
    tools: Any, kwargs: dict[str, Any], ttl: float
) -> None:
    """A tool's entries get its own TTL, else the ttl argument, else five minutes."""
    store = TtlStore()
    cache = ToolResultCache(store, tools, **kwargs)
    rig = Rig(_lookups("c1"), cache=[cache], tools=[lookup_charge])
    await rig.ask("Charge?")
    await rig.close()
    assert store.ttls == [ttl]


async def test_an_entry_is_the_result_as_compact_utf8_json() -> None:
    """The stored entry is the result's JSON without spaces, non-ASCII text kept as UTF-8."""
    store = RecordingStore()
    cache = ToolResultCache(store, ["lookup_charge"])
    rig = Rig(_lookups("c1"), cache=[cache], tools=[lookup_charge])
    await rig.ask("Charge?")
    await rig.close()
    assert store.written == ['{"charge_id":"c1","amount":"10,00 €"}'.encode()]


async def test_a_result_with_a_lone_surrogate_is_served_back_unchanged() -> None:
    """Text UTF-8 cannot encode is stored escaped and served back as the tool returned it."""
    cache = ToolResultCache(MemoryStore(), ["read_note"])
    script = [S.call("read_note", note_id="n1"), S.text("ok")] * 2
    rig = Rig(script, cache=[cache], tools=[read_note])
    await rig.ask("Note?")
    await rig.ask("Note?")
    await rig.close()
    assert (runs["n1"], cache.stats["hits"]) == (1, 1)
    assert rig.recorder.of("after_tool")[-1].final == {"note": "half \ud800 pair"}


@pytest.mark.parametrize("raw", [b"{}", b"[1, 2]", b'"charge"', b"5", b"[" * 100_000])
async def test_an_entry_that_is_not_a_non_empty_object_is_corrupt(raw: bytes) -> None:
    """JSON that is not a non-empty object (or nests past Python's recursion limit) is never
    served: counted corrupt, the tool runs."""
    store = MemoryStore()
    cache = ToolResultCache(store, ["lookup_charge"])
    rig = Rig(_lookups("c1", "c1"), cache=[cache], tools=[lookup_charge])
    await rig.ask("Charge?")
    [key] = list(store._entries)
    await store.set(key, raw)
    await rig.ask("Charge?")
    await rig.close()
    assert (runs["c1"], cache.stats["corrupt"], cache.stats["hits"]) == (2, 1, 0)


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("lookup_charge", "tools takes a collection of tool names (or name -> TTL), not a str"),
        ([], "tools needs at least one cacheable tool name"),
    ],
    ids=["a-str", "none"],
)
def test_a_bad_tools_argument_is_refused_with_the_rule(tools: Any, message: str) -> None:
    """A bare string or an empty collection of tools is refused with the rule it broke."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ToolResultCache(MemoryStore(), tools)
