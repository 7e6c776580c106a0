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

from pydantic_core import PydanticSerializationError

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.models.llm_request import LlmRequest
    from pydantic.main import IncEx

#: Bumped when the key material changes, so old entries are never read with new meaning.
KEY_VERSION: Final = "v2"

#: ``GenerateContentConfig`` fields that never change the answer (transport, billing).
_CONFIG_IGNORED: Final = frozenset({"http_options", "labels"})

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
    return _CANONICAL.encode(value).encode("utf-8", JSON_SAFE)


#: One encoder for every canonical serialisation (``json.dumps`` with these options would
#: build a new one per call).
_CANONICAL: Final = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def digest(data: bytes, size: int = 64) -> str:
    """The first ``size`` hex digits of the SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()[:size]


#: Dropped from every part of every content: ids ADK or the provider invent per call.
_CONTENT_EXCLUDE: Final[IncEx] = {  # type: ignore[assignment]
    "parts": {
        "__all__": {
            "thought_signature": True,
            "function_call": {"id"},
            "function_response": {"id"},
        }
    }
}


def _header(llm_request: LlmRequest) -> dict[str, Any]:
    """Everything but the contents: small, so serialised canonically (sorted keys)."""
    config = llm_request.config
    settings = config.model_dump(
        mode="json",
        exclude_none=True,
        exclude=set(_CONFIG_IGNORED | {"system_instruction", "tools"}),
    )
    instruction = config.system_instruction
    if instruction is not None and not isinstance(instruction, str):
        instruction = _dump(instruction)
    return {
        "model": llm_request.model,
        "system_instruction": instruction,
        "tools": [_dump(t) for t in config.tools or ()],
        "settings": settings,
        "previous_interaction_id": llm_request.previous_interaction_id,
    }


def request_material(llm_request: LlmRequest) -> dict[str, Any]:
    """The parts of a model request that change its answer, as plain JSON data.

    Args:
        llm_request: the request ``before_model`` sees (after policy edits).

    Returns:
        ``model``, ``system_instruction``, ``tools`` (declarations), ``settings`` (the rest
        of the generation config but transport and billing fields), ``contents`` (volatile
        ids removed) and ``previous_interaction_id`` (stateful APIs answer from it).
    """
    material = _header(llm_request)
    material["contents"] = [
        c.model_dump(mode="json", exclude_none=True, exclude=_CONTENT_EXCLUDE)
        for c in llm_request.contents
    ]
    return material


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
    """The SHA-256 of the request material (64 hex digits).

    The header is canonical JSON (sorted keys); each content is pydantic's own JSON
    serialisation (the model's field order, volatile ids excluded), hashed one after the
    other. Contents are most of a request, and the serializer in pydantic-core writes them
    about twice as fast as building dicts and sorting them, for the same stable result.
    """
    h = _header_hash(llm_request)
    for content in llm_request.contents:
        h.update(b"\x1e")  # record separator: no content's JSON contains it raw
        try:
            data = content.model_dump_json(exclude_none=True, exclude=_CONTENT_EXCLUDE).encode()
        except PydanticSerializationError:  # a lone surrogate: the canonical path escapes it
            dumped = content.model_dump(mode="json", exclude_none=True, exclude=_CONTENT_EXCLUDE)
            data = canonical_json(dumped)
        h.update(data)
    return h.hexdigest()


#: Header hashes by what they were made from (see :func:`_header_hash`), most recent last.
_HEADERS: dict[tuple[str | None, str | None, str], hashlib._Hash] = {}
_MAX_HEADERS: Final = 256
#: A ``null`` in the fast serialisation may stand for NaN or infinity (which the canonical
#: one refuses) as well as None: such a header is never remembered.
_NULLS: Final = (":null", "[null", ",null")


def _header_hash(llm_request: LlmRequest) -> hashlib._Hash:
    """A SHA-256 object fed the canonical header, remembered per header contents.

    ADK builds every request's config afresh (and a policy may edit it in place), so the
    header is remembered by what it holds, not by identity: by the request's model, its
    previous interaction id and the config as pydantic-core serialises it in one call,
    transport and billing fields left out. The same serialisation means the same config,
    so the same canonical header; any change to a setting, a tool or the instruction
    changes it and the header is built again. A config that cannot be serialised that way
    (a plain function as a tool) or that holds ``null`` is hashed the long way each time.
    """
    config = llm_request.config
    try:
        fast = config.model_dump_json(exclude_none=True, exclude=set(_CONFIG_IGNORED))
    except PydanticSerializationError:
        return hashlib.sha256(canonical_json(_header(llm_request)))
    key = (llm_request.model, llm_request.previous_interaction_id, fast)
    base = _HEADERS.pop(key, None)
    if base is None:
        base = hashlib.sha256(canonical_json(_header(llm_request)))
        if any(null in fast for null in _NULLS):
            return base
        if len(_HEADERS) >= _MAX_HEADERS:
            oldest = next(iter(_HEADERS), None)  # the least recently used
            if oldest is not None:
                _HEADERS.pop(oldest, None)
    _HEADERS[key] = base
    return base.copy()


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
    return _scope_of(tuple(parts))


#: Scope digests by their parts (app, user...): the same few come back on every call.
_SCOPES_SEEN: dict[tuple[str, ...], str] = {}
_MAX_SCOPES: Final = 4096


def _scope_of(parts: tuple[str, ...]) -> str:
    found = _SCOPES_SEEN.get(parts)
    if found is None:
        found = digest(canonical_json(list(parts)), 32)
        if len(_SCOPES_SEEN) >= _MAX_SCOPES:
            oldest = next(iter(_SCOPES_SEEN), None)
            if oldest is not None:
                _SCOPES_SEEN.pop(oldest, None)
        _SCOPES_SEEN[parts] = found
    return found


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
