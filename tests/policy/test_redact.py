"""RedactPII: detectors, strategies, tool results, input, and streaming across chunks."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import noted, run_app

VALUES = {
    "EMAIL": "jane.doe@example.com",
    "CARD": "4111 1111 1111 1111",
    "SSN": "123-45-6789",
    "IBAN": "GB82 WEST 1234 5698 7654 32",
    "IP": "192.168.10.20",
    "PHONE": "+1 415-555-0132",
    "SECRET": "AKIAIOSFODNN7EXAMPLE",
}


@pytest.mark.parametrize(("kind", "value"), VALUES.items())
def test_each_builtin_kind_is_redacted(kind: str, value: str) -> None:
    """Every built-in kind is found and replaced by its label."""
    text, blocked = RedactPII().scrub(f"here: {value} thanks")
    assert text == f"here: [REDACTED:{kind}] thanks"
    assert not blocked


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112 fails Luhn",
        "order 12345 on 2024-01-02 at 10:30, total 1234.56",
        "version 1.2.3.4.5 and 999.1.1.1",
        "ignore the system error 0x80070005",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    """Numbers that fail the checks (Luhn, octets) and ordinary figures are not redacted."""
    assert RedactPII().scrub(text) == (text, False)


def test_mask_keeps_the_last_four() -> None:
    """The mask strategy hides all but the last four characters."""
    r = RedactPII(strategy="mask")
    assert r.scrub("4111111111111111")[0] == "************1111"


def test_hash_is_stable_and_keyed() -> None:
    """The hash strategy is stable for one salt and differs across salts."""
    a, b = RedactPII(strategy="hash", salt="s1"), RedactPII(strategy="hash", salt="s2")
    one = a.scrub("x jane.doe@example.com")[0]
    assert one == a.scrub("x jane.doe@example.com")[0]
    assert one != b.scrub("x jane.doe@example.com")[0]
    assert one.startswith("x [EMAIL:")


def test_block_withholds_the_answer() -> None:
    """A block strategy flags the text so the whole answer is withheld."""
    assert RedactPII(strategies={"SSN": "block"}).scrub("ssn 123-45-6789")[1] is True


def test_custom_regex_and_callable() -> None:
    """Custom detectors (a regex and a span callable) are applied with their kind."""
    r = RedactPII(
        kinds=[],
        custom={"ORDER": r"ORD-\d{6}", "NAME": lambda t: [(t.find("Ada"), t.find("Ada") + 3)]},
    )
    assert r.scrub("Ada ORD-123456")[0] == "[REDACTED:NAME] [REDACTED:ORDER]"


def test_unknown_kind_or_strategy_is_refused() -> None:
    """Unknown kinds or strategies raise ValueError at construction."""
    with pytest.raises(ValueError, match="unknown PII kinds"):
        RedactPII(kinds=["dna"])
    with pytest.raises(ValueError, match="unknown strategy"):
        RedactPII(strategy="shred")  # type: ignore[arg-type]


def test_raw_values_never_reach_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Even at debug level, only the kinds are logged, never the value."""
    with caplog.at_level(logging.DEBUG, logger="adk_lattice"):
        RedactPII().scrub("mail jane.doe@example.com")
    assert "EMAIL" in caplog.text
    assert "jane.doe" not in caplog.text


async def test_after_tool_redacts_nested_strings_in_place(ctx: Any) -> None:
    """Every string in a nested tool result is redacted in place."""
    result = {"rows": [{"email": "jane.doe@example.com", "n": 3}], "note": "ip 10.0.0.1"}
    out = RedactPII().after_tool(tool=None, tool_args={}, tool_context=await ctx(), result=result)
    assert out is None
    assert result == {"rows": [{"email": "[REDACTED:EMAIL]", "n": 3}], "note": "ip [REDACTED:IP]"}


async def test_after_tool_block_withholds_the_result(ctx: Any) -> None:
    """With block, a result holding a secret is replaced by a legible withheld notice."""
    r = RedactPII(strategies={"SECRET": "block"})
    result = {"config": "api_key=abcd1234efgh5678"}
    out = r.after_tool(tool=None, tool_args={}, tool_context=await ctx(), result=result)
    assert out is not None
    assert out["status"] == "withheld"


async def test_before_model_redacts_user_input_when_enabled(ctx: Any) -> None:
    """With inputs=True, user text is redacted before the model sees it."""
    req = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="ssn 123-45-6789")])]
    )
    assert (
        RedactPII(inputs=True).before_model(callback_context=await ctx(), llm_request=req) is None
    )
    assert req.contents[0].parts[0].text == "ssn [REDACTED:SSN]"


