"""What exactly goes into a response-cache key: the material, tools, scopes and checks."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.cache import canonical_json, request_digest, request_material
from adk_lattice.cache._keys import check_name, check_scope, check_store, digest, scope_digest
from adk_lattice.testing import callback_context


def _request(text: str = "Hi", call_id: str = "c1", tools: Any = None) -> LlmRequest:
    call = types.FunctionCall(name="lookup", args={"q": text}, id=call_id)
    contents = [
        types.Content(role="user", parts=[types.Part(text=text)]),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
    ]
    config = types.GenerateContentConfig(
        temperature=0.5, system_instruction="Be brief.", tools=tools, labels={"team": "a"}
    )
    return LlmRequest(model="fake-model", contents=contents, config=config)


def test_the_material_is_plain_json_without_volatile_fields() -> None:
    """The key material holds the contents without call ids and the settings without
    transport, billing, instruction or tool fields (those have their own entries)."""
    material = request_material(_request())
    assert material == {
        "model": "fake-model",
        "system_instruction": "Be brief.",
        "tools": [],
        "settings": {"temperature": 0.5},
        "previous_interaction_id": None,
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}]},
            {
                "role": "model",
                "parts": [{"function_call": {"name": "lookup", "args": {"q": "Hi"}}}],
            },
        ],
    }


def lookup(q: str) -> str:
    """Look something up."""
    return q


def search(q: str) -> str:
    """Search."""
    return q


def test_a_plain_function_tool_is_keyed_by_its_qualified_name() -> None:
    """A Python function given as a tool is keyed by its name: another function, another key."""
    material = request_material(_request(tools=[lookup]))
    assert material["tools"] == [{"callable": "lookup"}]
    assert request_digest(_request(tools=[lookup])) == request_digest(_request(tools=[lookup]))
    assert request_digest(_request(tools=[lookup])) != request_digest(_request(tools=[search]))


def test_a_declared_tool_is_keyed_by_its_declaration_as_json() -> None:
    """A genai Tool is keyed by its declaration, dumped as JSON without empty fields."""
    decl = types.FunctionDeclaration(name="lookup", description="Look up.")
    material = request_material(_request(tools=[types.Tool(function_declarations=[decl])]))
    assert material["tools"] == [
        {"function_declarations": [{"name": "lookup", "description": "Look up."}]}
    ]


def test_call_ids_do_not_change_the_key_of_text_utf8_cannot_encode() -> None:
    """Contents holding a lone surrogate are keyed without their call ids, like any other."""
    first, second = _request("a\ud800b", call_id="c1"), _request("a\ud800b", call_id="c2")
    assert request_digest(first) == request_digest(second)


def test_binary_and_non_ascii_content_is_keyed_as_json() -> None:
    """Inline bytes appear in the material as base64 text, non-ASCII text as itself."""
    part = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x00\x01"))
    request = LlmRequest(model="m", contents=[types.Content(role="user", parts=[part])])
    assert request_material(request)["contents"] == [
        {"role": "user", "parts": [{"inline_data": {"mime_type": "image/png", "data": "AAE="}}]}
    ]
    assert canonical_json({"t": "café"}) == '{"t":"café"}'.encode()


def test_a_request_with_a_non_finite_setting_is_not_keyed() -> None:
    """NaN in the generation settings cannot be keyed: the digest refuses instead of guessing."""
    request = LlmRequest(
        model="m", config=types.GenerateContentConfig(temperature=float("nan")), contents=[]
    )
    with pytest.raises(ValueError, match="JSON compliant"):
        request_digest(request)


def test_a_digest_is_a_prefix_of_the_sha256() -> None:
    """digest() is the first `size` hex digits of the SHA-256, 64 by default."""
    full = "a665a45920422f9d417e4867efdc4fb8a04a1f3fff1fa07e998e86f7f7a27ae3"
    assert digest(b"123") == full
    assert digest(b"123", 32) == full[:32]


@pytest.mark.parametrize("scope", ["user", "session", "app", "global"])
def test_each_named_scope_has_its_own_digest(scope: str) -> None:
    """The four named scopes give four different digests for one context."""
    ctx = callback_context()
    others = {s for s in ("user", "session", "app", "global") if s != scope}
    assert scope_digest(scope, ctx) not in {scope_digest(s, ctx) for s in others}  # type: ignore[arg-type]


def test_a_scope_callable_may_return_a_string_or_strings() -> None:
    """A callable scope's string and the same string in a list are one scope; None skips."""
    ctx = callback_context()
    assert scope_digest(lambda c: "t1", ctx) == scope_digest(lambda c: ["t1"], ctx)
    assert scope_digest(lambda c: "t1", ctx) != scope_digest(lambda c: "t2", ctx)
    assert scope_digest(lambda c: None, ctx) is None
    with pytest.raises(
        TypeError, match=r"^a scope callable must return a string, strings or None$"
    ):
        scope_digest(lambda c: ["t1", 2], ctx)  # type: ignore[list-item]


def test_bad_scopes_stores_and_names_are_refused_with_the_fix() -> None:
    """Each setting error names what is expected."""
    with pytest.raises(
        ValueError, match=r"scope must be one of \('user', 'session', 'app', 'global'\)"
    ):
        check_scope("tenant")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^scope must be a name or a callable, got int$"):
        check_scope(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got str$"):
        check_store("redis://")
    for bad in ("", "a:b", 7):
        with pytest.raises(ValueError, match="a cache name is a non-empty string without ':'"):
            check_name(bad)  # type: ignore[arg-type]
    assert check_name("answers") == "answers"
    assert check_scope("app") == "app"


#: Keys recorded for fixed requests: a store written by an earlier release must be read with
#: the same meaning. A change to the key material changes these; bump KEY_VERSION with it.
GOLDEN_SCOPES = {
    "user": "fe20b872085cbd99f7acf46d226d0dc1",
    "session": "80b61f9f44e95fc5226ac343965508c1",
    "app": "54e14f852e9634eb481399286ad9698d",
    "global": "a8d13bfa12806deaf76cc6a84da9766e",
}


def test_scope_digests_are_stable_across_releases() -> None:
    """Each named scope and a callable scope keep the digest earlier releases stored under."""
    ctx = callback_context(session_id="s1")
    assert {s: scope_digest(s, ctx) for s in GOLDEN_SCOPES} == GOLDEN_SCOPES  # type: ignore[misc]
    assert scope_digest(lambda c: ["t1", "eu"], ctx) == "b9bfb006eeedce0cb7aed8f3f65722dc"
    assert scope_digest(lambda c: "t1", ctx) == "4264a347896174b2674a7e9673496642"


def test_request_digests_are_stable_across_releases() -> None:
    """A request, one with tools and one with text UTF-8 cannot encode keep their digests."""
    decl = types.FunctionDeclaration(name="lookup", description="Look up.")
    tools = [lookup, types.Tool(function_declarations=[decl])]
    assert request_digest(_request()) == (
        "652440014fbffab66376a5cd8d065fe0e9e0221e95d161c06769dfc4d79343ac"
    )
    assert request_digest(_request(tools=tools)) == (
        "2176b8c4f27c1b14e2a220b15da26aaba3e3343624ad5c7ca8f8ba6307334ec5"
    )
    assert request_digest(_request("a\ud800b")) == (
        "1f869a4291127eb3ce6275eb78976db66701092bc35313b80eeb795956d59dde"
    )
