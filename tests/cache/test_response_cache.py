"""ResponseCache on real Runners: hits, misses, scopes, bypass, TTL and the hit marker."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.agents.context import Context

from adk_lattice import on
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig, SlowModel, text_of

S = ScriptedResponse


async def test_second_identical_request_is_served_from_the_cache() -> None:
    """A repeated request is answered from the cache without calling the model."""
    rig = Rig([S.text("Paris."), S.text("never used")], cache=[ResponseCache(MemoryStore())])
    first = await rig.ask("Capital of France?")
    second = await rig.ask("Capital of France?")
    assert (text_of(first), text_of(second)) == ("Paris.", "Paris.")
    assert rig.model.calls == 1
    await rig.close()


async def test_different_request_misses() -> None:
    """A different question is not served another question's answer."""
    rig = Rig([S.text("Paris."), S.text("Rome.")], cache=[ResponseCache(MemoryStore())])
    await rig.ask("Capital of France?")
    second = await rig.ask("Capital of Italy?")
    assert text_of(second) == "Rome."
    assert rig.model.calls == 2
    await rig.close()


async def test_hit_is_marked_in_the_response_and_the_outcome() -> None:
    """A hit carries custom_metadata naming the cache, and observers see who served it."""
    cache = ResponseCache(MemoryStore(name="mem"), name="answers")
    rig = Rig([S.text("Paris.")], cache=[cache])
    await rig.ask("Capital of France?")
    events = await rig.ask("Capital of France?")
    marker = events[-1].custom_metadata["adk_lattice"]["cache"]
    assert (marker["result"], marker["cache"], marker["store"]) == ("hit", "answers", "mem")
    served = [o for o in rig.recorder.of("after_model") if o.synthesized]
    assert [(o.reason, o.acted_by, o.acted_tier) for o in served] == [
        ("short_circuit", "answers", "cache")
    ]
    assert served[0].final.custom_metadata["adk_lattice"]["cache"]["result"] == "hit"
    await rig.close()


async def test_a_hit_is_never_stored_back() -> None:
    """Serving a hit writes nothing to the store."""
    store = MemoryStore()
    rig = Rig([S.text("Paris.")], cache=[ResponseCache(store)])
    await rig.ask("Capital of France?")
    await rig.ask("Capital of France?")
    await rig.ask("Capital of France?")
    assert store.stats["sets"] == 1
    await rig.close()


async def test_two_users_never_share_an_answer() -> None:
    """With the default scope, one user's cached answer is not served to another."""
    rig = Rig([S.text("For alice."), S.text("For bob.")], cache=[ResponseCache(MemoryStore())])
    alice = await rig.ask("My balance?", user="alice")
    bob = await rig.ask("My balance?", user="bob")
    assert (text_of(alice), text_of(bob)) == ("For alice.", "For bob.")
    assert rig.model.calls == 2
    await rig.close()


async def test_app_scope_shares_across_users() -> None:
    """scope='app' widens sharing to every user of the app, on purpose."""
    rig = Rig([S.text("Paris.")], cache=[ResponseCache(MemoryStore(), scope="app")])
    await rig.ask("Capital of France?", user="alice")
    bob = await rig.ask("Capital of France?", user="bob")
    assert text_of(bob) == "Paris."
    assert rig.model.calls == 1
    await rig.close()


async def test_session_scope_does_not_share_across_sessions() -> None:
    """scope='session' keeps entries to one session."""
    rig = Rig([S.text("one"), S.text("two")], cache=[ResponseCache(MemoryStore(), scope="session")])
    await rig.ask("Hi")
    await rig.ask("Hi")
    assert rig.model.calls == 2
    await rig.close()


async def test_callable_scope_returning_none_disables_caching() -> None:
    """A scope callable that returns None turns caching off for that request."""

    def scope(ctx: Context) -> str | None:
        return None if ctx.user_id == "anon" else ctx.user_id

    cache = ResponseCache(MemoryStore(), scope=scope)
    rig = Rig([S.text("one"), S.text("two")], cache=[cache])
    await rig.ask("Hi", user="anon")
    await rig.ask("Hi", user="anon")
    assert rig.model.calls == 2
    assert cache.stats["unscoped"] == 2
    await rig.close()