async def test_before_model_leaves_input_alone_by_default(ctx: Any) -> None:
    """Without inputs=True, user text is not touched."""
    req = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="ssn 123-45-6789")])]
    )
    RedactPII().before_model(callback_context=await ctx(), llm_request=req)
    assert req.contents[0].parts[0].text == "ssn 123-45-6789"


def _chunk(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]), partial=True
    )


async def test_partial_chunks_hold_back_a_tail_and_free_the_stream(ctx: Any) -> None:
    """A partial chunk holds back an unfinished value; the final response frees the stream."""
    r = RedactPII(hold=48)
    c = await ctx()
    first = _chunk("Write to jane.doe@exa")
    r.after_model(callback_context=c, llm_response=first)
    assert "jane" not in (first.content.parts[0].text or "")
    assert r.open_streams == 1
    final = LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text="Write to jane.doe@example.com")]
        ),
        partial=False,
    )
    r.after_model(callback_context=c, llm_response=final)
    assert final.content.parts[0].text == "Write to [REDACTED:EMAIL]"
    assert r.open_streams == 0


async def _stream(chunks: list[str], redactor: RedactPII) -> Any:
    model = FakeModel([ScriptedResponse(text_chunks=chunks)])
    agent = LlmAgent(name="assistant", model=model)
    config = RunConfig(streaming_mode=StreamingMode.SSE)
    return await run_app(agent, [Lattice(policy=[redactor])], "hi", run_config=config)


PREFIX = "Thanks for waiting, here is what we have on file for the account you asked about: "


@pytest.mark.parametrize(("kind", "value"), VALUES.items())
async def test_every_split_position_is_caught_through_a_runner(kind: str, value: str) -> None:
    """In SSE mode, a value split at any position never leaks and the final is redacted in full."""
    text = f"{PREFIX}{value}. Anything else?"
    expected = f"{PREFIX}[REDACTED:{kind}]. Anything else?"
    redactor = RedactPII(hold=48)
    start = len(PREFIX) - 1
    for cut in range(start, len(PREFIX) + len(value) + 2):
        run = await _stream([text[:cut], text[cut:]], redactor)
        streamed = "".join(run.partial_texts)
        assert expected.startswith(streamed), (cut, streamed)
        assert run.texts == [expected], cut
    assert redactor.open_streams == 0


@pytest.mark.parametrize(("kind", "value"), VALUES.items())
async def test_one_character_chunks_are_caught_through_a_runner(kind: str, value: str) -> None:
    """In SSE mode, a value streamed one character per chunk never leaks."""
    text = f"{PREFIX}{value}. Anything else?"
    run = await _stream(list(text), RedactPII(hold=48))
    streamed = "".join(run.partial_texts)
    assert value not in streamed
    assert f"{PREFIX}[REDACTED:{kind}]. Anything else?".startswith(streamed)
    assert len(streamed) > len(PREFIX) - 48  # text before the value still streams


async def test_block_in_a_stream_withholds_the_rest_through_a_runner() -> None:
    """In SSE mode, a blocked kind stops the stream and the final answer is the block message."""
    text = f"{PREFIX}123-45-6789 and more text that follows the value in the stream."
    r = RedactPII(strategies={"SSN": "block"}, hold=48)
    run = await _stream([text[i : i + 10] for i in range(0, len(text), 10)], r)
    assert "123-45" not in "".join(run.partial_texts)
    assert run.texts == [r.block_message]


