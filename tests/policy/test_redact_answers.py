"""RedactPII on model answers: their parts, calls, media and thoughts, what a block leaves,
what it reports, and the settings it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.policy import RedactPII
from adk_lattice.testing import callback_context, tool_context

from .conftest import noted

EMAIL = "jane.doe@example.com"
BLOCK_SSN = {"SSN": "block"}


def _answer(*parts: types.Part, partial: bool = False) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)), partial=partial)


def _call(**args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name="send", args=args))


def _texts(response: LlmResponse) -> list[str | None]:
    assert response.content is not None
    return [p.text for p in response.content.parts or ()]


def test_the_default_settings_are_the_documented_ones() -> None:
    """Defaults: the name RedactPII, hold 96, max_hold 8192, max_chars 256,000."""
    r = RedactPII()
    assert (r.name, r.hold, r.max_hold, r.max_chars) == ("RedactPII", 96, 8192, 256_000)


def test_a_blocked_answer_reads_the_default_block_message() -> None:
    """A blocked answer is replaced by the documented default message, word for word."""
    final = _answer(types.Part(text="ssn 123-45-6789"))
    RedactPII(strategies=BLOCK_SSN).after_model(
        callback_context=callback_context(), llm_response=final
    )
    assert _texts(final) == ["I can't share that: the answer contained sensitive data."]


def test_a_hold_below_the_minimum_is_refused_with_the_reason() -> None:
    """hold below 48 is refused, saying why and what to do about longer values."""
    with pytest.raises(ValueError, match=r"^hold must") as refused:
        RedactPII(hold=47)
    assert str(refused.value) == (
        "hold must be at least 48: a value written with spaces (an IBAN in groups is 42 "
        "characters) would stream out in part; raise it for longer custom values"
    )


def test_a_max_hold_equal_to_hold_is_refused_naming_both() -> None:
    """max_hold must be larger than hold: equal is refused with both values."""
    with pytest.raises(ValueError, match=r"^max_hold \(96\) must be larger than hold \(96\)$"):
        RedactPII(hold=96, max_hold=96)


def test_an_unknown_media_mode_is_refused_naming_the_choices() -> None:
    """An unknown media mode is refused, naming it and the two modes there are."""
    with pytest.raises(ValueError, match=r"^unknown media mode 'drop'; expected 'pass' or "):
        RedactPII(media="drop")  # type: ignore[arg-type]


def test_restore_args_is_copied_at_construction() -> None:
    """Changing the list of tools given as restore_args afterwards changes nothing."""
    tools = ["send"]
    r = RedactPII(restore_args=tools)
    tools.append("other")
    assert r.restore_args == frozenset({"send"})


def test_a_value_split_across_two_text_parts_is_found() -> None:
    """Text parts of one answer are read as one text, so a value split between them is found."""
    final = _answer(types.Part(text="ssn 123-45"), types.Part(text="-6789 on file"))
    RedactPII().after_model(callback_context=callback_context(), llm_response=final)
    assert _texts(final) == ["ssn [REDACTED:SSN] on file"]


def test_a_blocked_answer_of_calls_only_becomes_the_block_message() -> None:
    """An answer that is only a call whose arguments hold a blocked kind becomes the message."""
    r = RedactPII(strategies=BLOCK_SSN)
    final = _answer(_call(ssn="123-45-6789"))
    r.after_model(callback_context=callback_context(), llm_response=final)
    assert _texts(final) == [r.block_message]


def test_a_blocked_answer_keeps_its_media() -> None:
    """Blocking drops an answer's text, thoughts and calls, not an image it holds."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    r = RedactPII(strategies=BLOCK_SSN)
    final = _answer(types.Part(text="ssn 123-45-6789"), image)
    r.after_model(callback_context=callback_context(), llm_response=final)
    assert final.content is not None and final.content.parts is not None
    assert [p.inline_data is not None for p in final.content.parts] == [False, True]
    assert _texts(final)[0] == r.block_message


def test_a_blocked_answer_is_counted() -> None:
    """Each blocked answer adds one to counts['blocked']."""
    r = RedactPII(strategies=BLOCK_SSN)
    r.after_model(
        callback_context=callback_context(), llm_response=_answer(types.Part(text="123-45-6789"))
    )
    assert r.counts["blocked"] == 1


def test_a_blocked_answer_is_reported_as_a_block() -> None:
    """A blocked answer notes a block for telemetry, naming the kind."""
    ctx = callback_context()
    r = RedactPII(strategies=BLOCK_SSN)
    r.after_model(callback_context=ctx, llm_response=_answer(types.Part(text="123-45-6789")))
    assert noted(ctx, "after_model") == [("block", "ssn")]


def test_a_stream_blocked_before_an_empty_final_answer_is_reported_as_a_block() -> None:
    """A stream blocked in its chunks notes a block even when its final answer has no parts."""
    ctx = callback_context()
    r = RedactPII(strategies=BLOCK_SSN)
    r.after_model(
        callback_context=ctx,
        llm_response=_answer(types.Part(text="ssn 123-45-6789 and more "), partial=True),
    )
    r.after_model(callback_context=ctx, llm_response=LlmResponse(content=None))
    assert noted(ctx, "after_model") == [("block", "ssn")]


