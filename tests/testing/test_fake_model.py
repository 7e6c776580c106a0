"""FakeModel: scripted turns, streaming, usage, errors, strict scripts and expectations."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import errors, types

from adk_lattice.testing import (
    FakeModel,
    FunctionCall,
    ScriptedResponse,
    ScriptExhaustedError,
    ScriptExhaustedWarning,
    llm_request,
)


async def collect(model: FakeModel, request: LlmRequest, *, stream: bool) -> list[LlmResponse]:
    return [r async for r in model.generate_content_async(request, stream=stream)]


def texts(response: LlmResponse) -> list[str]:
    assert response.content is not None
    return [p.text for p in response.content.parts or () if p.text is not None]


async def test_non_streaming_yields_only_the_final_response() -> None:
    """Without streaming, one response carries the concatenated text, as Gemini's does."""
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    (only,) = await collect(model, llm_request("hi"), stream=False)
    assert texts(only) == ["Hello"]
    assert (only.partial, only.turn_complete) == (None, None)
    assert only.finish_reason == types.FinishReason.STOP


async def test_streaming_yields_one_partial_per_chunk_then_the_final() -> None:
    """With streaming, each chunk is a partial response, then one final full response."""
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    responses = await collect(model, llm_request("hi"), stream=True)
    assert [r.partial for r in responses] == [True, True, False]
    assert [texts(r) for r in responses] == [["Hel"], ["lo"], ["Hello"]]
    assert responses[-1].turn_complete is None


async def test_function_calls_ride_on_the_final_response() -> None:
    """Scripted function calls appear as function_call parts with their args and id."""
    model = FakeModel(
        [
            ScriptedResponse(
                function_calls=[
                    FunctionCall("lookup", {"id": "c1"}, id="f1"),
                    ("refund", {"amount": 5}),
                ]
            )
        ]
    )
    (final,) = await collect(model, llm_request("hi"), stream=False)
    assert final.content is not None
    calls = [p.function_call for p in final.content.parts or () if p.function_call]
    assert [(c.name, c.args, c.id) for c in calls] == [
        ("lookup", {"id": "c1"}, "f1"),
        ("refund", {"amount": 5}, None),
    ]


async def test_usage_arrives_as_the_gemini_api_sends_it() -> None:
    """Streamed chunks report the prompt's tokens; the last chunk and the final add output."""
    model = FakeModel([ScriptedResponse(text_chunks=["a", "b"], input_tokens=7, output_tokens=3)])
    responses = await collect(model, llm_request("hi"), stream=True)
    usage = [r.usage_metadata for r in responses]
    assert [(u.prompt_token_count, u.candidates_token_count) for u in usage if u] == [
        (7, None),
        (7, 3),
        (7, 3),
    ]
    assert usage[-1] is not None
    assert usage[-1].total_token_count == 10


async def test_usage_is_counted_from_the_text_by_default() -> None:
    """Without scripted counts, usage is estimated from the request's and answer's text."""
    model = FakeModel([ScriptedResponse.text("twelve chars")])
    (final,) = await collect(model, llm_request("sixteen chars.."), stream=False)
    usage = final.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (4, 3)
    assert usage.total_token_count == 7


async def test_usage_false_reports_no_usage() -> None:
    """usage=False stands for a provider that reports no token usage."""
    model = FakeModel([ScriptedResponse.text("hi", usage=False)])
    (final,) = await collect(model, llm_request("hi"), stream=False)
    assert final.usage_metadata is None


async def test_exhausted_script_warns_and_answers_an_empty_response() -> None:
    """A call beyond a non-strict script warns and gets an empty response."""
    model = FakeModel([])
    with pytest.warns(ScriptExhaustedWarning, match=r"call 0 .* only 0 turn.*'hi'"):
        (final,) = await collect(model, llm_request("hi"), stream=False)
    assert final.content is None
    assert final.finish_reason == types.FinishReason.STOP


async def test_loop_starts_the_script_again() -> None:
    """FakeModel(loop=True) answers the first turn again once the script runs out."""
    model = FakeModel([ScriptedResponse.text("a"), ScriptedResponse.text("b")], loop=True)
    answers = [await collect(model, llm_request("hi"), stream=False) for _ in range(5)]
    assert [texts(only) for (only,) in answers] == [["a"], ["b"], ["a"], ["b"], ["a"]]