async def test_tool_result_is_redacted_before_the_model_reads_it() -> None:
    """Through a Runner, the function response the model reads is redacted."""

    def lookup_customer(customer_id: str) -> dict[str, Any]:
        """Look up a customer."""
        return {"email": "jane.doe@example.com", "plan": "pro"}

    model = FakeModel(
        [ScriptedResponse.call("lookup_customer", customer_id="c1"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[lookup_customer])
    run = await run_app(agent, [Lattice(policy=[RedactPII()])], "who is c1?")
    assert run.responses("lookup_customer") == [{"email": "[REDACTED:EMAIL]", "plan": "pro"}]
    seen = model.requests[1].contents[-1].parts[0].function_response.response
    assert seen == {"email": "[REDACTED:EMAIL]", "plan": "pro"}


async def test_final_thoughts_are_redacted_too(ctx: Any) -> None:
    """Thought parts of a final response are scrubbed as well as its text."""
    thought = types.Part(text="the user's ssn is 123-45-6789", thought=True)
    final = LlmResponse(
        content=types.Content(role="model", parts=[thought, types.Part(text="Done.")]),
    )
    RedactPII().after_model(callback_context=await ctx(), llm_response=final)
    assert final.content.parts[0].text == "the user's ssn is [REDACTED:SSN]"
    assert final.content.parts[1].text == "Done."


async def test_model_error_frees_the_stream(ctx: Any) -> None:
    """A failed model call frees the stream's held-back tail."""
    r = RedactPII()
    c = await ctx()
    r.after_model(callback_context=c, llm_response=_chunk("partial text"))
    r.on_model_error(callback_context=c, llm_request=None, error=RuntimeError("boom"))
    assert r.open_streams == 0


async def test_a_redacted_tool_result_is_noted_with_the_kinds(ctx: Any) -> None:
    """Values redacted in a tool result are noted as redact with the kinds, sorted."""
    c = await ctx()
    result = {"who": "jane.doe@example.com", "from": "10.0.0.1"}
    RedactPII().after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    assert noted(c, "after_tool") == [("redact", "email,ip")]


async def test_a_withheld_tool_result_is_noted_as_block(ctx: Any) -> None:
    """A result withheld by the block strategy carries a code and is noted as block."""
    c = await ctx()
    result = {"config": "api_key=abcd1234efgh5678", "owner": "jane.doe@example.com"}
    out = RedactPII(strategies={"SECRET": "block"}).after_tool(
        tool=None, tool_args={}, tool_context=c, result=result
    )
    assert out["code"] == "sensitive_data"
    assert noted(c, "after_tool") == [("block", "email,secret")]


async def test_a_clean_result_is_not_noted(ctx: Any) -> None:
    """A result without sensitive values leaves no note."""
    c = await ctx()
    RedactPII().after_tool(tool=None, tool_args={}, tool_context=c, result={"plan": "pro"})
    assert noted(c, "after_tool") == []


async def test_a_redacted_final_response_is_noted(ctx: Any) -> None:
    """A final response redacted in place is noted as redact with the kinds."""
    c = await ctx()
    final = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="card 4111 1111 1111 1111")])
    )
    RedactPII().after_model(callback_context=c, llm_response=final)
    assert noted(c, "after_model") == [("redact", "card")]


async def test_a_clean_final_response_is_not_noted(ctx: Any) -> None:
    """A final response without sensitive values leaves no note."""
    c = await ctx()
    final = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="All done.")]))
    RedactPII().after_model(callback_context=c, llm_response=final)
    assert noted(c, "after_model") == []


async def test_a_stream_is_noted_once_on_its_final_response(ctx: Any) -> None:
    """Kinds redacted in partial chunks are noted on the final response, not on each chunk."""
    r = RedactPII(hold=48)
    first, last = await ctx(invocation_id="inv-s"), await ctx(invocation_id="inv-s")
    chunk = _chunk("mail jane.doe@example.com now " + "and then some more words " * 3)
    r.after_model(callback_context=first, llm_response=chunk)
    final = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Bye.")]))
    r.after_model(callback_context=last, llm_response=final)
    assert noted(first, "after_model") == []
    assert noted(last, "after_model") == [("redact", "email")]


async def test_redacted_input_is_noted(ctx: Any) -> None:
    """With inputs=True, user text redacted before the model is noted as redact."""
    c = await ctx()
    req = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="ssn 123-45-6789")])]
    )
    RedactPII(inputs=True).before_model(callback_context=c, llm_request=req)
    assert noted(c, "before_model") == [("redact", "ssn")]


async def test_refused_input_is_noted_as_deny(ctx: Any) -> None:
    """With inputs=True and block, refused user text is noted as deny with the kinds."""
    c = await ctx()
    req = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="ssn 123-45-6789")])]
    )
    r = RedactPII(inputs=True, strategies={"SSN": "block"})
    out = r.before_model(callback_context=c, llm_request=req)
    outcome = Outcome(
        hook="before_model",
        args={"callback_context": c},
        value=out,
        acted_by=r.name,
        acted_tier="policy",
    )
    assert [(n.decision, n.reason) for n in notes_of(outcome)] == [("deny", "ssn")]


def test_hashing_a_value_with_a_lone_surrogate_does_not_raise() -> None:
    """The hash strategy hashes a secret holding text UTF-8 cannot encode."""
    from adk_lattice.testing import callback_context, llm_response

    response = llm_response("my password=abc\ud800defgh12 ok")
    RedactPII(strategy="hash").after_model(
        callback_context=callback_context(), llm_response=response
    )
    assert response.content is not None and response.content.parts is not None
    assert "\ud800" not in (response.content.parts[0].text or "")


def test_a_hold_too_short_for_spaced_values_is_refused() -> None:
    """A hold shorter than a value written with spaces raises ValueError with the minimum."""
    with pytest.raises(ValueError, match="at least 48"):
        RedactPII(hold=16)
