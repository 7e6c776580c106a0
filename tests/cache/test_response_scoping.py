"""ResponseCache: agent scoping, stored tool calls, Content instructions, failed leaders."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.cache import MemoryStore, ResponseCache, request_digest, request_material
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse
from tests.cache.rig import RecordingStore, Rig, SlowModel, text_of

S = ScriptedResponse


async def test_agents_limits_caching_to_the_named_agents() -> None:
    """agents= names the agents whose model calls are cached; others always reach the model."""
    cache = ResponseCache(MemoryStore(), agents={"assistant"})
    rig = Rig([S.text("Paris."), S.text("unused")], cache=[cache])
    await rig.ask("Capital of France?")
    await rig.ask("Capital of France?")
    assert rig.model.calls == 1
    await rig.close()


async def test_agents_leaves_other_agents_uncached() -> None:
    """A cache scoped to another agent neither serves nor stores this agent's answers."""
    store = MemoryStore()
    cache = ResponseCache(store, agents={"researcher"})
    researcher = LlmAgent(name="researcher", model=FakeModel())
    rig = Rig([S.text("Paris."), S.text("Paris again.")], cache=[cache], sub_agents=[researcher])
    await rig.ask("Capital of France?")
    second = await rig.ask("Capital of France?")
    assert (text_of(second), rig.model.calls) == ("Paris again.", 2)
    assert store.stats["sets"] == 0
    await rig.close()


def lookup(city: str) -> dict[str, Any]:
    """Look up a city."""
    return {"city": city, "population": 2_100_000}


async def test_stored_tool_calls_carry_no_call_id() -> None:
    """With cache_function_calls=True a stored tool call has no id: each replay gets a fresh one."""
    store = RecordingStore()
    cache = ResponseCache(store, cache_function_calls=True)
    call = S(function_calls=(FunctionCall("lookup", {"city": "Paris"}, id="call-7f3a"),))
    rig = Rig([call, S.text("About 2.1 million.")], cache=[cache], tools=[lookup])
    await rig.ask("How many live in Paris?")
    entries = [json.loads(raw) for raw in store.written]
    calls = [
        p["function_call"]
        for e in entries
        for p in e["response"]["content"]["parts"]
        if "function_call" in p
    ]
    assert calls == [{"name": "lookup", "args": {"city": "Paris"}}]
    await rig.close()


def _with_instruction(instruction: Any) -> LlmRequest:
    config = types.GenerateContentConfig(system_instruction=instruction)
    contents = [types.Content(role="user", parts=[types.Part(text="Hi")])]
    return LlmRequest(model="fake-model", contents=contents, config=config)


def _instruction(text: str) -> types.Content:
    return types.Content(role="system", parts=[types.Part(text=text)])


def test_a_system_instruction_given_as_content_is_in_the_key() -> None:
    """A Content system instruction is keyed by its text: a different one is a different key."""
    brief = request_digest(_with_instruction(_instruction("Be brief.")))
    assert brief == request_digest(_with_instruction(_instruction("Be brief.")))
    assert brief != request_digest(_with_instruction(_instruction("Be verbose.")))
    material = request_material(_with_instruction(_instruction("Be brief.")))
    assert material["system_instruction"] == {
        "parts": [{"text": "Be brief."}],
        "role": "system",
    }


async def test_waiters_call_the_model_themselves_when_the_leader_fails() -> None:
    """When the first of coalesced identical calls fails, the waiters are released at once."""
    cache = ResponseCache(MemoryStore(), scope="app", coalesce=True)
    model = SlowModel(
        script=[S(error=ConnectionError("provider down")), S.text("second"), S.text("third")]
    )
    rig = Rig([], cache=[cache], model=model)

    async def ask(user: str) -> Any:
        try:
            return text_of(await rig.ask("Hi", user=user))
        except ConnectionError:
            return "failed"

    # Far below the 30 s coalesce timeout: a waiter left hanging fails this bound.
    answers = await asyncio.wait_for(asyncio.gather(*(ask(f"u{i}") for i in range(3))), 10)
    assert sorted(answers) == ["failed", "second", "third"]
    assert cache.stats["coalesced"] == 0
    await rig.close()