def test_a_blocked_thought_stops_the_answer_stream_too() -> None:
    """A blocked kind in a streamed thought empties the answer text of that chunk as well."""
    ctx = callback_context()
    r = RedactPII(strategies=BLOCK_SSN)
    chunk = _answer(
        types.Part(text="thinking of 123-45-6789 and more", thought=True),
        types.Part(text="Here is the plan for today, "),
        partial=True,
    )
    r.after_model(callback_context=ctx, llm_response=chunk)
    assert [t for t in _texts(chunk) if t] == []


def test_chunks_after_a_block_carry_empty_text_not_none() -> None:
    """Once a stream is blocked its chunks hold text parts of '', never None."""
    ctx = callback_context()
    r = RedactPII(strategies=BLOCK_SSN)
    r.after_model(
        callback_context=ctx,
        llm_response=_answer(types.Part(text="ssn 123-45-6789 and more "), partial=True),
    )
    later = _answer(types.Part(text="more words "), partial=True)
    r.after_model(callback_context=ctx, llm_response=later)
    assert _texts(later) == [""]


def test_a_streamed_chunks_call_arguments_are_redacted() -> None:
    """A function call in a streamed chunk has its arguments redacted like a final one's."""
    chunk = _answer(_call(to=EMAIL), partial=True)
    RedactPII().after_model(callback_context=callback_context(), llm_response=chunk)
    assert chunk.content is not None and chunk.content.parts is not None
    call = chunk.content.parts[0].function_call
    assert call is not None and call.args == {"to": "[REDACTED:EMAIL]"}


def test_a_streamed_call_is_given_back_its_arguments_for_a_restoring_tool() -> None:
    """A tool in restore_args gets the values the model wrote in a streamed call."""
    r = RedactPII(restore_args=["send"])
    ctx = callback_context(invocation_id="inv-1", session_id="s1")
    chunk = _answer(_call(to=EMAIL), partial=True)
    r.after_model(callback_context=ctx, llm_response=chunk)
    assert chunk.content is not None and chunk.content.parts is not None
    call = chunk.content.parts[0].function_call
    assert call is not None and call.id
    args = dict(call.args or {})
    r.restore_tool_args(
        tool=None,
        tool_args=args,
        tool_context=tool_context(invocation_id="inv-1", session_id="s1", function_call_id=call.id),
    )
    assert args == {"to": EMAIL}


def test_a_restoring_tool_gets_nested_arguments_back_unredacted() -> None:
    """restore_args gives back nested argument values as written, not their redacted form."""
    r = RedactPII(restore_args=True)
    final = _answer(_call(to={"email": EMAIL}))
    ctx = callback_context(invocation_id="inv-1", session_id="s1")
    r.after_model(callback_context=ctx, llm_response=final)
    assert final.content is not None and final.content.parts is not None
    call = final.content.parts[0].function_call
    assert call is not None and call.args == {"to": {"email": "[REDACTED:EMAIL]"}}
    args = dict(call.args)
    r.restore_tool_args(
        tool=None,
        tool_args=args,
        tool_context=tool_context(invocation_id="inv-1", session_id="s1", function_call_id=call.id),
    )
    assert args == {"to": {"email": EMAIL}}


def test_a_call_with_nothing_to_redact_is_left_as_written() -> None:
    """With restore_args, a call whose arguments hold no value found keeps its (absent) id."""
    final = _answer(_call(to="the team"))
    RedactPII(restore_args=True).after_model(
        callback_context=callback_context(), llm_response=final
    )
    assert final.content is not None and final.content.parts is not None
    call = final.content.parts[0].function_call
    assert call is not None and call.id is None


def test_withheld_media_in_an_answer_becomes_a_marker_beside_its_text() -> None:
    """With media='withhold', an image in an answer becomes a [WITHHELD:MEDIA] text part,
    kept beside the answer's own text."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    final = _answer(types.Part(text=f"Here is {EMAIL}:"), image)
    RedactPII(media="withhold").after_model(callback_context=callback_context(), llm_response=final)
    assert final.content is not None and final.content.parts is not None
    assert all(p.inline_data is None for p in final.content.parts)
    assert _texts(final) == ["Here is [REDACTED:EMAIL]:", "[WITHHELD:MEDIA]"]


def test_withheld_media_in_a_streamed_chunk_becomes_a_marker() -> None:
    """With media='withhold', an image in a streamed chunk becomes [WITHHELD:MEDIA] too."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    chunk = _answer(image, partial=True)
    RedactPII(media="withhold").after_model(callback_context=callback_context(), llm_response=chunk)
    assert _texts(chunk) == ["[WITHHELD:MEDIA]"]


def test_a_long_token_in_a_streamed_answers_final_thought_is_a_secret() -> None:
    """In a streamed answer, a token longer than max_hold in the final thought is a SECRET."""
    ctx = callback_context()
    r = RedactPII(hold=48, max_hold=100)
    r.after_model(callback_context=ctx, llm_response=_answer(types.Part(text="Hi "), partial=True))
    token = "Q" * 150
    final = _answer(types.Part(text=f"key {token} end", thought=True), types.Part(text="Hi there"))
    r.after_model(callback_context=ctx, llm_response=final)
    assert _texts(final)[0] == "key [REDACTED:SECRET] end"


def test_kinds_found_only_in_a_final_thought_are_reported() -> None:
    """A value found only in the final answer's thought is named in the note."""
    ctx = callback_context()
    final = _answer(types.Part(text=f"mail {EMAIL}", thought=True), types.Part(text="Done."))
    RedactPII().after_model(callback_context=ctx, llm_response=final)
    assert noted(ctx, "after_model") == [("redact", "email")]
