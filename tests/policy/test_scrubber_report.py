"""What a redaction reports: the handler's name on its note, and withheld media counted."""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_lattice import Outcome
from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import notes_of


def _image() -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG-bytes"))


async def test_a_redaction_note_names_the_policy(ctx: Any) -> None:
    """The note of a redacted tool result carries the policy's own name."""
    c = await ctx({}, function_call_id="fc-1")
    r = RedactPII(name="pii-guard")
    r.after_tool(tool=None, tool_args={}, tool_context=c, result={"to": "jane.doe@example.com"})
    notes = notes_of(Outcome(hook="after_tool", args={"tool_context": c}))  # type: ignore[arg-type]
    assert [(n.handler, n.decision, n.reason) for n in notes] == [("pii-guard", "redact", "email")]


async def test_withheld_media_is_counted_by_its_lower_case_name(ctx: Any) -> None:
    """Media withheld from a tool result is counted under withheld:media."""
    c = await ctx({}, function_call_id="fc-1")
    r = RedactPII(media="withhold")
    result: dict[str, Any] = {"file": _image()}
    r.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    assert r.counts["withheld:media"] == 1
