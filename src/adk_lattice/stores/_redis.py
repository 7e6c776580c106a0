"""``RedisStore``: one cache shared by every replica, on ``redis.asyncio``.

``redis`` is an optional dependency (``pip install 'adk-lattice[redis]'``) imported when a
``RedisStore`` is made, so the rest of the package works without it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ._base import Store

if TYPE_CHECKING:
    from redis.asyncio import Redis

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")

# INCRBY and the window's PEXPIRE in one server-side step: atomic across replicas, and a key
# can never be left without an expiry by a client that dies between the two commands. A
# negative amount (giving back) never creates a counter.
_INCR_EXPIRE = """
local amount = tonumber(ARGV[2])
if amount < 0 and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('INCRBY', KEYS[1], amount)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""


def _import_redis() -> Any:
    try:
        import redis.asyncio as redis_asyncio
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "RedisStore needs the 'redis' package; install it with: "
            "pip install 'adk-lattice[redis]'"
        ) from exc
    return redis_asyncio


class RedisStore(Store):
    """A store in Redis: keys under a namespace, TTL set by Redis, short timeouts.

    Every key is written as ``{namespace}:{key}``, so several apps (or test runs) can share
    one Redis; counters (``incr``) are ``{namespace}#{key}``, a key space that entries and
    ``delete_prefix`` never reach. ``incr`` is one Lua script (``INCRBY``, then ``PEXPIRE``
    when the counter has no expiry yet), atomic across every replica. Timeouts are short and client
    retries off by default: a cache that is slow to answer is worse than a miss. After a
    failure the store sends nothing for ``retry_after`` seconds (calls are misses, counted
    as ``skipped``), then tries again; the client reconnects by itself when Redis is back.

    Args:
        url: a Redis URL (``redis://host:port/db``); ignored when ``client`` is given.
        namespace: the key prefix (without ``:`` or ``#``); entries of other namespaces are
            never touched.
        client: an existing ``redis.asyncio.Redis`` to use instead (not closed by ``close``).
        connect_timeout: seconds to open a connection.
        socket_timeout: seconds to wait for a reply.
        retry_after: seconds to pause the store after a failure.
        scan_count: keys per SCAN step in ``delete_prefix``.
        name: the name used in logs and counters.

    Raises:
        ImportError: when the ``redis`` package is not installed.

    Example::

        store = RedisStore("redis://cache:6379/0", namespace="billing")
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        namespace: str = "adk_lattice",
        client: Redis | None = None,
        connect_timeout: float = 0.5,
        socket_timeout: float = 0.5,
        retry_after: float = 1.0,
        scan_count: int = 500,
        name: str = "redis",
    ) -> None:
        super().__init__(name=name, retry_after=retry_after)
        if not namespace or ":" in namespace or "#" in namespace:
            raise ValueError("namespace must be a non-empty string without ':' or '#'")
        redis_asyncio = _import_redis()
        self.namespace = namespace
        self._scan_count = scan_count
        self._owned = client is None
        if client is None:
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            client = redis_asyncio.Redis.from_url(
                url,
                socket_connect_timeout=connect_timeout,
                socket_timeout=socket_timeout,
                retry=Retry(NoBackoff(), 0),
            )
        elif client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError("RedisStore stores bytes: give it a client without decode_responses")
        self._client: Redis = client
        self._incr_script = client.register_script(_INCR_EXPIRE)

    @property
    def client(self) -> Redis:
        """The underlying ``redis.asyncio.Redis`` client."""
        return self._client

    def _k(self, key: str) -> str:
        return f"{self.namespace}:{key}"

    async def _get(self, key: str) -> bytes | None:
        value = await self._client.get(self._k(key))
        return value if isinstance(value, bytes) else None

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        px = max(1, int(ttl * 1000)) if ttl is not None else None
        await self._client.set(self._k(key), value, px=px)
        return True

    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        ms = max(1, int(window * 1000))
        script_args = [ms, amount]
        return int(await self._incr_script(keys=[f"{self.namespace}#{key}"], args=script_args))

    async def _delete(self, key: str) -> None:
        await self._client.delete(self._k(key))

    async def _delete_prefix(self, prefix: str) -> int:
        pattern = _GLOB_SPECIAL.sub(r"\\\1", self._k(prefix)) + "*"
        removed = 0
        batch: list[Any] = []
        async for k in self._client.scan_iter(match=pattern, count=self._scan_count):
            batch.append(k)
            if len(batch) >= self._scan_count:
                removed += int(await self._client.unlink(*batch))
                batch.clear()
        if batch:
            removed += int(await self._client.unlink(*batch))
        return removed

    async def _close(self) -> None:
        if self._owned:
            await self._client.aclose()
