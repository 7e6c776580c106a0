"""The remembered parts of a cache key: a changed config or scope is never served an old one."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.cache import canonical_json, request_digest
from adk_lattice.cache._keys import (
    _CONTENT_EXCLUDE,
    _HEADERS,
    _MAX_HEADERS,
    _MAX_SCOPES,
    _SCOPES_SEEN,
    _header,
    scope_digest,
)


def _request(**settings: Any) -> LlmRequest:
    decl = types.FunctionDeclaration(
        name="lookup",
        description=settings.pop("description", "Look up."),
        parameters_json_schema={"type": "object", "properties": {"id": {"type": "string"}}},
    )
    config = types.GenerateContentConfig(
        system_instruction=settings.pop("instruction", "Be brief."),
        tools=[types.Tool(function_declarations=[decl])],
        **settings,
    )
    contents = [types.Content(role="user", parts=[types.Part(text="What is on c1?")])]
    return LlmRequest(model="fake-model", contents=contents, config=config)


def _long_way(request: LlmRequest) -> str:
    """The v2 key digest computed without anything remembered (the documented recipe)."""
    h = hashlib.sha256(canonical_json(_header(request)))
    for content in request.contents:
        h.update(b"\x1e")
        h.update(content.model_dump_json(exclude_none=True, exclude=_CONTENT_EXCLUDE).encode())
    return h.hexdigest()


def test_a_remembered_header_gives_the_same_key_as_before() -> None:
    """Keys stay the v2 keys: entries stored before remembering headers are still found."""
    request = _request(temperature=0.2)
    assert request_digest(request) == _long_way(request)
    assert request_digest(request) == _long_way(request)  # the second time, remembered


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.9},
        {"instruction": "Be verbose."},
        {"description": "Look up one charge."},
        {"max_output_tokens": 10},
    ],
)
def test_a_changed_config_after_a_remembered_one_changes_the_key(change: dict[str, Any]) -> None:
    """A setting, instruction or tool changed on the next request gives another key."""
    first = request_digest(_request(temperature=0.2))
    changed = request_digest(_request(**{"temperature": 0.2, **change}))
    assert changed != first
    assert changed == _long_way(_request(**{"temperature": 0.2, **change}))


def test_a_config_edited_in_place_changes_the_key() -> None:
    """Editing the very same request's config (as a policy may) is seen on the next key."""
    request = _request(temperature=0.2)
    before = request_digest(request)
    assert request.config.tools is not None
    (tool,) = request.config.tools
    assert tool.function_declarations is not None
    tool.function_declarations[0].description = "Something else."
    assert request_digest(request) != before
    assert request_digest(request) == _long_way(request)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_an_unkeyable_setting_stays_unkeyed_however_often_it_comes(value: float) -> None:
    """NaN or infinity (null to the fast serialisation) is refused every time, never keyed."""
    request_digest(_request(temperature=0.2))
    for _ in range(2):
        with pytest.raises(ValueError, match="JSON compliant"):
            request_digest(_request(temperature=value))


def test_a_plain_function_as_a_tool_is_keyed_by_its_name() -> None:
    """A config the fast serialisation cannot read is hashed the long way, every time."""

    def lookup(charge: str) -> str:
        return charge

    def refund(charge: str) -> str:
        return charge

    first = _request()
    first.config.tools = [lookup]
    second = _request()
    second.config.tools = [refund]
    assert request_digest(first) != request_digest(second)
    assert request_digest(first) == _long_way(first)


class _Ctx:
    def __init__(self, user: str, session: str = "s1") -> None:
        self.user_id = user
        self.session = type("S", (), {"app_name": "app", "id": session})()


def test_each_user_keeps_their_own_scope() -> None:
    """Remembered scopes never hand one user's scope to another."""
    alice, bob = scope_digest("user", _Ctx("alice")), scope_digest("user", _Ctx("bob"))
    assert alice != bob
    assert scope_digest("user", _Ctx("alice")) == alice
    assert scope_digest("session", _Ctx("alice", "s2")) != scope_digest("session", _Ctx("alice"))


def test_the_header_memo_is_bounded_and_keeps_the_headers_in_use() -> None:
    """At most 256 headers are remembered; past that the least recently used one is dropped,
    not one a request just used."""
    _HEADERS.clear()
    request_digest(_request(temperature=0.0))
    (first,) = _HEADERS
    for i in range(1, _MAX_HEADERS):
        request_digest(_request(temperature=i / 1000))
    second = list(_HEADERS)[1]
    request_digest(_request(temperature=0.1))  # a remembered one used again: nothing dropped
    assert len(_HEADERS) == _MAX_HEADERS and first in _HEADERS
    request_digest(_request(temperature=0.0))  # used again: now the most recent
    request_digest(_request(temperature=0.9999))
    assert len(_HEADERS) == _MAX_HEADERS
    assert first in _HEADERS and second not in _HEADERS


def test_the_scope_memo_is_bounded_and_a_hit_drops_nothing() -> None:
    """At most the bound of scopes are remembered, oldest dropped first; using a remembered
    scope again drops none."""
    _SCOPES_SEEN.clear()
    for i in range(_MAX_SCOPES):
        scope_digest("user", _Ctx(f"user-{i}"))
    first, second = list(_SCOPES_SEEN)[:2]
    scope_digest("user", _Ctx("user-7"))  # remembered: nothing dropped
    assert len(_SCOPES_SEEN) == _MAX_SCOPES and first in _SCOPES_SEEN
    scope_digest("user", _Ctx("a-new-user"))
    assert len(_SCOPES_SEEN) == _MAX_SCOPES
    assert first not in _SCOPES_SEEN and second in _SCOPES_SEEN


def test_a_scope_digest_keeps_its_recipe_remembered_or_not() -> None:
    """A scope reads as the first 32 hex digits of the SHA-256 of its parts as canonical JSON,
    the first time and when remembered, so entries stored before are found again."""
    recipe = hashlib.sha256(canonical_json(["user", "app", "alice"])).hexdigest()[:32]
    _SCOPES_SEEN.clear()
    assert scope_digest("user", _Ctx("alice")) == recipe
    assert scope_digest("user", _Ctx("alice")) == recipe
