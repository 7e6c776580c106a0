"""RedactPII past its bounds, through real Runners: a token or key block that outgrows
``max_hold`` in one chunk, the values just before it, and tool results and calls it edits."""

from __future__ import annotations

from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode

from adk_lattice import Lattice
from adk_lattice.policy import RedactPII
from adk_lattice.testing import FakeModel, ScriptedResponse, llm_response

from .conftest import noted, run_app
from .test_redact_stream import _pem

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
PREFIX = "Here is the material you asked for: "
SECRET = "[REDACTED:SECRET]"


async def _stream(chunks: list[str], redactor: RedactPII) -> tuple[str, list[str]]:
    """What the client saw stream, and the final answers."""
    model = FakeModel([ScriptedResponse(text_chunks=chunks)])
    agent = LlmAgent(name="assistant", model=model)
    run = await run_app(agent, [Lattice(policy=[redactor])], "hi", run_config=SSE)
    return "".join(run.partial_texts), run.texts


async def test_the_rest_of_a_token_that_outgrew_the_bound_in_one_chunk_is_dropped() -> None:
    """A token past max_hold in one chunk is replaced once; its rest is never streamed."""
    text = f"{PREFIX}{'x' * 600}{'y' * 100} and the rest of it."
    streamed, final = await _stream(
        [text[: len(PREFIX) + 600], text[len(PREFIX) + 600 :]], RedactPII(max_hold=512)
    )
    assert final == [f"{PREFIX}{SECRET} and the rest of it."]
    assert final[0].startswith(streamed)
    assert streamed.startswith(f"{PREFIX}{SECRET} and the")


async def test_the_rest_of_a_key_block_that_outgrew_the_bound_in_one_chunk_is_dropped() -> None:
    """A key block past max_hold in one chunk is replaced once; no line of it streams."""
    pem = _pem(3000)
    text = f"{PREFIX}{pem} Then we talk about the weather."
    cut = len(PREFIX) + 1500
    streamed, final = await _stream([text[:cut], text[cut:]], RedactPII(max_hold=1024))
    assert final == [f"{PREFIX}{SECRET} Then we talk about the weather."]
    assert final[0].startswith(streamed)
    assert pem[2000:2040] not in streamed
    assert "Then we talk about the" in streamed


async def test_text_after_a_key_block_whose_end_line_is_split_streams_on() -> None:
    """A key block past max_hold whose END line is split across chunks ends there."""
    pem = _pem(3000)
    text = f"{PREFIX}{pem} Then we talk about the weather."
    cut = text.index("-----END") + len("-----END R")
    streamed, final = await _stream([text[:cut], text[cut:]], RedactPII(max_hold=1024))
    assert final == [f"{PREFIX}{SECRET} Then we talk about the weather."]
    assert streamed.startswith(f"{PREFIX}{SECRET} Then we talk about the")


async def test_a_value_just_before_a_key_block_past_the_bound_is_redacted() -> None:
    """A value ending where an over-long key block begins streams redacted, not raw."""
    text = f"Reach me at jane.doe@example.com{_pem(3000)} Bye."
    streamed, final = await _stream([text[:1500], text[1500:]], RedactPII(max_hold=1024))
    assert "jane.doe" not in streamed
    assert streamed.startswith(f"Reach me at [REDACTED:EMAIL]{SECRET}")
    assert final == [f"Reach me at [REDACTED:EMAIL]{SECRET} Bye."]


async def test_a_token_past_the_bound_in_a_stream_is_noted_as_a_secret(ctx: Any) -> None:
    """A stream that replaced an over-long token notes the one content-free kind, secret."""
    r = RedactPII(max_hold=512)
    first, last = await ctx(invocation_id="inv-o"), await ctx(invocation_id="inv-o")
    text = "the key " + "x" * 600
    chunk = llm_response(text)
    chunk.partial = True
    r.after_model(callback_context=first, llm_response=chunk)
    r.after_model(callback_context=last, llm_response=llm_response(text + " bye"))
    assert noted(last, "after_model") == [("redact", "secret")]


async def test_a_withheld_tool_result_is_the_documented_notice() -> None:
    """With block, the model reads the withheld notice: status, reason, code and policy."""

    def lookup() -> dict[str, str]:
        """Look up the account."""
        return {"ssn": "123-45-6789"}

    model = FakeModel([ScriptedResponse.call("lookup"), ScriptedResponse.text("done")])
    agent = LlmAgent(name="assistant", model=model, tools=[lookup])
    redactor = RedactPII(strategies={"SSN": "block"}, name="pii")
    run = await run_app(agent, [Lattice(policy=[redactor])], "who am I")
    assert run.responses("lookup") == [
        {
            "status": "withheld",
            "reason": "the result contained sensitive data and was withheld",
            "code": "sensitive_data",
            "policy": "pii",
        }
    ]


async def test_two_calls_in_one_answer_each_get_their_own_original_arguments() -> None:
    """restore_args gives each of two calls in one answer the values that call was written with."""
    got: list[str] = []

    def send_receipt(email: str) -> dict[str, str]:
        """Send a receipt."""
        got.append(email)
        return {"status": "sent"}

    calls = (
        ("send_receipt", {"email": "jane.doe@example.com"}),
        ("send_receipt", {"email": "john.roe@example.org"}),
    )
    model = FakeModel([ScriptedResponse(function_calls=calls), ScriptedResponse.text("done")])
    agent = LlmAgent(name="assistant", model=model, tools=[send_receipt])
    await run_app(agent, [Lattice(policy=[RedactPII(restore_args=True)])], "mail us")
    assert sorted(got) == ["jane.doe@example.com", "john.roe@example.org"]
