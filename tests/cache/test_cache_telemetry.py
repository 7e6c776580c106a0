"""Cache decisions reach telemetry: stores and skips are noted on the outcome."""

from __future__ import annotations

import pytest

from adk_lattice.cache import MemoryStore, ResponseCache, ToolResultCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig

telemetry = pytest.importorskip("adk_lattice.telemetry", reason="telemetry package not present")
S = ScriptedResponse


def lookup_charge(charge_id: str) -> dict[str, str]:
    """Look up a charge."""
    return {"charge_id": charge_id}


def _notes(rig: Rig, hook: str) -> list[tuple[str, str, str | None]]:
    return [
        (n.handler, n.decision, n.reason)
        for o in rig.recorder.of(hook)
        for n in telemetry.notes_of(o)
        if n.handler in ("response_cache", "tool_result_cache")
    ]


async def test_a_stored_answer_is_noted_as_cache_store() -> None:
    """The after_model outcome of a stored answer carries a cache_store note."""
    rig = Rig([S.text("Paris.")], cache=[ResponseCache(MemoryStore())])
    await rig.ask("Capital?")
    assert _notes(rig, "after_model") == [("response_cache", "cache_store", None)]
    await rig.close()


async def test_an_unstored_answer_is_noted_as_cache_skip_with_the_reason() -> None:
    """A function-call answer is noted as cache_skip, reason function_call."""
    rig = Rig(
        [S.call("lookup_charge", charge_id="c1"), S.text("ok")],
        cache=[ResponseCache(MemoryStore()), ToolResultCache(MemoryStore(), ["lookup_charge"])],
        tools=[lookup_charge],
    )
    await rig.ask("Charge?")
    assert ("response_cache", "cache_skip", "function_call") in _notes(rig, "after_model")
    assert _notes(rig, "after_tool") == [("tool_result_cache", "cache_store", None)]
    await rig.close()
