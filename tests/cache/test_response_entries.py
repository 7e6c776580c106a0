"""ResponseCache entries: what is stored, how a hit is marked, counted and noted."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Outcome
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import ScriptedResponse, callback_context, llm_request
from tests.cache.rig import RecordingStore, Rig, SlowModel, text_of

S = ScriptedResponse


async def test_an_entry_holds_the_replayable_fields_as_json() -> None:
    """An entry is versioned JSON with the time it was stored and the answer, without usage."""
    store = RecordingStore()
    rig = Rig([S.text("Paris.", input_tokens=5, output_tokens=2)], cache=[ResponseCache(store)])
    before = time.time()
    await rig.ask("Capital of France?")
    (raw,) = store.written
    entry = json.loads(raw)
    assert sorted(entry) == ["response", "stored_at", "v"]
    assert entry["v"] == 1
    assert before <= entry["stored_at"] <= time.time()
    assert entry["response"] == {
        "content": {"role": "model", "parts": [{"text": "Paris."}]},
        "finish_reason": "STOP",
        "model_version": rig.model.model,
    }
    await rig.close()


async def _aged_hit(age: float) -> dict[str, object]:
    store = MemoryStore()
    rig = Rig([S.text("Paris.")], cache=[ResponseCache(store)])
    await rig.ask("Capital of France?")
    [key] = list(store._entries)
    entry = json.loads(await store.get(key) or b"")
    entry["stored_at"] = time.time() - age
    await store.set(key, json.dumps(entry).encode())
    events = await rig.ask("Capital of France?")
    await rig.close()
    marker: dict[str, object] = events[-1].custom_metadata["adk_lattice"]["cache"]  # type: ignore[index]
    return marker


async def test_a_hit_says_how_old_the_answer_is() -> None:
    """The hit marker's age is the seconds since the entry was stored, to the millisecond."""
    marker = await _aged_hit(5.0)
    assert 5.0 <= marker["age"] < 6.0  # type: ignore[operator]
    assert marker["age"] == round(marker["age"], 3)  # type: ignore[arg-type]
    assert marker["coalesced"] is False


async def test_an_entry_from_the_future_is_zero_seconds_old() -> None:
    """A clock that moved back never makes a negative age."""
    marker = await _aged_hit(-30.0)
    assert marker["age"] == 0.0


async def test_hits_and_corrupt_entries_are_counted_and_noted() -> None:
    """Each hit counts once; each corrupt entry counts once and is noted cache_error corrupt."""
    store = MemoryStore()
    cache = ResponseCache(store, name="answers")
    rig = Rig([S.text("one"), S.text("two"), S.text("three")], cache=[cache])
    await rig.ask("Hi")
    await rig.ask("Hi")
    await rig.ask("Hi")
    assert cache.stats["hits"] == 2
    [key] = list(store._entries)
    for _ in range(2):
        await store.set(key, b"{not json")
        rig.recorder.outcomes.clear()
        await rig.ask("Hi")
    assert cache.stats["corrupt"] == 2
    notes = [(n.handler, n.decision, n.reason) for o in rig.recorder.outcomes for n in notes_of(o)]
    assert ("answers", "cache_error", "corrupt") in notes
    await rig.close()


async def test_a_stored_entry_serves_only_the_fields_the_cache_keeps() -> None:
    """Fields another writer added to an entry (error code, usage, partial) are not served."""
    store = MemoryStore()
    rig = Rig([S.text("Paris.")], cache=[ResponseCache(store)])
    await rig.ask("Capital of France?")
    [key] = list(store._entries)
    entry = json.loads((await store.get(key)) or b"")
    entry["response"] |= {
        "error_code": "SAFETY",
        "partial": True,
        "interrupted": True,
        "usage_metadata": {"prompt_token_count": 10**12},
    }
    await store.set(key, json.dumps(entry).encode())
    [event] = [e for e in await rig.ask("Capital of France?") if e.content]
    assert (text_of([event]), rig.model.calls) == ("Paris.", 1)
    assert (event.error_code, event.partial, event.interrupted) == (None, None, None)
    assert event.usage_metadata is None
    await rig.close()


