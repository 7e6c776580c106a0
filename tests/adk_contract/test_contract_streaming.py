"""ADK facts: plugin hooks under SSE streaming."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, make_runner, message, run
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.testing import FakeModel, ScriptedResponse, llm_response

SSE = RunConfig(streaming_mode=StreamingMode.SSE)


def chunked_agent() -> LlmAgent:
    turn = ScriptedResponse(text_chunks=["Hel", "lo"], input_tokens=3, output_tokens=2)
    return LlmAgent(name="a", model=FakeModel([turn]))


def text_of(response: LlmResponse) -> str:
    assert response.content is not None
    return "".join(p.text or "" for p in response.content.parts or ())


async def test_after_model_fires_per_partial_chunk_then_for_the_final() -> None:
    """Fact: in SSE, after_model runs once per partial chunk, then once for the final.

    As with the Gemini API, every chunk reports the prompt's tokens, the last chunk adds
    the output tokens, and nothing sets ``turn_complete`` (that flag is the live API's).
    """
    rec = Recorder()
    await run(chunked_agent(), rec, run_config=SSE)
    seen = [r.kwargs["llm_response"] for r in rec.of("after_model")]
    assert [(r.partial, r.turn_complete) for r in seen] == [
        (True, None),
        (True, None),
        (False, None),
    ]
    assert [text_of(r) for r in seen] == ["Hel", "lo", "Hello"]
    usage = [r.usage_metadata for r in seen]
    assert [(u.prompt_token_count, u.candidates_token_count) for u in usage if u] == [
        (3, None),
        (3, 2),
        (3, 2),
    ]


async def test_on_event_fires_for_partials_but_only_the_final_is_persisted() -> None:
    """Fact: on_event fires for partial events too; only the final event is persisted."""
    rec = Recorder()
    runner, service = make_runner(chunked_agent(), rec)
    session = await service.create_session(app_name="contract", user_id="u")
    async for _ in runner.run_async(
        user_id="u", session_id=session.id, new_message=message("hi"), run_config=SSE
    ):
        pass
    assert [r.kwargs["event"].partial for r in rec.of("on_event")] == [True, True, False]
    stored = await service.get_session(app_name="contract", user_id="u", session_id=session.id)
    assert stored is not None
    model_events = [e for e in stored.events if e.author == "a"]
    assert [e.partial for e in model_events] == [False]


async def test_replacement_for_a_chunk_inherits_partial() -> None:
    """Fact: an after_model replacement for a chunk inherits the chunk's partial flag."""

    def shout(*, llm_response: LlmResponse, **_: Any) -> LlmResponse | None:
        if not llm_response.partial:
            return None
        text = text_of(llm_response).upper()
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))

    rec = Recorder(returns={"after_model": shout})
    events = await run(chunked_agent(), rec, run_config=SSE)
    assert [(e.partial, text_of(e)) for e in events] == [
        (True, "HEL"),
        (True, "LO"),
        (False, "Hello"),
    ]


async def test_before_model_short_circuit_in_sse_yields_one_non_partial_event() -> None:
    """Fact: a before_model short-circuit under SSE yields one non-partial event."""
    rec = Recorder(returns={"before_model": llm_response("served")})
    events = await run(chunked_agent(), rec, run_config=SSE)
    assert [(bool(e.partial), text_of(e)) for e in events] == [(False, "served")]
