"""``RedisStore``: one cache shared by every replica, on ``redis.asyncio``.

``redis`` is an optional dependency (``pip install 'adk-lattice[redis]'``) imported when a
``RedisStore`` is made, so the rest of the package works without it.
"""

from __future__ import annotations

import re
import struct
from typing import TYPE_CHECKING, Any

from ._base import Store, VectorRow, VectorRows, read_row

if TYPE_CHECKING:
    from redis.asyncio import Redis

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")

# INCRBY and the window's PEXPIRE in one server-side step: atomic across replicas, and a key
# can never be left without an expiry by a client that dies between the two commands. A
# negative amount (giving back) never creates a counter. The amount goes to INCRBY as the
# caller's digits (a Lua number is a double: past 2**53 it would round, past about 1e17 it
# would be written in exponent form), and the count comes back as GET's digits for the same
# reason; a sum past a signed 64-bit integer is refused (nil), the counter unchanged.
_INCR_EXPIRE = """
if string.sub(ARGV[2], 1, 1) == '-' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.pcall('INCRBY', KEYS[1], ARGV[2])
if type(n) == 'table' and n.err then
  if string.find(n.err, 'overflow', 1, true) then return false end
  return n
end
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return redis.call('GET', KEYS[1])
"""


# One vector space is four keys: the rows (a hash), their order (a sorted set by a
# sequence number), their expiries (a sorted set by Redis time in ms) and the version.
# Every change is one script, so replicas never see half of one.
_VECTOR_ADD = """
local fresh = redis.call('EXISTS', KEYS[1]) == 0
local seq = redis.call('INCR', KEYS[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
if ttl > 0 then redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
else redis.call('ZADD', KEYS[3], '+inf', ARGV[1]) end
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
local n = redis.call('ZCARD', KEYS[2]) - #gone
local limit = tonumber(ARGV[4])
if n > limit then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, n - limit - 1)) do table.insert(gone, m) end
end
for _, m in ipairs(gone) do
  redis.call('HDEL', KEYS[1], m); redis.call('ZREM', KEYS[2], m); redis.call('ZREM', KEYS[3], m)
end
redis.call('SET', KEYS[4], seq)
local keep = redis.call('PTTL', KEYS[1])
for i = 1, 4 do
  if ttl <= 0 then redis.call('PERSIST', KEYS[i])
  elseif fresh or (keep >= 0 and keep < ttl) then redis.call('PEXPIRE', KEYS[i], ttl)
  elseif keep >= 0 then redis.call('PEXPIRE', KEYS[i], keep) end
end
return seq
"""

# The version, then every live row oldest first: member, value, expiry (ms), ...
_VECTOR_ROWS = """
local version = tonumber(redis.call('GET', KEYS[4]) or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {version}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local exp = redis.call('ZSCORE', KEYS[3], m)
  if exp == false or exp == 'inf' or tonumber(exp) > now then
    local v = redis.call('HGET', KEYS[1], m)
    if v then table.insert(out, m); table.insert(out, v); table.insert(out, exp or 'inf') end
  end
end
return out
"""

_VECTOR_REMOVE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1]); redis.call('ZREM', KEYS[3], ARGV[1])
local keep = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[4], redis.call('INCR', KEYS[5]))
if keep > 0 then redis.call('PEXPIRE', KEYS[4], keep) end
return 1
"""


def _parse_row(member: Any, value: Any, expires: Any) -> VectorRow | None:
    """One row of ``_VECTOR_ROWS``: the vector's length, the vector, the meta; or None."""
    if not isinstance(value, bytes) or len(value) < 4:
        return None
    (size,) = struct.unpack_from("<I", value)
    if size > len(value) - 4:
        return None
    try:
        exp = None if expires in (b"inf", "inf") else float(expires) / 1000
    except (TypeError, ValueError):
        return None
    return read_row(member, value[4 : 4 + size], value[4 + size :], exp)


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
    ``delete_prefix`` never reach, and vector spaces ``{namespace}~{kind}~{space}``.
    ``incr`` is one Lua script (``INCRBY``, then ``PEXPIRE`` when the counter has no expiry
    yet), atomic across every replica. Timeouts are short and client
    retries off by default: a cache that is slow to answer is worse than a miss. After a
    failure the store sends nothing for ``retry_after`` seconds (calls are misses, counted
    as ``skipped``), then tries again; the client reconnects by itself when Redis is back.

    Args:
        url: a Redis URL (``redis://host:port/db``); ignored when ``client`` is given.
        namespace: the key prefix (without ``:``, ``#`` or ``~``, the separators of entries,
            counters and vector spaces); keys of other namespaces are never touched.
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
        if not isinstance(namespace, str) or not namespace or any(c in namespace for c in ":#~"):
            # ':' ends the entries' prefix, '#' the counters', '~' the vector spaces': with
            # any of them, one namespace's keys could be another namespace's.
            raise ValueError("namespace must be a non-empty string without ':', '#' or '~'")
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
        self._vector_add_script = client.register_script(_VECTOR_ADD)
        self._vector_rows_script = client.register_script(_VECTOR_ROWS)
        self._vector_remove_script = client.register_script(_VECTOR_REMOVE)

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
        script_args: list[int | str] = [ms, str(amount)]
        count = await self._incr_script(keys=[f"{self.namespace}#{key}"], args=script_args)
        if count is None:  # the sum would leave a signed 64-bit integer: refused
            self._stats["out_of_range"] += 1
            return None
        return int(count)

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

    # -- vectors -----------------------------------------------------------------------------

    def _space_keys(self, space: str) -> list[str]:
        # Kinds first, so no space name can end where another space's key begins.
        ns = self.namespace
        keys = [f"{ns}~{kind}~{space}" for kind in ("h", "z", "e", "v")]
        return [*keys, f"{ns}~clock"]

    async def _vector_add(
        self, space: str, member: str, vector: bytes, meta: bytes, ttl: float | None, limit: int
    ) -> None:
        ms = max(1, int(ttl * 1000)) if ttl is not None else 0
        value = struct.pack("<I", len(vector)) + vector + meta
        args: list[bytes | str | int] = [member, value, ms, limit]
        await self._vector_add_script(keys=self._space_keys(space), args=args)

    async def _vector_version(self, space: str) -> int:
        version = await self._client.get(self._space_keys(space)[3])
        return int(version) if version is not None else 0

    async def _vector_rows(self, space: str) -> VectorRows:
        out = await self._vector_rows_script(keys=self._space_keys(space))
        rows = []
        for i in range(1, len(out) - 2, 3):
            row = _parse_row(out[i], out[i + 1], out[i + 2])
            if row is None:  # a row another writer left that does not read: skipped
                self._stats["vector_corrupt"] += 1
            else:
                rows.append(row)
        return VectorRows(int(out[0]), tuple(rows))

    async def _vector_remove(self, space: str, member: str) -> None:
        await self._vector_remove_script(keys=self._space_keys(space), args=[member])

    async def _close(self) -> None:
        if self._owned:
            await self._client.aclose()
