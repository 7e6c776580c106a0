"""RateLimit's decisions: fixed windows, whose counter a call spends, what a refusal carries and
what a store that gives no count leaves behind."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import RateLimit
from adk_lattice.policy._common import DENIAL_STATE_KEY
from adk_lattice.policy.limits import rate as rate_module
from adk_lattice.state import StateKey
from adk_lattice.stores import MemoryStore, SQLiteStore
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import run_app, user

TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")


async def _model_call(limit: RateLimit, ctx: Any) -> Any:
    return await limit.before_model(callback_context=ctx, llm_request=None)  # type: ignore[attr-defined]


async def test_a_new_window_gives_a_user_at_the_limit_a_fresh_count(
    ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user refused late in one window may call again as soon as the next window starts."""
    now = [3599.0]
    monkeypatch.setattr(rate_module, "time", SimpleNamespace(time=lambda: now[0]))
    limit = RateLimit(1, 3600)
    c = await ctx()
    assert await _model_call(limit, c) is None
    now[0] = 3599.5
    assert await _model_call(limit, c) is not None
    now[0] = 3600.0
    assert await _model_call(limit, c) is None


async def test_a_user_whose_id_is_a_tenant_id_keeps_their_own_count(ctx: Any) -> None:
    """On one store, a user named "acme" never spends the budget of the tenant "acme"."""
    store = MemoryStore()
    by_tenant, by_user = RateLimit(1, 60, per=TENANT, store=store), RateLimit(1, 60, store=store)
    assert await _model_call(by_tenant, await ctx({"user:tenant_id": "acme"}, user_id="u1")) is None
    assert await _model_call(by_user, await ctx(user_id="acme")) is None


async def test_a_refusal_carries_the_limit(ctx: Any) -> None:
    """A refused model call's metadata says who refused, why, and the limit that was reached."""
    limit = RateLimit(1, 60)
    c = await ctx()
    await _model_call(limit, c)
    refused = await _model_call(limit, c)
    assert refused.custom_metadata["adk_lattice"] == {
        "denied_by": "RateLimit",
        "reason": "rate_limited",
        "limit": 1,
    }


async def test_an_agent_run_over_the_limit_reads_the_limit_message() -> None:
    """Through a Runner, an agent run past the limit answers with the limit's own message."""
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    limit = RateLimit(1, 3600, hook="before_agent", message="Come back in an hour.")
    run = await run_app(LlmAgent(name="assistant", model=model), [Lattice(policy=[limit])], "hi")
    again = await run.send(user("hi again"))
    assert (run.texts, again.texts) == (["one"], ["Come back in an hour."])


def _corrupt_sqlite(tmp_path: Path) -> SQLiteStore:
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    return SQLiteStore(path)


async def test_a_store_giving_no_count_is_recorded_for_later_callbacks(
    ctx: Any, tmp_path: Path
) -> None:
    """A refusal because a shared store gave no count is noted in state for later callbacks."""
    store = _corrupt_sqlite(tmp_path)
    c = await ctx()
    await _model_call(RateLimit(5, 60, store=store), c)
    await store.close()
    assert c.state[DENIAL_STATE_KEY] == {
        "policy": "RateLimit",
        "reason": "rate_limit_unavailable",
        "limit": 5,
    }


async def test_a_store_giving_no_count_is_logged_as_such(
    ctx: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The outage warning says the store gave no count (it raised no error to name)."""
    store = _corrupt_sqlite(tmp_path)
    with caplog.at_level(logging.WARNING, logger="adk_lattice.policy"):
        await _model_call(RateLimit(5, 60, store=store), await ctx())
    await store.close()
    assert [r.getMessage() for r in caplog.records if r.name == "adk_lattice.policy"] == [
        "adk_lattice: RateLimit: the counter store failed (no count); calls are denied until it"
        " answers"
    ]


@pytest.mark.parametrize("hook", ["before_model", "before_tool", "before_agent"])
def test_a_rate_limit_says_which_hook_it_counts_on(hook: str) -> None:
    """limit.hook is the hook it was given."""
    assert RateLimit(1, 60, hook=hook).hook == hook  # type: ignore[arg-type]
