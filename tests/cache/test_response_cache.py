"""ResponseCache on real Runners: hits, misses, scopes and the hit marker."""

from __future__ import annotations

from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig, text_of

S = ScriptedResponse


async def test_second_identical_request_is_served_from_the_cache() -> None:
    """A repeated request is answered from the cache without calling the model."""
    rig = Rig([S.text("Paris."), S.text("never used")], cache=[ResponseCache(MemoryStore())])
    first = await rig.ask("Capital of France?")
    second = await rig.ask("Capital of France?")
    assert (text_of(first), text_of(second)) == ("Paris.", "Paris.")
    assert rig.model.calls == 1
    await rig.close()
