"""The lattice through ADK's LiteLlm and the OpenAI client, against a loopback chat API."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.policy import RedactPII
from adk_lattice.telemetry import AuditLog
from adk_lattice.testing import LatticeRunner, LoopbackOpenAI, ScriptedResponse
from tests.support import Recorder, assert_balanced

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("litellm") is None, reason="needs the litellm extra"
)
S = ScriptedResponse


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up one charge by its id."""
    return {"charge_id": charge_id, "amount": 42.0}


@pytest.fixture
def api() -> Iterator[LoopbackOpenAI]:
    with LoopbackOpenAI() as server:
        yield server
    server.assert_consumed()


def runner(api: LoopbackOpenAI, *, tools: list[Any] | None = None, **tiers: Any) -> LatticeRunner:
    agent = LlmAgent(name="billing", model=api.model(), tools=tools or [])
    return LatticeRunner(agent, lattice=Lattice(**tiers))


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "sse"])
async def test_tool_call_round_trips(api: LoopbackOpenAI, streaming: bool) -> None:
    """A tool call, streamed or not, runs the tool and its result goes back as a tool message."""
    api.script += [S.call("lookup_charge", charge_id="c1"), S.text("EUR 42.")]
    events = await runner(api, tools=[lookup_charge]).run("What is c1?", streaming=streaming)
    assert LatticeRunner.texts(events) == ["EUR 42."]
    tool_message = api.requests[1].body["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == (
        "tool",
        '{"charge_id": "c1", "amount": 42.0}',
    )


async def test_redact_pii_holds_an_email_split_across_chunks(api: LoopbackOpenAI) -> None:
    """No streamed event shows an email split across the provider's delta chunks."""
    api.script.append(S(text_chunks=["Write to bob@exa", "mple.com today."]))
    redact = RedactPII()
    events = await runner(api, policy=[redact]).run("contact?", streaming=True)
    streamed = "".join(LatticeRunner.texts([e for e in events if e.partial], partial=True))
    assert "bob@" not in streamed and "example.com" not in streamed
    assert LatticeRunner.texts(events) == ["Write to [REDACTED:EMAIL] today."]
    assert redact.open_streams == 0


async def test_cache_hit_skips_the_provider(api: LoopbackOpenAI) -> None:
    """The same question in a new session is served from the cache, not the API."""
    api.script.append(S.text("Refunds take 5 days."))
    app = runner(api, cache=[ResponseCache(MemoryStore())])
    await app.run("How long do refunds take?")
    second = await app.run("How long do refunds take?", new_session=True)
    assert LatticeRunner.texts(second) == ["Refunds take 5 days."]
    assert api.calls == 1


async def test_cache_never_stores_a_content_filter_stop(api: LoopbackOpenAI) -> None:
    """An answer the provider stopped with content_filter is not stored."""
    api.script += [S.provider_error("SAFETY"), S.text("Here is how.")]
    cache = ResponseCache(MemoryStore())
    app = runner(api, cache=[cache])
    blocked = await app.run("How do I do it?")
    assert [e.error_code for e in blocked] == [types.FinishReason.SAFETY]
    answered = await app.run("How do I do it?", new_session=True)
    assert LatticeRunner.texts(answered) == ["Here is how."]
    assert cache.stats["not_stored.error"] == 1


async def test_audit_counts_the_streamed_usage_once(api: LoopbackOpenAI) -> None:
    """The usage chunk at the end of the stream reaches the audit record, counted once."""
    api.script.append(S(text_chunks=["a", "b"], input_tokens=11, output_tokens=5))
    records: list[dict[str, Any]] = []
    await runner(api, telemetry=[AuditLog([records.append])]).run("hi", streaming=True)
    usage = records[0]["model_calls"]
    assert (usage["count"], usage["input_tokens"], usage["output_tokens"]) == (1, 11, 5)


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_provider_http_error_reaches_the_caller_with_records_closed(
    api: LoopbackOpenAI, status: int
) -> None:
    """An HTTP error raises the OpenAI client's status error; every record still closes."""
    import openai

    api.script.append(S.http_error(status))
    recorder = Recorder()
    with pytest.raises(openai.APIStatusError) as caught:
        await runner(api, telemetry=[recorder]).run("hi")
    assert getattr(caught.value, "status_code", None) == status
    assert_balanced(recorder.outcomes)


async def test_cancelling_mid_stream_closes_the_http_stream(api: LoopbackOpenAI) -> None:
    """Cancelling a run between chunks closes the provider's connection."""
    api.script.append(S(text_chunks=["one ", "two"], chunk_delay=30))
    task = asyncio.create_task(runner(api, policy=[RedactPII()]).run("hi", streaming=True))
    for _ in range(1000):
        if api.requests:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(300):
        if api.cancelled_streams:
            break
        await asyncio.sleep(0.01)
    assert api.cancelled_streams == 1