async def test_per_conversation_replays_the_script_for_each_conversation() -> None:
    """per_conversation=True picks the turn by the model turns already in the history."""
    model = FakeModel(
        [ScriptedResponse.text("first"), ScriptedResponse.text("second")],
        per_conversation=True,
        strict=True,
    )
    fresh = llm_request("hi")
    later = llm_request(
        contents=[
            types.Content(role="user", parts=[types.Part(text="hi")]),
            types.Content(role="model", parts=[types.Part(text="first")]),
            types.Content(role="user", parts=[types.Part(text="and?")]),
        ]
    )
    answers = [await collect(model, r, stream=False) for r in (fresh, fresh, later, fresh)]
    assert [texts(only) for (only,) in answers] == [["first"], ["first"], ["second"], ["first"]]
    model.assert_consumed()


async def test_shared_model_serves_many_sessions_per_conversation() -> None:
    """One per_conversation model shared by many sessions answers each one in full."""
    model = FakeModel([ScriptedResponse.text("Hello.")], per_conversation=True, strict=True)
    runner = Runner(
        app=App(name="app", root_agent=LlmAgent(name="a", model=model)),
        session_service=InMemorySessionService(),
    )
    replies = []
    for n in range(4):
        session = await runner.session_service.create_session(app_name="app", user_id=f"u{n}")
        message = types.Content(role="user", parts=[types.Part(text="hi")])
        async for event in runner.run_async(
            user_id=f"u{n}", session_id=session.id, new_message=message
        ):
            replies += [p.text for p in (event.content.parts if event.content else []) if p.text]
    assert replies == ["Hello."] * 4


async def test_http_error_raises_what_google_genai_raises() -> None:
    """http_error(503) raises google-genai's ServerError with Google's status and code."""
    model = FakeModel([ScriptedResponse.http_error(503, "overloaded")])
    with pytest.raises(errors.ServerError) as caught:
        await collect(model, llm_request("hi"), stream=False)
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        503,
        "UNAVAILABLE",
        "overloaded",
    )


async def test_http_error_after_chunks_arrives_mid_stream() -> None:
    """Streamed text chunks of an http_error turn arrive before the error is raised."""
    model = FakeModel([ScriptedResponse(text_chunks=["Hel"], http_status=500)])
    seen: list[LlmResponse] = []

    async def consume() -> None:
        async for response in model.generate_content_async(llm_request("hi"), stream=True):
            seen.append(response)

    with pytest.raises(errors.ServerError):
        await consume()
    assert [texts(r) for r in seen] == [["Hel"]]


def test_unknown_http_status_is_refused() -> None:
    """An HTTP status Google's APIs do not use for errors is a clear ValueError."""
    with pytest.raises(ValueError, match="http_status"):
        ScriptedResponse.http_error(200)


async def test_safety_error_code_is_the_finish_reason() -> None:
    """provider_error("SAFETY") reports SAFETY as both error code and finish reason."""
    model = FakeModel([ScriptedResponse.provider_error("SAFETY", "blocked")])
    (final,) = await collect(model, llm_request("hi"), stream=False)
    assert (final.error_code, final.finish_reason) == ("SAFETY", types.FinishReason.SAFETY)


async def test_strict_model_raises_on_a_call_beyond_the_script() -> None:
    """FakeModel(strict=True) raises ScriptExhaustedError naming the call and the user text."""
    model = FakeModel([ScriptedResponse.text("one")], strict=True)
    await collect(model, llm_request("first"), stream=False)
    with pytest.raises(ScriptExhaustedError, match=r"call 1 .* only 1 turn.*'second'"):
        await collect(model, llm_request("second"), stream=False)


async def test_scripted_error_is_raised() -> None:
    """A turn with error raises that exception instead of answering."""
    model = FakeModel([ScriptedResponse(error=ConnectionError("provider down"))])
    with pytest.raises(ConnectionError, match="provider down"):
        await collect(model, llm_request("hi"), stream=False)


async def test_provider_error_is_reported_in_the_response() -> None:
    """A provider_error turn answers with error_code/error_message and no content."""
    model = FakeModel([ScriptedResponse.provider_error("SAFETY", "blocked")])
    (final,) = await collect(model, llm_request("hi"), stream=False)
    assert (final.error_code, final.error_message) == ("SAFETY", "blocked")
    assert final.content is None


def test_error_message_without_code_is_refused() -> None:
    """An error_message without an error_code is a clear ValueError."""
    with pytest.raises(ValueError, match="error_code"):
        ScriptedResponse(error_message="blocked")


def test_negative_delay_is_refused() -> None:
    """A negative delay is a clear ValueError."""
    with pytest.raises(ValueError, match="delay"):
        ScriptedResponse(delay=-1)