async def test_an_entry_nested_past_the_recursion_limit_is_a_corrupt_miss() -> None:
    """An entry of JSON nested 100,000 deep is a corrupt miss: the model answers, the
    fresh answer replaces it."""
    store = MemoryStore()
    cache = ResponseCache(store)
    rig = Rig([S.text("one"), S.text("two")], cache=[cache])
    await rig.ask("Hi")
    [key] = list(store._entries)
    await store.set(key, b'{"response":' + b"[" * 100_000)
    assert text_of(await rig.ask("Hi")) == "two"
    assert text_of(await rig.ask("Hi")) == "two"
    assert (cache.stats["corrupt"], rig.model.calls) == (1, 2)
    await rig.close()


async def test_a_coalesced_hit_is_marked_as_such() -> None:
    """A request served by another request's model call carries coalesced=True."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True)
    rig = Rig([], cache=[cache], model=SlowModel(script=[S.text("once")]))
    answers = await asyncio.gather(rig.ask("Hi", user="a"), rig.ask("Hi", user="b"))
    markers = [
        e.custom_metadata["adk_lattice"]["cache"]["coalesced"]
        for events in answers
        for e in events
        if e.custom_metadata and "adk_lattice" in e.custom_metadata
    ]
    assert markers == [True]
    await rig.close()


async def test_a_waiter_calls_the_model_itself_after_the_coalesce_timeout() -> None:
    """A request stops waiting for a slow identical call after coalesce_timeout seconds."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True, coalesce_timeout=0.05)
    model = SlowModel(script=[S.text("first"), S.text("second")], delay=0.5)
    rig = Rig([], cache=[cache], model=model)
    answers = await asyncio.gather(rig.ask("Hi", user="a"), rig.ask("Hi", user="b"))
    assert sorted(text_of(a) for a in answers) == ["first", "second"]
    assert (model.calls, cache.stats["coalesced"]) == (2, 0)
    await rig.close()


def _answer(**fields: Any) -> LlmResponse:
    content = types.Content(role="model", parts=[types.Part(text="Paris.")])
    return LlmResponse(**{"content": content, "finish_reason": types.FinishReason.STOP, **fields})


@pytest.mark.parametrize(
    ("hook", "response", "outcome_fields", "reason"),
    [
        ("on_model_error", _answer(), {}, "error"),
        ("after_model", _answer(), {"error": ConnectionError("down")}, "error"),
        ("after_model", _answer(), {"synthesized": True}, "synthesized"),
        ("after_model", _answer(), {"denied": True}, "denied"),
        ("after_model", _answer(), {"acted_tier": "policy"}, "denied"),
        ("after_model", None, {}, "empty"),
        ("after_model", _answer(partial=True), {}, "partial"),
        ("after_model", _answer(error_code="SAFETY"), {}, "error"),
        ("after_model", _answer(custom_metadata={"adk_lattice": {}}), {}, "marked"),
        ("after_model", _answer(finish_reason=types.FinishReason.MAX_TOKENS), {}, "finish_reason"),
        ("after_model", _answer(interrupted=True), {}, "interrupted"),
        ("after_model", _answer(content=types.Content(role="model", parts=[])), {}, "empty"),
        ("after_model", _answer(content=None), {}, "empty"),
    ],
)
async def test_each_unstorable_answer_is_counted_under_its_reason(
    hook: str, response: LlmResponse | None, outcome_fields: dict[str, Any], reason: str
) -> None:
    """An answer that must not be stored is counted as not_stored.<reason> and not stored."""
    store = MemoryStore()
    cache = ResponseCache(store)
    ctx, request = callback_context(), llm_request("Hi")
    await cache.before_model(callback_context=ctx, llm_request=request)
    args = {"callback_context": ctx, "llm_response": response}
    await cache.observe(Outcome(hook, args, **outcome_fields))  # type: ignore[arg-type]
    assert cache.stats[f"not_stored.{reason}"] == 1
    assert store.stats["sets"] == 0


def _noted(ctx: Any) -> list[tuple[str, str, str | None]]:
    outcome = Outcome("before_model", {"callback_context": ctx})
    return [(n.handler, n.decision, n.reason) for n in notes_of(outcome)]


