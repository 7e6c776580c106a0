"""The counter-only stores: which counter a full MemoryCounter drops, and RedisCounter's keys,
expiry and connection settings against a real redis-server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from adk_lattice.policy import MemoryCounter, RateLimit, RedisCounter
from adk_lattice.policy.limits import rate as rate_module
from adk_lattice.stores import MemoryStore
from adk_lattice.testing import ScriptedResponse
from tests._redis import RedisServer, redis_binary
from tests.cache.rig import Rig, text_of
from tests.policy.test_rate import Clock

S = ScriptedResponse


async def test_a_counter_whose_window_restarted_is_the_newest_when_full() -> None:
    """When full, a counter whose window started again outlives one started before it."""
    clock = Clock()
    store = MemoryCounter(clock=clock, max_keys=2)
    await store.incr("a", 5)
    clock.now = 8
    await store.incr("b", 100)
    clock.now = 10
    await store.incr("a", 100)  # a's new window starts after b's: a is now the newest
    await store.incr("c", 100)  # full: the oldest live counter (b) goes
    assert await store.incr("a", 100) == 2
    assert await store.incr("b", 100) == 1


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real redis-server of this module's own."""
    server = RedisServer(redis_binary())
    server.start()
    yield server.url
    server.stop()


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A plain client, to read what the counters wrote."""
    plain = aioredis.from_url(redis_url)
    yield plain
    await plain.aclose()


def _unique() -> str:
    return f"t{time.monotonic_ns()}:"


@pytest.mark.redis
async def test_a_rate_limit_counter_keeps_its_key_layout_in_redis(
    redis_url: str, client: aioredis.Redis, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts stay under {prefix}{name}:{app}:{scope}:{escaped id}:{window}, as before."""
    monkeypatch.setattr(rate_module, "time", SimpleNamespace(time=lambda: 7200.5))
    prefix = _unique()
    counter = RedisCounter.from_url(redis_url, prefix=prefix)
    limit = RateLimit(5, 3600, store=counter)
    await limit.before_model(callback_context=await ctx(user_id="a/b:c"), llm_request=None)  # type: ignore[attr-defined]
    await counter.close()
    assert await client.keys(f"{prefix}*") == [f"{prefix}RateLimit:app:user:a%2Fb%3Ac:2".encode()]


@pytest.mark.redis
async def test_a_redis_counter_without_a_prefix_uses_the_key_as_given(
    redis_url: str, client: aioredis.Redis
) -> None:
    """RedisCounter(client) with no prefix counts under the key itself."""
    key = f"{_unique()}calls"
    counter = RedisCounter(aioredis.from_url(redis_url))
    await counter.incr(key, 60)
    await counter.close()
    assert await client.get(key) == b"1"


@pytest.mark.redis
async def test_a_redis_counter_lives_as_long_as_its_window(
    redis_url: str, client: aioredis.Redis
) -> None:
    """A counter with a one-hour window expires one hour after its first count."""
    prefix = _unique()
    counter = RedisCounter.from_url(redis_url, prefix=prefix)
    await counter.incr("k", 3600)
    await counter.close()
    assert 3_590_000 < await client.pttl(f"{prefix}k") <= 3_600_000


@pytest.mark.redis
async def test_a_window_under_a_millisecond_expires_after_one(
    redis_url: str, client: aioredis.Redis
) -> None:
    """A window shorter than Redis's finest expiry gets one millisecond, the shortest there is."""
    prefix = _unique()
    counter = RedisCounter.from_url(redis_url, prefix=prefix)
    async with client.monitor() as monitor:
        await counter.incr("k", 0.0001)

        async def expiry() -> str:
            while True:
                command = (await monitor.next_command())["command"]
                if command.startswith("PEXPIRE"):
                    return str(command)

        command = await asyncio.wait_for(expiry(), 5)
    await counter.close()
    assert command == f"PEXPIRE {prefix}k 1"


async def test_from_url_uses_short_timeouts_by_default() -> None:
    """From a URL, a counter waits 0.5 s to connect and 0.5 s for a reply, as documented."""
    counter = RedisCounter.from_url("redis://127.0.0.1:6379/0")
    settings = counter._client.get_connection_kwargs()
    await counter.close()
    assert (settings["socket_connect_timeout"], settings["socket_timeout"]) == (0.5, 0.5)


async def test_a_stalled_server_costs_one_attempt_even_if_the_url_asks_for_retries() -> None:
    """A URL with retry_on_timeout=true still gets no client retries: one timed-out attempt."""
    accepted: list[asyncio.StreamWriter] = []

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # the command arrives; no reply ever does

    server = await asyncio.start_server(stall, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0?retry_on_timeout=true"
    counter = RedisCounter.from_url(url, socket_timeout=0.2)
    try:
        with pytest.raises(redis.exceptions.TimeoutError):
            await counter.incr("k", 60)
    finally:
        await counter.close()
        for writer in accepted:
            writer.close()
            await writer.wait_closed()
        server.close()
        await server.wait_closed()
    assert len(accepted) == 1


async def test_a_megabyte_user_id_makes_a_short_counter_key() -> None:
    """A client-chosen user id of 2**20 characters is counted under a key of about a
    hundred characters, and two such ids differing in their last character count apart."""
    store = MemoryStore()
    limit = RateLimit(1, 60, store=store)
    rig = Rig([S.text("one"), S.text("two"), S.text("three")], policy=[limit])
    long_id = "u" * 2**20
    await rig.ask("Hi", user=long_id + "a")
    await rig.ask("Hi", user=long_id + "b")
    denied = await rig.ask("Hi", user=long_id + "a")
    assert text_of(denied) == limit.message
    assert limit.counts["allowed"] == 2
    assert max(len(k) for k in store._counters) < 200
    await rig.close()
