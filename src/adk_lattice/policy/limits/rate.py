"""``RateLimit``: per user (or tenant) per window, on the shared stores.

Counting needs one method, ``async incr(key, window) -> int | None``: add one to the key's
counter and return the new value (None when the store failed), the counter expiring
``window`` seconds after it was created. Every :class:`~adk_lattice.stores.Store` has it,
so a rate limit counts on the same ``MemoryStore``, ``SQLiteStore`` or ``RedisStore`` the
caches use. :class:`MemoryCounter` and :class:`RedisCounter`, the earlier counter-only
stores, keep working: they satisfy the same :class:`CounterStore` protocol.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, Protocol, runtime_checkable
from urllib.parse import quote

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ..._records import tool_label
from ...state import StateKey
from ...stores import MemoryStore, Store
from ...stores._base import in_shadow, shadow_twin
from .._common import (
    Counts,
    declared_key,
    model_content,
    record_denial,
    refusal,
    report,
    tool_denial,
)

logger = logging.getLogger("adk_lattice.policy")


@runtime_checkable
class CounterStore(Protocol):
    """Fixed-window counters: ``incr`` adds one and returns the count in the window.

    Every :class:`~adk_lattice.stores.Store` satisfies it. A store reports a failure by
    returning None (the shared stores) or by raising (any other implementation); the
    rate limit treats both the same way.
    """

    async def incr(self, key: str, window: float, /) -> int | None: ...


class MemoryCounter:
    """An in-process :class:`CounterStore` (one replica only); expired keys are purged.

    Kept for existing code; ``MemoryStore`` does the same and also serves caches. Unlike
    ``MemoryStore`` it drops the oldest live counters when full (resetting those windows).

    Args:
        clock: the time source (``time.monotonic``), replaceable in tests.
        max_keys: bound on live keys; past it the oldest are dropped.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self._counts: dict[str, tuple[int, float]] = {}
        self._clock = clock
        self._max_keys = max_keys
        self._lock = asyncio.Lock()

    async def incr(self, key: str, window_seconds: float) -> int:
        """Add one to ``key`` and return the count within its window."""
        async with self._lock:
            now = self._clock()
            count, expires = self._counts.get(key, (0, 0.0))
            if expires <= now:
                # A window that starts again makes the newest counter: it goes to the end.
                self._counts.pop(key, None)
                count, expires = 0, now + window_seconds
            self._counts[key] = (count + 1, expires)
            if len(self._counts) > self._max_keys:
                self._purge(now)
            return count + 1

    def _purge(self, now: float) -> None:
        for k in [k for k, (_, exp) in self._counts.items() if exp <= now]:
            del self._counts[k]
        while len(self._counts) > self._max_keys:
            del self._counts[next(iter(self._counts))]


# INCR and the first EXPIRE in one server-side step: atomic across replicas, and a key can
# never be left without an expiry by a client that dies between the two commands.
_INCR_EXPIRE = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RedisCounter:
    """A :class:`CounterStore` on Redis, atomic (one Lua script per increment).

    Kept for existing code (and its key layout, ``{prefix}{key}``); ``RedisStore`` does
    the same with namespaced keys, fail-soft, and also serves caches.

    Args:
        client: a ``redis.asyncio.Redis`` client (``pip install adk-lattice[redis]``).
        prefix: prepended to every key.
    """

    def __init__(self, client: Any, *, prefix: str = "") -> None:
        self._client = client
        self._prefix = prefix
        self._script = client.register_script(_INCR_EXPIRE)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        connect_timeout: float = 0.5,
        socket_timeout: float = 0.5,
        **kwargs: Any,
    ) -> RedisCounter:
        """Connect with ``redis.asyncio.from_url``, with short timeouts and no client retries.

        A Redis that is down or stalled then costs one short timeout per call, which
        ``RateLimit`` turns into its ``on_store_error`` decision, instead of a hung turn.

        Args:
            url: a Redis URL.
            connect_timeout: seconds to open a connection.
            socket_timeout: seconds to wait for a reply.
            kwargs: passed to the constructor (``prefix``).
        """
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        client = aioredis.from_url(
            url,
            socket_connect_timeout=connect_timeout,
            socket_timeout=socket_timeout,
            retry=Retry(NoBackoff(), 0),
        )
        return cls(client, **kwargs)

    async def incr(self, key: str, window_seconds: float) -> int:
        """Add one to ``key`` and return the count within its window."""
        ms = max(1, int(window_seconds * 1000))
        return int(await self._script(keys=[self._prefix + key], args=[ms]))

    async def close(self) -> None:
        """Close the client's connections."""
        await self._client.aclose()


