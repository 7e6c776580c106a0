"""ResponseCache bookkeeping between calls: waiters, bypasses and calls that never ended."""

from __future__ import annotations

import asyncio
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Outcome
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.testing import ScriptedResponse, callback_context, llm_request
from tests.cache.rig import Rig, SlowModel, text_of

S = ScriptedResponse


def _answer(text: str = "Paris.") -> LlmResponse:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return LlmResponse(content=content, finish_reason=types.FinishReason.STOP)


async def test_a_waiter_on_an_unstored_answer_calls_the_model_without_a_corrupt_entry() -> None:
    """When the call a request waited on gives an answer not fit to store, the waiter calls
    the model itself, and no entry is counted as corrupt."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True)
    cut_off = S.text("Par", finish_reason=types.FinishReason.MAX_TOKENS)
    model = SlowModel(script=[cut_off, S.text("Paris.")])
    rig = Rig([], cache=[cache], model=model)
    answers = await asyncio.gather(rig.ask("Capital?", user="a"), rig.ask("Capital?", user="b"))
    await rig.close()
    assert sorted(text_of(a) for a in answers) == ["Par", "Paris."]
    assert model.calls == 2
    assert (cache.stats["corrupt"], cache.stats["coalesced"]) == (0, 0)


async def test_a_no_store_request_after_a_call_that_never_ended_stores_nothing() -> None:
    """An answer to a no_store request is not stored, even when the agent's previous model
    call never reached after_model."""
    store = MemoryStore()
    cache = ResponseCache(store)
    ctx = callback_context()
    await cache.before_model(callback_context=ctx, llm_request=llm_request("Hi"))
    ctx.state[cache.no_store_key] = True
    await cache.before_model(callback_context=ctx, llm_request=llm_request("Next"))
    args: dict[str, Any] = {"callback_context": ctx, "llm_response": _answer()}
    await cache.observe(Outcome("after_model", args))
    assert (store.stats["sets"], cache.stats["stores"]) == (0, 0)


async def test_a_bypassing_request_leaves_the_waiters_of_an_identical_call_served() -> None:
    """A no_cache request identical to a call in flight does not cut off the requests waiting
    on that call: they are served its answer when it is stored."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True, coalesce_timeout=10)
    leader = callback_context(user_id="a")
    await cache.before_model(callback_context=leader, llm_request=llm_request("Hi"))
    waiter = asyncio.create_task(
        cache.before_model(
            callback_context=callback_context(user_id="b"), llm_request=llm_request("Hi")
        )
    )
    await asyncio.sleep(0)
    bypass = callback_context(user_id="c")
    bypass.state[cache.no_cache_key] = True
    await cache.before_model(callback_context=bypass, llm_request=llm_request("Hi"))
    args: dict[str, Any] = {"callback_context": leader, "llm_response": _answer()}
    await cache.observe(Outcome("after_model", args))
    served = await asyncio.wait_for(waiter, 5)
    assert served is not None and served.content is not None
    assert served.content.parts is not None and served.content.parts[0].text == "Paris."
    assert cache.stats["coalesced"] == 1
