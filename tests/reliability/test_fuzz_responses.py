"""Arbitrary response shapes into RedactPII, CapToolResult and ResponseCache's store path."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_lattice import Outcome
from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.policy import CapToolResult, RedactPII
from adk_lattice.testing import callback_context, function_tool, llm_request, tool_context
from tests.reliability._strategies import anything, odd_text, responses

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EMAIL = "jane.doe@example.com"
_ids = itertools.count()


def _texts(response: LlmResponse) -> list[str]:
    parts = response.content.parts if response.content and response.content.parts else []
    return [p.text for p in parts if p.text]


@FUZZ
@given(chunks=st.lists(responses, max_size=4), final=responses)
def test_redact_pii_takes_any_stream_and_any_final(
    chunks: list[LlmResponse], final: LlmResponse
) -> None:
    """Partial chunks then a final response of any shape: None or an LlmResponse each."""
    redact = RedactPII(hold=48)
    ctx = callback_context(invocation_id=f"inv-{next(_ids)}")
    for chunk in chunks:
        chunk.partial = True
        result = redact.after_model(callback_context=ctx, llm_response=chunk)
        assert result is None or isinstance(result, LlmResponse)
    final.partial = False
    result = redact.after_model(callback_context=ctx, llm_response=final)
    assert result is None or isinstance(result, LlmResponse)


@FUZZ
@given(before=odd_text, after=odd_text, shape=responses)
def test_redact_pii_removes_an_email_from_any_final_response(
    before: str, after: str, shape: LlmResponse
) -> None:
    """An e-mail in a text part of any final response never survives redaction."""
    parts = list(shape.content.parts or []) if shape.content else []
    parts.append(types.Part(text=f"{before} {EMAIL} {after}"))
    shape.content = types.Content(role="model", parts=parts)
    shape.partial = False
    result = RedactPII().after_model(callback_context=callback_context(), llm_response=shape)
    delivered = result if result is not None else shape
    assert not any(EMAIL in t for t in _texts(delivered))


def lookup() -> dict[str, Any]:
    """Look something up."""
    return {}


CAP = CapToolResult(max_items=3, max_chars=50, max_bytes=2_000, strip={"password"})


@FUZZ
@given(result=st.one_of(anything, st.dictionaries(odd_text, anything, max_size=6)))
def test_cap_tool_result_takes_any_result(result: Any) -> None:
    """Any tool result: None (nothing cut) or a dict that announces its cuts."""
    out = asyncio.run(
        CAP.after_tool(
            tool=function_tool(lookup), tool_args={}, tool_context=tool_context(), result=result
        )
    )
    assert out is None or (
        isinstance(out, dict) and (out.get("truncated") is True or "stripped_fields" in out)
    )


@FUZZ
@given(response=responses)
def test_response_cache_stores_or_skips_any_response(response: LlmResponse) -> None:
    """Any delivered response: stored (and then served as a hit) or skipped with a reason."""
    asyncio.run(_store_then_lookup(response))


async def _store_then_lookup(response: LlmResponse) -> None:
    store = MemoryStore()
    cache = ResponseCache(store)
    ctx = callback_context()
    request = llm_request("What is the status?")
    assert await cache.before_model(callback_context=ctx, llm_request=request) is None
    outcome = Outcome(hook="after_model", args={"callback_context": ctx, "llm_response": response})
    await cache.observe(outcome)
    stats = dict(cache.stats)
    skipped = {k: v for k, v in stats.items() if k.startswith("not_stored.")}
    assert stats.get("stores", 0) + sum(skipped.values()) == 1
    hit = await cache.before_model(callback_context=callback_context(), llm_request=request)
    if stats.get("stores"):
        assert isinstance(hit, LlmResponse) and hit.content is not None
    else:
        assert hit is None
