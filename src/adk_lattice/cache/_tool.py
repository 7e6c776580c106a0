"""``ToolResultCache``: serve repeated calls of read-only tools; invalidate on mutations.

Lookup runs in ``before_tool`` in the cache tier, after policy, so the key is made from the
final arguments (a policy that rewrote them has already acted) and a denied call never
reaches the cache. Storing runs in ``observe`` on the real ``after_tool`` outcome; the
per-call key lives on the lattice's per-call record (``current_call().data``).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._records import current_call
from ._keys import (
    JSON_SAFE,
    KEY_VERSION,
    Scope,
    canonical_json,
    check_name,
    check_scope,
    check_store,
    digest,
    scope_digest,
)
from ._report import report

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.tools.base_tool import BaseTool

    from .._outcome import Outcome
    from ..stores import Store

logger = logging.getLogger("adk_lattice.cache")


def default_is_error(result: Mapping[str, Any]) -> bool:
    """True for results that report a failure: an ``error`` key, or status error/denied."""
    return "error" in result or result.get("status") in ("error", "denied")


class ToolResultCache:
    """Caches the results of tools declared cacheable, per scope; a hit skips the tool.

    Stores only real successful results: never a denial, a result another handler stood in
    for, a tool error (raised, or a result ``is_error`` flags), or a result an ``after_tool``
    handler replaced (capped, offloaded) unless ``store_rewritten``. A hit is the stored
    dict; ADK still runs ``after_tool`` on it, so output policy applies to hits too.

    Args:
        store: where entries live.
        tools: the cacheable tool names, or a mapping of name to TTL (None: ``ttl``).
        ttl: the default seconds an entry lives (None: until evicted).
        name: the handler name; also part of every key.
        scope: who may share an entry (as for ``ResponseCache``; default app + user).
        invalidates: tool name -> names of cached tools whose entries (in the same scope)
            it clears whenever it really runs, e.g. ``{"issue_refund": ["lookup_charge"]}``.
        store_rewritten: also store results an ``after_tool`` handler replaced.
        is_error: tells a failed result from a good one (default :func:`default_is_error`).

    Raises:
        ValueError: on a bad TTL, an invalidation target that is not cacheable.

    Example::

        ToolResultCache(MemoryStore(), tools={"lookup_charge": 300},
                        invalidates={"issue_refund": ["lookup_charge"]})
    """

    def __init__(
        self,
        store: Store,
        tools: Mapping[str, float | None] | Iterable[str],
        *,
        ttl: float | None = 300.0,
        name: str = "tool_result_cache",
        scope: Scope = "user",
        invalidates: Mapping[str, Collection[str]] | None = None,
        store_rewritten: bool = False,
        is_error: Callable[[Mapping[str, Any]], bool] = default_is_error,
    ) -> None:
        if isinstance(tools, str):
            raise ValueError("tools takes a collection of tool names (or name -> TTL), not a str")
        given = dict(tools) if isinstance(tools, Mapping) else dict.fromkeys(tools)
        ttls: dict[str, float | None] = {}
        for tool, t in given.items():
            ttls[tool] = ttl if t is None else t
            if t is not None and not t > 0:
                raise ValueError(f"TTL for {tool!r} must be positive seconds or None")
        if not ttls:
            raise ValueError("tools needs at least one cacheable tool name")
        inval = {k: tuple(v) for k, v in (invalidates or {}).items()}
        for mutator, targets in inval.items():
            stray = [t for t in targets if t not in ttls]
            if isinstance(targets, str) or stray:
                raise ValueError(f"invalidates[{mutator!r}] must list cacheable tools: {stray}")
        self.name = check_name(name)
        self.store: Store = check_store(store)
        self.ttls: Mapping[str, float | None] = MappingProxyType(ttls)
        self.invalidates: Mapping[str, tuple[str, ...]] = MappingProxyType(inval)
        #: Handler scoping: the lattice calls this handler only for these tools.
        self.tools = frozenset(ttls) | frozenset(inval)
        self.scope = check_scope(scope)
        self.store_rewritten = store_rewritten
        self.is_error = is_error
        self._stats: Counter[str] = Counter(
            dict.fromkeys(("hits", "misses", "stores", "corrupt", "invalidated"), 0)
        )

    @property
    def stats(self) -> Mapping[str, int]:
        """Live counters: ``hits``, ``misses``, ``stores``, ``corrupt``, ``invalidated``
        (entries removed) and ``not_stored.<reason>``."""
        return MappingProxyType(self._stats)

    def _prefix(self, scope: str, tool: str) -> str:
        return f"tool:{KEY_VERSION}:{self.name}:{scope}:{tool}:"

    def key(self, tool: str, args: Mapping[str, Any], ctx: Context) -> str | None:
        """The store key for a call, or None when the scope says skip or the arguments
        are not JSON (nothing stable to key on)."""
        scope = scope_digest(self.scope, ctx)
        if scope is None:
            return None
        try:
            material = canonical_json(dict(args))
        except (TypeError, ValueError):
            return None
        return self._prefix(scope, tool) + digest(material)

    async def before_tool(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        """Serve a stored result for these final arguments, or note the key for storing."""
        if tool.name not in self.ttls:
            return None
        key = self.key(tool.name, tool_args, tool_context)
        if key is None:
            self._stats["unkeyed"] += 1
            report(tool_context, "cache_skip", handler=self.name, reason="unkeyed")
            return None
        call = current_call()
        raw = await self.store.get(key)
        if raw is not None:
            result = self._decode(raw)
            if result is not None:
                self._stats["hits"] += 1
                if call is not None:
                    call.data[self.name] = {"result": "hit", "cache": self.name}
                return result
            self._stats["corrupt"] += 1
            report(tool_context, "cache_error", handler=self.name, reason="corrupt")
            await self.store.delete(key)
        self._stats["misses"] += 1
        if call is not None:
            call.data[self.name] = {"key": key}
        return None

    @staticmethod
    def _decode(raw: bytes) -> dict[str, Any] | None:
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested past Python's limit
            return None
        return value if isinstance(value, dict) and value else None

    async def observe(self, outcome: Outcome) -> None:
        """Store real successful results; run declared invalidations."""
        call = outcome.call
        if call is None or outcome.synthesized:
            return
        mine = call.data.get(self.name)
        if outcome.hook == "on_tool_error":
            if isinstance(mine, dict):
                mine["failed"] = True
            elif outcome.tool in self.invalidates:  # so a recovered call sweeps only once
                call.data[self.name] = {"failed": True}
            await self._invalidate(outcome)
            return
        if outcome.hook != "after_tool":
            return
        ran = not call.denied and call.short_circuited_by is None
        if ran and not (isinstance(mine, dict) and mine.get("failed")):
            await self._invalidate(outcome)
        if not isinstance(mine, dict) or "key" not in mine:
            return
        reason = self._unstorable(outcome, ran, mine)
        if reason is None:
            try:
                entry = json.dumps(outcome.final, separators=(",", ":"), ensure_ascii=False)
            except (TypeError, ValueError):
                reason = "not_json"
        if reason is not None:
            self._stats[f"not_stored.{reason}"] += 1
            report(outcome, "cache_skip", handler=self.name, reason=reason)
        elif await self.store.set(
            mine["key"], entry.encode("utf-8", JSON_SAFE), self.ttls[call.tool]
        ):
            self._stats["stores"] += 1
            report(outcome, "cache_store", handler=self.name)
        else:
            self._stats["not_stored.store_failed"] += 1
            report(outcome, "cache_error", handler=self.name, reason="store_failed")

    def _unstorable(self, outcome: Outcome, ran: bool, mine: dict[str, Any]) -> str | None:
        if not ran:
            return "denied" if outcome.call is not None and outcome.call.denied else "stood_in"
        if mine.get("failed") or outcome.error is not None:
            return "error"
        result = outcome.final
        if not isinstance(result, dict) or not result:
            return "empty"
        if self.is_error(result):
            return "error"
        if outcome.value is not None and not self.store_rewritten:
            return "rewritten"
        return None

    async def _invalidate(self, outcome: Outcome) -> None:
        targets = self.invalidates.get(outcome.tool or "")
        ctx = outcome.args.get("tool_context")
        if not targets or ctx is None:
            return
        scope = scope_digest(self.scope, ctx)
        if scope is None:
            return
        for target in targets:
            self._stats["invalidated"] += await self.store.delete_prefix(
                self._prefix(scope, target)
            )
