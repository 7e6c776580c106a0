"""RedactPII on state deltas, user input and its refusals: what a user reads and audits."""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.policy import RedactPII
from adk_lattice.policy._common import META_KEY

from .conftest import noted

EMAIL = "jane.doe@example.com"
SSN = "123-45-6789"


def _user(*parts: types.Part) -> types.Content:
    return types.Content(role="user", parts=list(parts))


def _image() -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG-bytes"))


def _event(delta: dict[str, Any]) -> Event:
    return Event(author="assistant", actions=EventActions(state_delta=delta))


async def test_the_note_names_the_kinds_of_every_state_key(ctx: Any) -> None:
    """after_tool's note names the kinds found in the result and in each state key."""
    c = await ctx({}, function_call_id="fc-1")
    c.state["contact"] = EMAIL
    c.state["id"] = f"ssn {SSN}"
    c.state["plain"] = "nothing here"
    RedactPII().after_tool(tool=None, tool_args={}, tool_context=c, result={"card": "ok"})
    assert noted(c, "after_tool") == [("redact", "email,ssn")]


async def test_state_false_leaves_the_delta_as_written(ctx: Any) -> None:
    """With state=False a tool's state write is persisted as the tool wrote it."""
    c = await ctx({}, function_call_id="fc-1")
    c.state["contact"] = EMAIL
    RedactPII(state=False).after_tool(tool=None, tool_args={}, tool_context=c, result={"ok": 1})
    assert c.actions.state_delta["contact"] == EMAIL
    assert c.session.state["contact"] == EMAIL


async def test_a_direct_after_tool_call_without_a_context_redacts_the_result() -> None:
    """after_tool called without a tool context still redacts the result it is given."""
    result = {"contact": EMAIL}
    RedactPII().after_tool(tool=None, tool_args={}, tool_context=None, result=result)
    assert result == {"contact": "[REDACTED:EMAIL]"}


async def test_an_events_state_delta_is_redacted_there_and_in_the_live_state(ctx: Any) -> None:
    """on_event redacts an event's state delta and the session state later steps read."""
    c = await ctx({"contact": EMAIL})
    inv = c._invocation_context
    event = _event({"contact": EMAIL})
    assert RedactPII().on_event(invocation_context=inv, event=event) is None
    assert event.actions.state_delta == {"contact": "[REDACTED:EMAIL]"}
    assert inv.session.state["contact"] == "[REDACTED:EMAIL]"


async def test_a_new_key_is_redacted_in_the_delta_only(ctx: Any) -> None:
    """on_event redacts a key the session lacks in the delta, leaving the session to ADK."""
    c = await ctx({"other": 1})
    inv = c._invocation_context
    event = _event({"contact": EMAIL})
    RedactPII().on_event(invocation_context=inv, event=event)
    assert event.actions.state_delta == {"contact": "[REDACTED:EMAIL]"}
    assert inv.session.state == {"other": 1}


async def test_withheld_media_in_user_input_becomes_a_text_part(ctx: Any) -> None:
    """inputs=True with media='withhold': an image the user sent reaches the model as a notice."""
    req = LlmRequest(contents=[_user(types.Part(text="see"), _image())])
    r = RedactPII(inputs=True, media="withhold")
    assert r.before_model(callback_context=await ctx(), llm_request=req) is None
    parts = req.contents[0].parts or []
    assert all(isinstance(p, types.Part) for p in parts)
    assert parts[0].text == "see"
    assert parts[1].inline_data is None and parts[1].text
    assert parts[1].text != "see"


async def test_withheld_media_in_a_persisted_user_message_becomes_a_text_part(ctx: Any) -> None:
    """inputs=True with media='withhold': the stored user message holds a notice, not the image."""
    r = RedactPII(inputs=True, media="withhold")
    out = r.on_user_message(invocation_context=await ctx(), user_message=_user(_image()))
    assert isinstance(out, types.Content)
    parts = out.parts or []
    assert len(parts) == 1 and isinstance(parts[0], types.Part)
    assert parts[0].inline_data is None and parts[0].text


async def test_a_refused_input_says_who_refused_and_why(ctx: Any) -> None:
    """A refused user message's response carries the policy name and 'sensitive_input'."""
    req = LlmRequest(contents=[_user(types.Part(text=f"ssn {SSN}"))])
    r = RedactPII(inputs=True, strategies={"SSN": "block"}, name="pii")
    out = r.before_model(callback_context=await ctx(), llm_request=req)
    assert out is not None and out.custom_metadata is not None
    assert out.custom_metadata[META_KEY] == {"denied_by": "pii", "reason": "sensitive_input"}
    assert out.content is not None and out.content.parts is not None
    assert out.content.parts[0].text == r.block_message


async def test_a_refusal_decided_on_the_stored_message_is_noted_with_its_kinds(ctx: Any) -> None:
    """A message blocked when stored is refused before the model, noted deny with its kinds."""
    c = await ctx()
    r = RedactPII(inputs=True, strategies={"SSN": "block"})
    stored = r.on_user_message(
        invocation_context=c._invocation_context, user_message=_user(types.Part(text=SSN))
    )
    assert stored is not None  # the model reads the stored, already-redacted message
    req = LlmRequest(contents=[stored])
    out = r.before_model(callback_context=c, llm_request=req)
    assert out is not None
    assert ("deny", "ssn") in noted(c, "before_model")


async def test_a_redacted_user_message_is_noted_as_redact(ctx: Any) -> None:
    """inputs=True: the stored user message's redaction is noted as redact with its kinds."""
    c = await ctx()
    inv = c._invocation_context
    RedactPII(inputs=True).on_user_message(
        invocation_context=inv, user_message=_user(types.Part(text=EMAIL))
    )
    assert noted(inv, "on_user_message") == [("redact", "email")]


async def test_a_clean_user_message_is_noted_nothing(ctx: Any) -> None:
    """inputs=True: a user message with nothing to redact leaves no note."""
    c = await ctx()
    inv = c._invocation_context
    RedactPII(inputs=True).on_user_message(
        invocation_context=inv, user_message=_user(types.Part(text="hello there"))
    )
    assert noted(inv, "on_user_message") == []


async def test_without_inputs_the_user_message_is_stored_as_sent(ctx: Any) -> None:
    """Without inputs=True the user's message is persisted unchanged."""
    message = _user(types.Part(text=EMAIL))
    out = RedactPII().on_user_message(invocation_context=await ctx(), user_message=message)
    assert out is None
    assert message.parts is not None and message.parts[0].text == EMAIL


async def test_a_clean_user_message_is_not_replaced(ctx: Any) -> None:
    """inputs=True: a message with nothing to redact is kept as the user sent it."""
    message = _user(types.Part(text="hello there"))
    out = RedactPII(inputs=True).on_user_message(
        invocation_context=await ctx(), user_message=message
    )
    assert out is None


async def test_the_callers_user_message_is_left_untouched(ctx: Any) -> None:
    """inputs=True returns a redacted copy; the message object the caller passed is not edited."""
    message = _user(types.Part(text=f"mail {EMAIL}"))
    out = RedactPII(inputs=True).on_user_message(
        invocation_context=await ctx(), user_message=message
    )
    assert out is not None and out.parts is not None
    assert out.parts[0].text == "mail [REDACTED:EMAIL]"
    assert message.parts is not None and message.parts[0].text == f"mail {EMAIL}"
