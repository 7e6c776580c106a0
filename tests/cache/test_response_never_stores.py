"""What ResponseCache never stores: fragments, errors, blocked, marked, non-STOP, calls."""

from __future__ import annotations

import json

import pytest
from google.adk.agents.context import Context
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import on
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import RecordingStore, Rig, text_of

S = ScriptedResponse


def _reply(text: str, **meta: object) -> LlmResponse:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return LlmResponse(content=content, custom_metadata=meta or None)


def lookup_charge(charge_id: str) -> dict[str, str]:
    """Look up a charge."""
    return {"charge_id": charge_id, "amount": "10.00"}


async def test_streamed_chunks_are_never_stored_only_the_final_answer() -> None:
    """In SSE mode exactly one entry is written: the whole final text, no fragment."""
    store = RecordingStore()
    rig = Rig([S(text_chunks=("Hel", "lo ", "there"))], cache=[ResponseCache(store)])
    events = await rig.ask("Hi", sse=True)
    assert any(e.partial for e in events)
    [entry] = store.written
    parts = json.loads(entry)["response"]["content"]["parts"]
    assert parts == [{"text": "Hello there"}]
    await rig.close()


async def test_a_hit_in_sse_mode_is_one_complete_event() -> None:
    """A cached answer served in SSE mode arrives as one non-partial event."""
    rig = Rig([S(text_chunks=("Hel", "lo"))], cache=[ResponseCache(MemoryStore())])
    await rig.ask("Hi", sse=True)
    events = await rig.ask("Hi", sse=True)
    model_events = [e for e in events if e.author == "assistant"]
    assert [(e.partial, text_of([e])) for e in model_events] == [(None, "Hello")]
    assert rig.model.calls == 1
    await rig.close()


async def test_a_model_exception_is_not_stored() -> None:
    """A model call that raised leaves nothing behind; the next identical request calls it."""
    cache = ResponseCache(MemoryStore())
    rig = Rig([S(error=RuntimeError("provider down")), S.text("ok")], cache=[cache])
    with pytest.raises(RuntimeError, match="provider down"):
        await rig.ask("Hi")
    assert text_of(await rig.ask("Hi")) == "ok"
    assert (rig.model.calls, cache.stats["not_stored.error"]) == (2, 1)
    await rig.close()


async def test_an_error_response_is_not_stored() -> None:
    """A response carrying error_code is not stored."""
    cache = ResponseCache(MemoryStore())
    rig = Rig([S.provider_error("RESOURCE_EXHAUSTED", "quota"), S.text("ok")], cache=[cache])
    await rig.ask("Hi")
    assert text_of(await rig.ask("Hi")) == "ok"
    assert cache.stats["not_stored.error"] == 1
    await rig.close()


@on("on_model_error")
def _fallback(**_: object) -> LlmResponse:
    return _reply("Please try again later.")


async def test_a_fallback_for_a_model_error_is_not_stored() -> None:
    """An answer a handler made up for a failed model call is not stored."""
    store = MemoryStore()
    rig = Rig(
        [S(error=RuntimeError("down")), S.text("ok")],
        cache=[ResponseCache(store)],
        handlers=[_fallback],
    )
    assert text_of(await rig.ask("Hi")) == "Please try again later."
    assert text_of(await rig.ask("Hi")) == "ok"
    assert store.stats["sets"] == 1
    await rig.close()


@on("before_model")
def _block_flagged(*, callback_context: Context, llm_request: object) -> LlmResponse | None:
    return _reply("Blocked.") if callback_context.state.get("blocked") else None


async def test_a_request_blocked_by_policy_is_not_stored_or_served() -> None:
    """A policy denial is neither stored nor served to the next, allowed request."""
    store = MemoryStore()
    rig = Rig([S.text("real")], cache=[ResponseCache(store)], policy=[_block_flagged])
    assert text_of(await rig.ask("Hi", state={"blocked": True})) == "Blocked."
    assert text_of(await rig.ask("Hi")) == "real"
    assert store.stats["sets"] == 1
    await rig.close()


@on("after_model")
def _replace_answer(**_: object) -> LlmResponse:
    return _reply("Policy says no.")


async def test_an_answer_a_policy_replaced_is_not_stored() -> None:
    """A policy's after_model replacement is a denial and is not stored."""
    cache = ResponseCache(MemoryStore())
    rig = Rig([S.text("a"), S.text("b")], cache=[cache], policy=[_replace_answer])
    await rig.ask("Hi")
    await rig.ask("Hi")
    assert (rig.model.calls, cache.stats["not_stored.denied"]) == (2, 2)
    await rig.close()


@on("after_model")
def _mark_answer(**_: object) -> LlmResponse:
    return _reply("made by the lattice", adk_lattice={"made_by": "test"})


async def test_a_response_marked_by_the_lattice_is_not_stored() -> None:
    """A response carrying custom_metadata['adk_lattice'] is not stored."""
    cache = ResponseCache(MemoryStore())
    rig = Rig([S.text("a")], cache=[cache], handlers=[_mark_answer])
    await rig.ask("Hi")
    assert cache.stats["not_stored.marked"] == 1
    await rig.close()


@on("before_model")
def _serve_canned(**_: object) -> LlmResponse:
    return _reply("canned")


async def test_a_short_circuit_by_a_later_handler_is_not_stored() -> None:
    """A response a custom handler served after the cache missed is not stored."""
    cache = ResponseCache(MemoryStore())
    rig = Rig([], cache=[cache], handlers=[_serve_canned])
    assert text_of(await rig.ask("Hi")) == "canned"
    assert (cache.stats["not_stored.synthesized"], cache.stats["stores"]) == (1, 0)
    await rig.close()


async def test_a_non_stop_finish_is_not_stored() -> None:
    """A response cut off (MAX_TOKENS) is not stored."""
    cache = ResponseCache(MemoryStore())
    cut = S.text("Par", finish_reason=types.FinishReason.MAX_TOKENS)
    rig = Rig([cut, S.text("Paris.")], cache=[cache])
    await rig.ask("Capital?")
    assert text_of(await rig.ask("Capital?")) == "Paris."
    assert cache.stats["not_stored.finish_reason"] == 1
    await rig.close()


async def test_function_call_answers_are_not_stored_by_default() -> None:
    """A tool-call answer is asked afresh; the answer after the tool hits (ids ignored)."""
    cache = ResponseCache(MemoryStore())
    script = [S.call("lookup_charge", charge_id="c1"), S.text("It is 10.00.")] * 2
    rig = Rig(script, cache=[cache], tools=[lookup_charge])
    await rig.ask("Charge c1?")
    second = await rig.ask("Charge c1?")
    assert text_of(second) == "It is 10.00."
    assert (rig.model.calls, cache.stats["not_stored.function_call"]) == (3, 2)
    await rig.close()


async def test_function_call_answers_are_stored_when_enabled() -> None:
    """With cache_function_calls=True the call is replayed with a fresh id; no model call."""
    cache = ResponseCache(MemoryStore(), cache_function_calls=True)
    script = [S.call("lookup_charge", charge_id="c1"), S.text("It is 10.00.")]
    rig = Rig(script, cache=[cache], tools=[lookup_charge])
    first = await rig.ask("Charge c1?")
    second = await rig.ask("Charge c1?")
    ids = [e.get_function_calls()[0].id for e in (*first, *second) if e.get_function_calls()]
    assert rig.model.calls == 2
    assert len(ids) == 2 and all(ids) and ids[0] != ids[1]
    assert text_of(second) == "It is 10.00."
    await rig.close()
