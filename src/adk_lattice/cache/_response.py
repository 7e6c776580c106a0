"""``ResponseCache``: serve repeated model requests from a store; store what was delivered.

Lookup runs in ``before_model`` (cache tier, so after policy: a blocked request is never
served from the cache). Storing runs in ``observe``: the cache sees the ``after_model``
outcome after every decider, output policy included, so what it stores is what the user
got. The per-call key travels in ``temp:`` state, keyed by cache and agent, because one
handler instance serves every session, invocation and parallel agent at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._keys import (
    JSON_SAFE,
    KEY_VERSION,
    Scope,
    check_name,
    check_scope,
    check_store,
    request_digest,
    scope_digest,
)
from ._report import report

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.models.llm_request import LlmRequest

    from .._outcome import Outcome
    from ..stores import Store

logger = logging.getLogger("adk_lattice.cache")

#: The fields of a response worth replaying. Usage is left out: a hit spends no tokens.
_KEPT: Final = frozenset(
    {"content", "grounding_metadata", "citation_metadata", "finish_reason", "model_version"}
    | {"avg_logprobs", "logprobs_result", "custom_metadata"}
)
_SLOT: Final = "temp:adk_lattice.cache"


class ResponseCache:
    """Caches final model responses per scope; a hit short-circuits the model call.

    Never stores: streamed partial chunks, error responses, answers a policy blocked or
    replaced (``outcome.denied``), responses the lattice made or marked (synthesized
    outcomes, ``custom_metadata["adk_lattice"]``), finishes other than ``STOP``, interrupted
    or empty responses and, unless ``cache_function_calls``, responses that call tools.

    Args:
        store: where entries live (memory, SQLite, Redis).
        name: the handler name; also part of every key and of the hit marker.
        ttl: seconds an entry lives (None: until the store evicts it).
        scope: who may share an entry: ``user`` (app + user, the default), ``session``,
            ``app``, ``global``, or a callable ``(context) -> str | strings | None``.
        cache_function_calls: also store responses that request tool calls.
        coalesce: concurrent identical misses in this process wait for the first one's
            model call instead of calling the model themselves.
        coalesce_timeout: seconds a waiting request waits before calling the model itself.
        no_cache_key: state key; when truthy, the lookup is skipped (the fresh answer may
            still be stored).
        no_store_key: state key; when truthy, the answer is not stored.
        agents: only cache these agents' model calls (default: every agent).

    Example::

        Lattice(cache=[ResponseCache(MemoryStore(), ttl=600)])
    """

    #: What a hit on the exact key adds to the hit marker (the semantic cache says so).
    _exact_match: Mapping[str, Any] = MappingProxyType({})

    def __init__(
        self,
        store: Store,
        *,
        name: str = "response_cache",
        ttl: float | None = 3600.0,
        scope: Scope = "user",
        cache_function_calls: bool = False,
        coalesce: bool = False,
        coalesce_timeout: float = 30.0,
        no_cache_key: str = "temp:adk_lattice.no_cache",
        no_store_key: str = "temp:adk_lattice.no_store",
        agents: Collection[str] | None = None,
    ) -> None:
        if ttl is not None and not ttl > 0:
            raise ValueError("ttl must be a positive number of seconds or None")
        if coalesce_timeout <= 0:
            raise ValueError("coalesce_timeout must be positive")
        self.name = check_name(name)
        self.store: Store = check_store(store)
        self.ttl = ttl
        self.scope = check_scope(scope)
        self.cache_function_calls = cache_function_calls
        self.coalesce = coalesce
        self.coalesce_timeout = coalesce_timeout
        self.no_cache_key = no_cache_key
        self.no_store_key = no_store_key
        self.agents = agents
        self._inflight: dict[str, asyncio.Future[bytes | None]] = {}
        self._stats: Counter[str] = Counter(
            dict.fromkeys(("hits", "misses", "stores", "corrupt", "bypassed", "coalesced"), 0)
        )

    @property
    def stats(self) -> Mapping[str, int]:
        """Live counters: ``hits``, ``misses``, ``stores``, ``corrupt``, ``bypassed``,
        ``coalesced``, and ``not_stored.<reason>`` for each answer it declined to store."""
        return MappingProxyType(self._stats)

    def key(self, callback_context: Context, llm_request: LlmRequest) -> str | None:
        """The store key for a request in its scope, or None when the scope says skip or
        the request cannot be serialised (nothing stable to key on)."""
        scope = scope_digest(self.scope, callback_context)
        if scope is None:
            return None
        try:
            request = request_digest(llm_request)
        except (TypeError, ValueError):  # e.g. a lone surrogate in a function call's arg names
            return None
        return f"resp:{KEY_VERSION}:{self.name}:{scope}:{request}"

    def _slot(self, ctx: Context) -> str:
        # Per agent: parallel sub-agents share one session state in one invocation.
        return f"{_SLOT}.{self.name}.{ctx.agent_name}"

    # -- lookup ----------------------------------------------------------------------------

    async def before_model(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Serve a stored answer for this request, or remember its key for the store step."""
        state = callback_context.state
        slot = self._slot(callback_context)
        stale = state.get(slot)
        if stale is not None:  # a key left by a call that never reached after_model
            state[slot] = None
            self._release(stale, None)
        key = self.key(callback_context, llm_request)
        if key is None:
            unscoped = scope_digest(self.scope, callback_context) is None
            reason = "unscoped" if unscoped else "unkeyed"
            self._stats[reason] += 1
            report(callback_context, "cache_skip", handler=self.name, reason=reason)
            return None
        if state.get(self.no_cache_key):
            self._stats["bypassed"] += 1
            report(callback_context, "cache_skip", handler=self.name, reason="no_cache")
        else:
            hit = await self._lookup(key, callback_context)
            if hit is None:
                hit = await self._near(key, callback_context, llm_request)
            if hit is not None:
                return hit
            if self.coalesce:
                waited = await self._wait_for_leader(key, callback_context)
                if waited is not None:
                    return waited
            self._stats["misses"] += 1
        if state.get(self.no_store_key):
            self._stats["not_stored.no_store"] += 1
            report(callback_context, "cache_skip", handler=self.name, reason="no_store")
            await self._after_store(key, stored=False)
            return None
        await self._before_store(key, callback_context, llm_request)
        state[slot] = key
        if self.coalesce and key not in self._inflight:
            self._inflight[key] = asyncio.get_running_loop().create_future()
        return None

    async def _lookup(self, key: str, ctx: Context) -> LlmResponse | None:
        raw = await self.store.get(key)
        if raw is None:
            return None
        return await self._hit(key, raw, ctx, coalesced=False)

    # -- for subclasses (the semantic cache) ------------------------------------------------

    async def _near(self, key: str, ctx: Context, llm_request: LlmRequest) -> LlmResponse | None:
        """A hit found some other way than the exact key, after the exact lookup missed."""
        return None

    async def _before_store(self, key: str, ctx: Context, llm_request: LlmRequest) -> None:
        """Called when the answer to ``key`` will be offered to ``observe`` for storing."""

    async def _after_store(self, key: str, *, stored: bool) -> None:
        """Called once the answer to ``key`` was stored, or will not be."""

    async def _hit(
        self,
        key: str,
        raw: bytes,
        ctx: Context,
        *,
        coalesced: bool,
        match: Mapping[str, Any] | None = None,
    ) -> LlmResponse | None:
        try:
            entry = json.loads(raw)
            stored = entry["response"]
            # Only what this cache stores is served: a field another writer added (an error
            # code, usage, partial) never reaches ADK from the store.
            kept = {k: v for k, v in stored.items() if k in _KEPT}
            response = LlmResponse.model_validate(kept)
            stored_at = float(entry["stored_at"])
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            # pydantic errors are ValueErrors; RecursionError: JSON nested past Python's limit
            self._stats["corrupt"] += 1
            # The type only: a validation message quotes the stored (model-made) content.
            logger.warning(
                "adk_lattice: cache %r dropped a corrupt entry (%s)", self.name, type(exc).__name__
            )
            report(ctx, "cache_error", handler=self.name, reason="corrupt")
            await self.store.delete(key)
            return None
        marker = {
            "result": "hit",
            "cache": self.name,
            "store": self.store.name,
            "age": round(max(time.time() - stored_at, 0.0), 3),
            "coalesced": coalesced,
            **(match if match is not None else self._exact_match),
        }
        meta = dict(response.custom_metadata or {})
        meta["adk_lattice"] = {"cache": marker}
        response.custom_metadata = meta
        self._stats["hits"] += 1
        if coalesced:
            self._stats["coalesced"] += 1
        return response

    async def _wait_for_leader(self, key: str, ctx: Context) -> LlmResponse | None:
        leader = self._inflight.get(key)
        if leader is None:
            return None
        try:
            raw = await asyncio.wait_for(asyncio.shield(leader), self.coalesce_timeout)
        except TimeoutError:
            return None
        if raw is None:
            return None
        return await self._hit(key, raw, ctx, coalesced=True)

    # -- store -----------------------------------------------------------------------------

    async def observe(self, outcome: Outcome) -> None:
        """Store the delivered response of a real model call this cache looked up."""
        if outcome.hook not in ("after_model", "on_model_error") or outcome.partial:
            return
        ctx = outcome.args.get("callback_context")
        if ctx is None:
            return
        slot = self._slot(ctx)
        key = ctx.state.get(slot)
        if not isinstance(key, str):
            return
        ctx.state[slot] = None
        entry: bytes | None = None
        reason = self._unstorable(outcome)
        if reason is not None:
            self._stats[f"not_stored.{reason}"] += 1
            report(outcome, "cache_skip", handler=self.name, reason=reason)
        else:
            entry = self._encode(outcome.final)
            if await self.store.set(key, entry, self.ttl):
                self._stats["stores"] += 1
                report(outcome, "cache_store", handler=self.name)
            else:
                entry = None  # waiters must not be served what the store did not keep
                self._stats["not_stored.store_failed"] += 1
                report(outcome, "cache_error", handler=self.name, reason="store_failed")
        self._release(key, entry)
        await self._after_store(key, stored=entry is not None)

    def _release(self, key: str, entry: bytes | None) -> None:
        """Wake the requests waiting on this key's model call (coalescing)."""
        leader = self._inflight.pop(key, None)
        if leader is not None and not leader.done():
            leader.set_result(entry)

    def _unstorable(self, outcome: Outcome) -> str | None:
        """Why the outcome's response must not be stored, or None when it may."""
        if outcome.hook == "on_model_error" or outcome.error is not None:
            return "error"
        if outcome.synthesized:
            return "synthesized"
        if outcome.denied or outcome.acted_tier == "policy":
            return "denied"
        response = outcome.final
        if not isinstance(response, LlmResponse):
            return "empty"
        if response.partial:
            return "partial"
        if response.error_code is not None:
            return "error"
        if response.custom_metadata and "adk_lattice" in response.custom_metadata:
            return "marked"
        if response.finish_reason != types.FinishReason.STOP:
            return "finish_reason"
        if response.interrupted:
            return "interrupted"
        parts = response.content.parts if response.content is not None else None
        if not parts:
            return "empty"
        if not self.cache_function_calls and any(p.function_call for p in parts):
            return "function_call"
        return None

    def _encode(self, response: LlmResponse) -> bytes:
        data: dict[str, Any] = response.model_dump(
            mode="json", exclude_none=True, include=set(_KEPT)
        )
        for part in (data.get("content") or {}).get("parts") or ():
            call = part.get("function_call")
            if isinstance(call, dict):
                call.pop("id", None)  # ADK assigns fresh ids to replayed calls
        entry = {"v": 1, "stored_at": time.time(), "response": data}
        return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", JSON_SAFE
        )