async def test_delay_holds_the_answer_back() -> None:
    """A delayed turn lets other tasks run before it answers."""
    model = FakeModel([ScriptedResponse(text_chunks=["late"], delay=0.05)])
    order: list[str] = []

    async def other() -> None:
        await asyncio.sleep(0)
        order.append("other")

    async def answer() -> None:
        await collect(model, llm_request("hi"), stream=False)
        order.append("model")

    await asyncio.gather(answer(), other())
    assert order == ["other", "model"]


async def test_calls_and_requests_are_recorded() -> None:
    """calls counts invocations and requests keeps a copy of each request."""
    model = FakeModel([ScriptedResponse.text("a"), ScriptedResponse.text("b")])
    request = llm_request("first")
    await collect(model, request, stream=False)
    request.contents.append(types.Content(role="user", parts=[types.Part(text="later")]))
    await collect(model, llm_request("second"), stream=False)
    assert model.calls == 2
    assert [len(r.contents) for r in model.requests] == [1, 1]
    assert model.requests[1].contents[0].parts[0].text == "second"


async def test_recorded_request_keeps_its_parts_as_they_arrived() -> None:
    """A part replaced or re-set after the call does not change the recorded request."""
    model = FakeModel([ScriptedResponse.text("a")])
    request = llm_request("first")
    request.config.system_instruction = "be brief"
    await collect(model, request, stream=False)
    request.contents[0].parts[0].text = "changed"
    request.contents[0].parts.append(types.Part(text="added"))
    request.config.system_instruction = "changed"
    (recorded,) = model.requests
    assert [p.text for p in recorded.contents[0].parts] == ["first"]
    assert recorded.config.system_instruction == "be brief"


async def test_expect_passes_when_the_request_matches() -> None:
    """An expect callable that holds lets the turn answer normally."""

    def asks_for_refund(request: LlmRequest) -> None:
        assert "refund" in request.contents[-1].parts[0].text

    model = FakeModel([ScriptedResponse.text("ok", expect=asks_for_refund)])
    (final,) = await collect(model, llm_request("a refund please"), stream=False)
    assert texts(final) == ["ok"]
    model.assert_consumed()


async def test_expect_failure_fails_the_call_and_is_reported_later() -> None:
    """A failing expect raises in the call and again from assert_consumed."""

    def never(request: LlmRequest) -> None:
        raise AssertionError("wrong request")

    model = FakeModel([ScriptedResponse.text("ok", expect=never)])
    with pytest.raises(AssertionError, match="turn 0: expectation failed: wrong request"):
        await collect(model, llm_request("hi"), stream=False)
    with pytest.raises(AssertionError, match="expectation failed: wrong request"):
        model.assert_consumed()


async def test_assert_consumed_lists_unconsumed_turns() -> None:
    """assert_consumed names every scripted turn that no call reached."""
    model = FakeModel([ScriptedResponse.text("a"), ScriptedResponse.call("refund", amount=5)])
    await collect(model, llm_request("hi"), stream=False)
    with pytest.raises(AssertionError, match=r"turn 1 was never requested: call refund\("):
        model.assert_consumed()


async def test_assert_consumed_is_quiet_when_all_turns_were_used() -> None:
    """assert_consumed passes once every turn has answered."""
    model = FakeModel([ScriptedResponse.text("a")])
    await collect(model, llm_request("hi"), stream=False)
    model.assert_consumed()


async def test_works_as_the_model_of_an_llm_agent_in_a_runner() -> None:
    """An LlmAgent on FakeModel runs in a real Runner and answers the scripted text."""
    model = FakeModel([ScriptedResponse.text("Hello there.")], strict=True)
    agent = LlmAgent(name="greeter", model=model)
    service = InMemorySessionService()
    runner = Runner(app=App(name="app", root_agent=agent), session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]
    assert [p.text for e in events for p in (e.content.parts if e.content else [])] == [
        "Hello there."
    ]
    model.assert_consumed()


async def test_thoughts_come_first_and_apart_from_the_answer() -> None:
    """Scripted thoughts stream as thought parts, and the final keeps them apart from the text."""
    model = FakeModel([ScriptedResponse(thoughts=["Check the charge."], text_chunks=["Done."])])
    responses = await collect(model, llm_request("hi"), stream=True)
    final = responses[-1]
    assert final.content is not None
    parts = [(p.thought, p.text) for p in final.content.parts or ()]
    assert parts == [(True, "Check the charge."), (None, "Done.")]
    assert final.usage_metadata is not None
    assert final.usage_metadata.thoughts_token_count == 5
