"""A model answer served from the cache still passes the lattice's output policy."""

from __future__ import annotations

from pathlib import Path

from adk_lattice.cache import ResponseCache, SQLiteStore
from adk_lattice.policy import RedactPII
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig, text_of

S = ScriptedResponse
EMAIL = "jane.doe@example.com"


async def test_an_answer_stored_before_redaction_was_added_is_served_redacted(
    tmp_path: Path,
) -> None:
    """An answer cached by a release without RedactPII is redacted when the next release,
    with RedactPII, serves it from the same store."""
    store = SQLiteStore(tmp_path / "cache.sqlite3")
    before = Rig([S.text(f"Write to {EMAIL}.")], cache=[ResponseCache(store)])
    assert EMAIL in text_of(await before.ask("Who handles refunds?"))
    await before.close()
    after = Rig([S.text("never used")], cache=[ResponseCache(store)], policy=[RedactPII()])
    served = text_of(await after.ask("Who handles refunds?"))
    assert after.model.calls == 0
    assert EMAIL not in served and "[REDACTED:EMAIL]" in served
    await after.close()
    await store.close()
