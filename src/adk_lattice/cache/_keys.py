"""Canonical cache keys: stable serialisation of what changes an answer, and scopes.

A key is ``{kind}:{version}:{cache}:{scope}:{...}`` where ``scope`` is a digest of who may
share the entry (app and user by default) and the rest a digest of the request. Volatile
fields (function-call ids, thought signatures) are dropped so the same conversation makes
the same key on every turn and every replica. See ``docs/cache.md`` for the exact contents.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.models.llm_request import LlmRequest

#: Bumped when the key material changes, so old entries are never read with new meaning.
KEY_VERSION: Final = "v1"

#: ``GenerateContentConfig`` fields that never change the answer (transport, billing).
_CONFIG_IGNORED: Final = frozenset({"http_options", "labels"})
#: Fields dropped from every part: ids ADK or the provider invent per call.
_PART_VOLATILE: Final = ("thought_signature",)
_CALL_FIELDS: Final = ("function_call", "function_response")

ScopeName: TypeAlias = Literal["user", "session", "app", "global"]
#: A scope: a name, or a callable from the context to the parts that identify who may
#: share an entry (a string or strings), or None to skip caching for that request.
Scope: TypeAlias = ScopeName | Callable[["Context"], "str | Sequence[str] | None"]
_SCOPES: Final = ("user", "session", "app", "global")


#: The UTF-8 error handler for JSON text: inside a JSON string, backslashreplace turns a
#: lone surrogate into exactly its JSON escape, so the bytes stay valid UTF-8 and decode
#: back to the same text.
JSON_SAFE: Final = "backslashreplace"


def canonical_json(value: Any) -> bytes:
    """Serialise JSON-able data the same way every time (sorted keys, no whitespace).

    A lone surrogate (text UTF-8 cannot encode) is written as its JSON escape
    (``\\ud800``), so such text is keyed instead of raising; other text is unchanged.

    Raises:
        TypeError: when ``value`` holds something JSON cannot represent.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8", JSON_SAFE)


def digest(data: bytes, size: int = 64) -> str:
    """The first ``size`` hex digits of the SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()[:size]


def _clean_parts(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for content in contents:
        for part in content.get("parts") or ():
            for name in _PART_VOLATILE:
                part.pop(name, None)
            for name in _CALL_FIELDS:
                call = part.get(name)
                if isinstance(call, dict):
                    call.pop("id", None)
    return contents


def request_material(llm_request: LlmRequest) -> dict[str, Any]:
    """The parts of a model request that change its answer, as plain JSON data.

    Args:
        llm_request: the request ``before_model`` sees (after policy edits).

    Returns:
        ``model``, ``system_instruction``, ``tools`` (declarations), ``settings`` (the rest
        of the generation config but transport and billing fields), ``contents`` (volatile
        ids removed) and ``previous_interaction_id`` (stateful APIs answer from it).
    """
    config = llm_request.config
    settings = config.model_dump(
        mode="json",
        exclude_none=True,
        exclude=set(_CONFIG_IGNORED | {"system_instruction", "tools"}),
    )
    instruction = config.system_instruction
    if instruction is not None and not isinstance(instruction, str):
        instruction = _dump(instruction)
    contents = [c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents]
    return {
        "model": llm_request.model,
        "system_instruction": instruction,
        "tools": [_dump(t) for t in config.tools or ()],
        "settings": settings,
        "contents": _clean_parts(contents),
        "previous_interaction_id": llm_request.previous_interaction_id,
    }


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    if callable(value):  # a plain Python function given as a tool: its name is what is known
        return {"callable": getattr(value, "__qualname__", repr(value))}
    return value


def request_digest(llm_request: LlmRequest) -> str:
    """The SHA-256 of the canonical request material (64 hex digits)."""
    return digest(canonical_json(request_material(llm_request)))


def check_scope(scope: Scope) -> Scope:
    """Validate a scope setting.

    Raises:
        ValueError: on an unknown scope name. TypeError: on anything else.
    """
    if isinstance(scope, str):
        if scope not in _SCOPES:
            raise ValueError(f"scope must be one of {_SCOPES} or a callable, not {scope!r}")
        return scope
    if not callable(scope):
        raise TypeError(f"scope must be a name or a callable, got {type(scope).__name__}")
    return scope


def scope_digest(scope: Scope, ctx: Context) -> str | None:
    """The digest of who may share an entry, or None when the scope says not to cache.

    Args:
        scope: ``user`` (app + user), ``session`` (app + user + session), ``app``,
            ``global``, or a callable returning identifying strings (or None).
        ctx: the callback or tool context of the request.

    Raises:
        TypeError: when a callable scope returns something other than strings or None.
    """
    session = ctx.session
    app = session.app_name
    if scope == "user":
        parts: Sequence[str] = ("user", app, ctx.user_id)
    elif scope == "session":
        parts = ("session", app, ctx.user_id, session.id)
    elif scope == "app":
        parts = ("app", app)
    elif scope == "global":
        parts = ("global",)
    else:
        assert callable(scope)
        got = scope(ctx)
        if got is None:
            return None
        parts = ("custom", got) if isinstance(got, str) else ("custom", *got)
        if not all(isinstance(p, str) for p in parts):
            raise TypeError("a scope callable must return a string, strings or None")
    return digest(canonical_json(list(parts)), 32)


def check_store(store: Any) -> Any:
    """Validate a store argument (anything with async ``get``/``set``/``delete``).

    Raises:
        TypeError: when ``store`` lacks those methods.
    """
    if not all(callable(getattr(store, m, None)) for m in ("get", "set", "delete")):
        raise TypeError(
            f"store must be a Store (MemoryStore, SQLiteStore, RedisStore), "
            f"got {type(store).__name__}"
        )
    return store


def check_name(name: str) -> str:
    """Validate a cache name (it is part of every key).

    Raises:
        ValueError: when empty or containing ':'.
    """
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"a cache name is a non-empty string without ':', got {name!r}")
    return name
