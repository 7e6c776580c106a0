"""Canonical keys: stable, blind to volatile ids, sensitive to everything that changes answers."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

import adk_lattice.cache as cache_pkg
import adk_lattice.stores as stores_pkg
from adk_lattice.cache import canonical_json, request_digest, request_material


def _request(**overrides: Any) -> LlmRequest:
    call = types.FunctionCall(
        name="lookup", args={"b": 2, "a": 1}, id=overrides.pop("call_id", "x")
    )
    reply = types.FunctionResponse(name="lookup", response={"ok": True}, id="x")
    contents = [
        types.Content(role="user", parts=[types.Part(text=overrides.pop("text", "Hi"))]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=call, thought_signature=overrides.pop("sig", b"s"))],
        ),
        types.Content(role="user", parts=[types.Part(function_response=reply)]),
    ]
    decl = types.FunctionDeclaration(name=overrides.pop("tool", "lookup"), description="Look up.")
    config = types.GenerateContentConfig(
        system_instruction=overrides.pop("instruction", "Be brief."),
        temperature=overrides.pop("temperature", 0.0),
        tools=[types.Tool(function_declarations=[decl])],
        labels=overrides.pop("labels", None),
    )
    return LlmRequest(model=overrides.pop("model", "fake-model"), contents=contents, config=config)


def test_same_request_gives_the_same_digest() -> None:
    """Two equal requests built separately have one digest."""
    assert request_digest(_request()) == request_digest(_request())


def test_function_call_ids_and_thought_signatures_are_ignored() -> None:
    """Per-call ids and opaque signatures do not change the key."""
    assert request_digest(_request(call_id="adk-1", sig=b"a")) == request_digest(
        _request(call_id="adk-2", sig=b"b")
    )


def test_billing_labels_are_ignored() -> None:
    """Labels (billing metadata) do not change the key."""
    assert request_digest(_request(labels={"team": "a"})) == request_digest(_request())


@pytest.mark.parametrize(
    "change",
    [
        {"model": "fake-other"},
        {"instruction": "Be verbose."},
        {"tool": "lookup_v2"},
        {"temperature": 0.7},
        {"text": "Hello"},
    ],
)
def test_what_changes_the_answer_changes_the_digest(change: dict[str, Any]) -> None:
    """Model, system instruction, tool declarations, settings and contents are in the key."""
    assert request_digest(_request(**change)) != request_digest(_request())


def test_material_lists_exactly_the_documented_fields() -> None:
    """The key material has the documented top-level fields and no ids."""
    material = request_material(_request())
    assert sorted(material) == [
        "contents",
        "model",
        "previous_interaction_id",
        "settings",
        "system_instruction",
        "tools",
    ]
    assert b'"id"' not in canonical_json(material["contents"])


def test_canonical_json_sorts_keys() -> None:
    """Key order does not change the serialisation."""
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == canonical_json(
        {"a": [1, {"c": 3, "d": 2}], "b": 1}
    )


def test_inline_bytes_are_keyed() -> None:
    """Binary parts serialise and different bytes give different digests."""

    def with_blob(data: bytes) -> LlmRequest:
        part = types.Part(inline_data=types.Blob(mime_type="image/png", data=data))
        return LlmRequest(model="m", contents=[types.Content(role="user", parts=[part])])

    assert request_digest(with_blob(b"\x00\x01")) != request_digest(with_blob(b"\x00\x02"))


@pytest.mark.parametrize("module", [cache_pkg, stores_pkg])
def test_all_is_sorted_and_complete(module: Any) -> None:
    """__all__ is in isort order (constants, classes, functions) and every name in it exists."""

    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2), name

    assert module.__all__ == sorted(module.__all__, key=key)
    assert all(hasattr(module, name) for name in module.__all__)


def test_a_lone_surrogate_is_keyed_as_its_json_escape() -> None:
    """Text UTF-8 cannot encode is keyed (valid UTF-8 bytes) and differs from other text."""
    data = canonical_json({"t": "a\ud800"})
    assert data == b'{"t":"a\\ud800"}' and data.decode("utf-8")
    assert canonical_json({"t": "a\ud801"}) != data


async def test_an_unserialisable_request_is_skipped_as_unkeyed() -> None:
    """A function call whose argument names hold a lone surrogate: no key, no crash."""
    from adk_lattice.cache import MemoryStore, ResponseCache
    from adk_lattice.testing import callback_context, llm_request

    call = types.Part(function_call=types.FunctionCall(name="f", args={"a": {"\ud800": 1}}))
    request = llm_request(contents=[types.Content(role="model", parts=[call])])
    cache = ResponseCache(MemoryStore())
    ctx = callback_context()
    assert cache.key(ctx, request) is None
    assert await cache.before_model(callback_context=ctx, llm_request=request) is None
    assert cache.stats["unkeyed"] == 1


async def test_a_response_with_a_lone_surrogate_round_trips() -> None:
    """A delivered response holding a lone surrogate is stored and served back unchanged."""
    from google.adk.models.llm_response import LlmResponse

    from adk_lattice import Outcome
    from adk_lattice.cache import MemoryStore, ResponseCache
    from adk_lattice.testing import callback_context, llm_request

    cache, ctx, request = ResponseCache(MemoryStore()), callback_context(), llm_request("Hi")
    await cache.before_model(callback_context=ctx, llm_request=request)
    response = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="odd \ud800 text")]),
        finish_reason=types.FinishReason.STOP,
    )
    await cache.observe(Outcome("after_model", {"callback_context": ctx, "llm_response": response}))
    hit = await cache.before_model(callback_context=callback_context(), llm_request=request)
    assert hit is not None and hit.content is not None and hit.content.parts is not None
    assert hit.content.parts[0].text == "odd \ud800 text"


def test_lone_surrogates_in_contents_are_keyed_apart() -> None:
    """Text UTF-8 cannot encode still gets a key, and different such texts different keys."""
    first = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="a\ud800b")])])
    second = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="a\ud801b")])])
    assert request_digest(first) != request_digest(second)
    assert request_digest(first) == request_digest(first.model_copy(deep=True))