@on("before_model")
def _want_fresh(*, callback_context: Context, llm_request: object) -> None:
    if callback_context.state.get("fresh"):
        callback_context.state["temp:adk_lattice.no_cache"] = True


async def test_no_cache_state_skips_the_lookup() -> None:
    """A truthy temp: no-cache key set earlier in the turn sends the request to the model."""
    rig = Rig(
        [S.text("old"), S.text("fresh")],
        cache=[ResponseCache(MemoryStore())],
        policy=[_want_fresh],
    )
    await rig.ask("News?")
    fresh = await rig.ask("News?", state={"fresh": True})
    assert text_of(fresh) == "fresh"
    assert rig.model.calls == 2
    await rig.close()


async def test_no_store_state_keeps_the_answer_out_of_the_store() -> None:
    """A truthy no-store state key (declared by name) stops the answer being stored."""
    store = MemoryStore()
    cache = ResponseCache(store, no_store_key="user:private")
    rig = Rig([S.text("secret"), S.text("again")], cache=[cache])
    await rig.ask("Tell me", state={"user:private": True})
    await rig.ask("Tell me", state={"user:private": False})
    assert rig.model.calls == 2
    assert cache.stats["not_stored.no_store"] == 1
    await rig.close()


async def test_entry_expires_after_the_cache_ttl() -> None:
    """Past the TTL the model is asked again."""
    rig = Rig([S.text("one"), S.text("two")], cache=[ResponseCache(MemoryStore(), ttl=0.1)])
    await rig.ask("Hi")
    await asyncio.sleep(0.2)
    second = await rig.ask("Hi")
    assert text_of(second) == "two"
    await rig.close()


async def test_corrupt_entry_is_a_counted_miss_and_is_replaced() -> None:
    """An unreadable entry is dropped, counted, and the fresh answer stored over it."""
    store = MemoryStore()
    cache = ResponseCache(store)
    rig = Rig([S.text("one"), S.text("two")], cache=[cache])
    await rig.ask("Hi")
    [key] = list(store._entries)
    await store.set(key, b"{not json")
    second = await rig.ask("Hi")
    assert text_of(second) == "two"
    assert cache.stats["corrupt"] == 1
    assert b"two" in (await store.get(key) or b"")
    await rig.close()


async def test_concurrent_identical_misses_make_one_model_call_when_coalescing() -> None:
    """With coalesce=True, identical requests in flight wait for the first model call."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True)
    model = SlowModel(script=[S.text("once"), S.text("twice"), S.text("thrice")])
    rig = Rig([], cache=[cache], model=model)
    answers = await asyncio.gather(*(rig.ask("Hi", user=f"u{i}") for i in range(3)))
    assert [text_of(a) for a in answers] == ["once"] * 3
    assert (model.calls, cache.stats["coalesced"]) == (1, 2)
    await rig.close()


async def test_without_coalescing_concurrent_misses_each_call_the_model() -> None:
    """By default concurrent identical misses each call the model."""
    model = SlowModel(script=[S.text("a"), S.text("b")])
    rig = Rig([], cache=[ResponseCache(MemoryStore(), scope="app")], model=model)
    await asyncio.gather(rig.ask("Hi", user="x"), rig.ask("Hi", user="y"))
    assert model.calls == 2
    await rig.close()


def test_bad_settings_are_refused() -> None:
    """An unknown scope, a bad TTL or a name with ':' is a clear error."""
    with pytest.raises(ValueError, match="scope"):
        ResponseCache(MemoryStore(), scope="tenant")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl"):
        ResponseCache(MemoryStore(), ttl=0)
    with pytest.raises(ValueError, match="name"):
        ResponseCache(MemoryStore(), name="a:b")


async def test_a_broken_scope_callable_fails_open() -> None:
    """A scope callable returning a non-string is a cache error: the turn is still answered."""
    rig = Rig([S.text("answered")], cache=[ResponseCache(MemoryStore(), scope=lambda ctx: 42)])
    assert text_of(await rig.ask("Hi")) == "answered"
    assert rig.lattice.stats[("error", "before_model", "response_cache")] == 1
    await rig.close()


def test_a_store_that_is_not_a_store_is_refused() -> None:
    """Passing something without get/set/delete is a clear TypeError."""
    with pytest.raises(TypeError, match="store must be a Store"):
        ResponseCache("redis://localhost")  # type: ignore[arg-type]
