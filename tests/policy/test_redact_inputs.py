"""RedactPII on user input and its stream hold: the edges users rely on."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.policy import RedactPII


def _content(role: str, text: str | None) -> types.Content:
    return types.Content(role=role, parts=None if text is None else [types.Part(text=text)])


async def test_a_user_message_with_no_parts_is_skipped(ctx: Any) -> None:
    """A user turn without parts does not stop later user text from being redacted."""
    req = LlmRequest(contents=[_content("user", None), _content("user", "ssn 123-45-6789")])
    out = RedactPII(inputs=True).before_model(callback_context=await ctx(), llm_request=req)
    assert out is None
    assert req.contents[1].parts[0].text == "ssn [REDACTED:SSN]"  # type: ignore[index]


async def test_earlier_model_turns_are_left_as_the_model_wrote_them(ctx: Any) -> None:
    """inputs=True redacts the user's text only; the model's earlier turns stay as they were."""
    said = "Your ticket is for jane.doe@example.com"
    req = LlmRequest(
        contents=[
            _content("user", "book me"),
            _content("model", said),
            _content("user", "mail jane.doe@example.com"),
        ]
    )
    RedactPII(inputs=True).before_model(callback_context=await ctx(), llm_request=req)
    texts = [c.parts[0].text for c in req.contents]  # type: ignore[index]
    assert texts == ["book me", said, "mail [REDACTED:EMAIL]"]


async def test_blocked_input_is_refused_and_counted(ctx: Any) -> None:
    """A user message holding a blocked kind is refused before the model and counted blocked."""
    req = LlmRequest(contents=[_content("user", "ssn 123-45-6789")])
    r = RedactPII(inputs=True, strategies={"SSN": "block"})
    out = r.before_model(callback_context=await ctx(), llm_request=req)
    assert isinstance(out, LlmResponse)
    assert r.counts["blocked"] == 1


async def test_a_withheld_tool_result_is_counted_blocked(ctx: Any) -> None:
    """A tool result withheld for a blocked kind counts as blocked."""
    r = RedactPII(strategies={"SECRET": "block"})
    result = {"config": "api_key=abcd1234efgh5678"}
    r.after_tool(tool=None, tool_args={}, tool_context=await ctx(), result=result)
    assert r.counts["blocked"] == 1


def test_hold_below_its_floor_is_refused() -> None:
    """hold=47 is refused with the floor in the message; hold=48 is accepted."""
    with pytest.raises(ValueError, match="hold must be at least 48"):
        RedactPII(hold=47)
    assert RedactPII(hold=48).hold == 48