async def test_skipped_lookups_are_counted_and_noted_with_their_reason() -> None:
    """An unscoped request, an unkeyable one and a no_cache bypass each count and note why."""
    unscoped = ResponseCache(MemoryStore(), name="answers", scope=lambda c: None)
    ctx = callback_context()
    await unscoped.before_model(callback_context=ctx, llm_request=llm_request("Hi"))
    assert (unscoped.stats["unscoped"], _noted(ctx)) == (1, [("answers", "cache_skip", "unscoped")])

    cache = ResponseCache(MemoryStore(), name="answers")
    call = types.Part(function_call=types.FunctionCall(name="f", args={"a": {"\ud800": 1}}))
    ctx = callback_context()
    bad = llm_request(contents=[types.Content(role="model", parts=[call])])
    await cache.before_model(callback_context=ctx, llm_request=bad)
    assert (cache.stats["unkeyed"], _noted(ctx)) == (1, [("answers", "cache_skip", "unkeyed")])

    for _ in range(2):
        ctx = callback_context()
        ctx.state["temp:adk_lattice.no_cache"] = True
        await cache.before_model(callback_context=ctx, llm_request=llm_request("Hi"))
    assert cache.stats["bypassed"] == 2
    assert _noted(ctx) == [("answers", "cache_skip", "no_cache")]


async def test_misses_are_counted_once_each() -> None:
    """Each lookup that finds nothing counts one miss."""
    cache = ResponseCache(MemoryStore())
    for text in ("Hi", "Hello"):
        await cache.before_model(callback_context=callback_context(), llm_request=llm_request(text))
    assert cache.stats["misses"] == 2


async def test_a_call_that_never_ended_releases_its_waiters() -> None:
    """A model call that never reached after_model frees the requests waiting on it."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True)
    leader = callback_context()
    await cache.before_model(callback_context=leader, llm_request=llm_request("Hi"))
    waiter = asyncio.create_task(
        cache.before_model(callback_context=callback_context(), llm_request=llm_request("Hi"))
    )
    await asyncio.sleep(0)
    # The same agent's next model call finds the first call's key still in its slot.
    await cache.before_model(callback_context=leader, llm_request=llm_request("Next"))
    assert await asyncio.wait_for(waiter, 5) is None
    assert cache.stats["coalesced"] == 0


class RefusingStore(MemoryStore):
    """A store that keeps nothing (every set fails)."""

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        return False


async def test_stores_and_no_store_requests_are_counted_and_noted() -> None:
    """Each stored answer counts once; each no_store request counts and notes no_store."""
    cache = ResponseCache(MemoryStore(), name="answers")
    rig = Rig([S.text("one"), S.text("two"), S.text("three"), S.text("four")], cache=[cache])
    await rig.ask("Hi")
    await rig.ask("Hello")
    assert cache.stats["stores"] == 2
    for text in ("Bye", "Ciao"):
        ctx = callback_context()
        ctx.state["temp:adk_lattice.no_store"] = True
        await cache.before_model(callback_context=ctx, llm_request=llm_request(text))
    assert cache.stats["not_stored.no_store"] == 2
    assert _noted(ctx) == [("answers", "cache_skip", "no_store")]
    await rig.close()


async def test_an_answer_the_store_did_not_keep_is_counted_and_never_served() -> None:
    """A failed store is counted and noted; requests waiting on it call the model themselves."""
    cache = ResponseCache(RefusingStore(), name="answers", scope="app", coalesce=True)
    model = SlowModel(script=[S.text("first"), S.text("second"), S.text("third")])
    rig = Rig([], cache=[cache], model=model)
    answers = await asyncio.gather(*(rig.ask("Hi", user=u) for u in ("a", "b", "c")))
    assert sorted(text_of(a) for a in answers) == ["first", "second", "third"]
    assert cache.stats["not_stored.store_failed"] == 3
    assert (cache.stats["coalesced"], cache.stats["corrupt"]) == (0, 0)
    notes = [(n.handler, n.decision, n.reason) for o in rig.recorder.outcomes for n in notes_of(o)]
    assert notes.count(("answers", "cache_error", "store_failed")) == 3
    await rig.close()


def test_counters_start_at_zero_and_settings_have_documented_defaults() -> None:
    """Every documented counter reads 0 before any request; ttl is an hour, waits 30 s."""
    cache = ResponseCache(MemoryStore())
    assert dict(cache.stats) == dict.fromkeys(
        ("hits", "misses", "stores", "corrupt", "bypassed", "coalesced"), 0
    )
    assert (cache.ttl, cache.coalesce_timeout) == (3600.0, 30.0)


def test_bad_ttl_and_coalesce_timeout_are_refused_with_the_rule() -> None:
    """A ttl or coalesce_timeout of zero is refused, saying what is allowed."""
    with pytest.raises(ValueError, match=r"^ttl must be a positive number of seconds or None$"):
        ResponseCache(MemoryStore(), ttl=0)
    with pytest.raises(ValueError, match=r"^coalesce_timeout must be positive$"):
        ResponseCache(MemoryStore(), coalesce_timeout=0)