#: Longest key part kept as written; a longer one (a user id a client chose) is a digest.
_MAX_PART: Final = 64


def counter_key(*parts: object) -> str:
    """One counter's key: each part percent-escaped, so no part can forge a separator.

    A user id such as ``"bob:7"`` or a tenant holding ``":"`` stays one part and never
    shares another user's or tenant's counter. A part longer than 64 characters is
    ``#`` and its SHA-256 (``#`` is always escaped, so no written part looks like one):
    a client's megabyte of user id costs a store a key of a hundred bytes, not three
    megabytes per counter.
    """
    return ":".join(_key_part(str(part)) for part in parts)


def _key_part(part: str) -> str:
    if len(part) > _MAX_PART:
        return "#" + hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()
    return quote(part, safe="")


Hook = Literal["before_model", "before_tool", "before_agent"]


class RateLimit:
    """Allow ``limit`` calls per user (or tenant) per ``window_seconds``, on any store.

    It counts on one hook: ``before_model`` (model calls, the default), ``before_tool`` (tool
    calls; scope with ``tools=``) or ``before_agent`` (agent runs). Who is counted comes from
    the session's user id, or from a declared state key such as ``user:tenant_id``, never
    from model-chosen arguments::

        RateLimit(100, 3600, per=TENANT, store=RedisStore("redis://localhost:6379/0"))

    Args:
        limit: calls allowed per window.
        window_seconds: the fixed window's length.
        per: ``"user"`` (the session's user id) or a declared str key, or the name of one.
        hook: which hook counts.
        store: any :class:`~adk_lattice.stores.Store` (``MemoryStore``, ``SQLiteStore``,
            ``RedisStore``: the same objects the caches use) or other :class:`CounterStore`
            (default: a new ``MemoryStore``, one process only).
        tools: with ``hook="before_tool"``, only count these tools.
        message: what the user reads when over the limit.
        name: the handler name.
        on_store_error: what a call gets when the store fails (``incr`` returns None,
            raises or times out, e.g. Redis down): ``"deny"`` (default: fail closed, like
            any failing policy, with the code ``rate_limit_unavailable``) or ``"allow"``
            (fail open: the call goes on unchecked). Either way the failure is counted as
            ``store_errors`` and logged once per outage (and once when the store answers
            again).
        unavailable_message: what the user reads when a call is denied because the limit
            could not be checked.

    Attributes:
        counts: ``allowed``, ``denied``, ``store_errors``.

    Raises:
        TypeError: when ``store`` has no async ``incr`` method.

    Over the limit it notes ``deny`` (model and tool calls) or ``block`` (agent runs) with
    the code ``rate_limited`` for telemetry and audit; a tool denial carries the same code.
    """

    def __init__(
        self,
        limit: int,
        window_seconds: float,
        *,
        per: Literal["user"] | StateKey[str] | str = "user",
        hook: Hook = "before_model",
        store: CounterStore | None = None,
        tools: set[str] | frozenset[str] | None = None,
        message: str = "You've reached the usage limit for now. Please try again later.",
        name: str = "RateLimit",
        on_store_error: Literal["deny", "allow"] = "deny",
        unavailable_message: str = "The service is busy right now. Please try again shortly.",
    ) -> None:
        if not isinstance(limit, int) or limit < 0:
            raise ValueError("limit must be a non-negative integer")
        if not window_seconds > 0:
            raise ValueError("window_seconds must be positive")
        if hook not in ("before_model", "before_tool", "before_agent"):
            raise ValueError(f"RateLimit cannot count on {hook!r}")
        if on_store_error not in ("deny", "allow"):
            raise ValueError("on_store_error must be 'deny' or 'allow'")
        if store is not None and not isinstance(store, CounterStore):
            raise TypeError(
                f"store must be a Store or have async incr(key, window), got {type(store).__name__}"
            )
        self.limit = limit
        self.window_seconds = float(window_seconds)
        self.per: Literal["user"] | StateKey[str] = (
            "user" if per == "user" else declared_key(per, str, "RateLimit per", declare=False)
        )
        #: The keys this policy trusts; ``Lattice`` protects them from client writes.
        self.state_keys = (self.per,) if isinstance(self.per, StateKey) else ()
        self.store: CounterStore = store if store is not None else MemoryStore(name=name)
        self.message = message
        self.name = name
        self.tools = tools
        self.hook = hook
        self.on_store_error = on_store_error
        self.unavailable_message = unavailable_message
        self._store_down = False
        # Only the chosen hook is a method of this instance, so the lattice binds only it.
        handlers = {
            "before_model": self._model,
            "before_tool": self._tool,
            "before_agent": self._agent,
        }
        setattr(self, hook, handlers[hook])
        self._counts = Counts()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``allowed``, ``denied``."""
        return self._counts.snapshot()

    async def _over(self, ctx: Any) -> str | None:
        """The denial code for this call (``rate_limited``, ``rate_limit_unavailable``) or None."""
        if self.per == "user":
            scope, who = "user", ctx.user_id
        else:
            scope, who = self.per.name, self.per.get(ctx.state) or "-"
        window = int(time.time() // self.window_seconds)
        key = counter_key(self.name, ctx.session.app_name, scope, who, window)
        store = self.store
        if in_shadow() and not isinstance(store, Store):
            # A counter of another kind cannot tell a shadow run: count in a private twin.
            store = shadow_twin(store, MemoryStore)
        try:
            count = await store.incr(key, self.window_seconds)
        except Exception as exc:  # an outage of the store must not become the handler's crash
            return self._store_failed(ctx, type(exc).__name__)
        if count is None:  # a shared store reports its failures (already logged) as None
            return self._store_failed(ctx, "no count")
        if self._store_down:
            self._store_down = False
            logger.info("adk_lattice: %s: the counter store answers again", self.name)
        if count > self.limit:
            self._counts.bump("denied")
            record_denial(ctx, self.name, "rate_limited", limit=self.limit)
            return "rate_limited"
        self._counts.bump("allowed")
        return None

    def _store_failed(self, ctx: Any, why: str) -> str | None:
        self._counts.bump("store_errors")
        if not self._store_down:
            self._store_down = True
            # The error type only: a store's message may quote the key, which names the user.
            logger.warning(
                "adk_lattice: %s: the counter store failed (%s); calls are %s until it answers",
                self.name,
                why,
                "allowed unchecked" if self.on_store_error == "allow" else "denied",
            )
        if self.on_store_error == "allow":
            return None
        self._counts.bump("denied")
        record_denial(ctx, self.name, "rate_limit_unavailable", limit=self.limit)
        return "rate_limit_unavailable"

    def _text(self, code: str) -> str:
        return self.message if code == "rate_limited" else self.unavailable_message

    async def _model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        code = await self._over(callback_context)
        if code is not None:
            report(callback_context, "deny", self.name, code)
            return refusal(self.name, code, self._text(code), limit=self.limit)
        return None

    async def _tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any] | None:
        code = await self._over(tool_context)
        if code is not None:
            if code == "rate_limited":
                reason = f"rate limit reached ({self.limit} per {self.window_seconds:g} s)"
            else:
                reason = "the rate limit could not be checked (counter store unavailable)"
            report(tool_context, "deny", self.name, code)
            return tool_denial(self.name, reason, code, tool=tool_label(tool))
        return None

    async def _agent(self, *, agent: Any, callback_context: Any) -> types.Content | None:
        code = await self._over(callback_context)
        if code is not None:
            report(callback_context, "block", self.name, code)
            return model_content(self._text(code))
        return None
