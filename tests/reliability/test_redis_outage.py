"""Redis stopped, stalled and restarted under a ResponseCache and a RateLimit sharing it."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable

import pytest
from google.adk.tools import FunctionTool

from adk_lattice.cache import RedisStore, ResponseCache
from adk_lattice.policy import RateLimit
from adk_lattice.policy.limits.rate import RedisCounter
from adk_lattice.testing import ScriptedResponse
from tests._redis import RedisServer
from tests.cache.rig import Rig, text_of

S = ScriptedResponse
pytestmark = pytest.mark.redis


class Parts:
    """A RedisStore-backed ResponseCache and a RedisCounter-backed RateLimit on one server."""

    def __init__(self, server: RedisServer, *, on_store_error: str = "allow") -> None:
        self.server = server
        self.store = RedisStore(server.url, namespace="outage", retry_after=0)
        self.counter = RedisCounter.from_url(server.url, prefix="rl:")
        self.limit = RateLimit(
            100,
            3600,
            store=self.counter,
            on_store_error=on_store_error,  # type: ignore[arg-type]
        )
        self.cache = ResponseCache(self.store)

    async def counted(self) -> int:
        """How many model calls Redis has counted for user u1, over all windows."""
        keys = [k async for k in self.store.client.scan_iter(match="rl:RateLimit:billing:*")]
        return sum([int(await self.store.client.get(k)) for k in keys])

    async def close(self) -> None:
        await self.store.close()
        await self.counter.close()


@pytest.fixture
def parts(redis_factory: Callable[[], RedisServer]) -> Callable[..., Parts]:
    """Make Parts on a private redis-server that the test may stop and restart."""
    return lambda **kw: Parts(redis_factory(), **kw)


async def test_turns_answer_across_a_restart_and_both_parts_resume(
    parts: Callable[..., Parts],
) -> None:
    """Redis down between turns: turns answer; back up: cache hits and counting resume."""
    p = parts()
    rig = Rig([S.text("a1"), S.text("b1"), S.text("c1")], cache=[p.cache], policy=[p.limit])
    assert text_of(await rig.ask("A?")) == "a1"
    p.server.stop()
    assert text_of(await rig.ask("B?")) == "b1"
    assert p.limit.counts["store_errors"] == 1 and p.store.stats["errors"] >= 1
    p.server.start()
    assert [text_of(await rig.ask("C?")) for _ in range(2)] == ["c1", "c1"]
    assert rig.model.calls == 3
    assert await p.counted() == 2  # the two turns after the restart, counted in Redis again
    await rig.close()
    await p.close()


async def test_redis_stopped_inside_a_turn_fails_no_turn(parts: Callable[..., Parts]) -> None:
    """Redis stopped by a tool mid-turn: the turn's next model call still answers (fail open)."""
    p = parts()
    tool = FunctionTool(_stopper(p.server))
    script = [S.call("stop_redis"), S.text("done")]
    rig = Rig(script, cache=[p.cache], policy=[p.limit], tools=[tool])
    assert text_of(await rig.ask("Go")) == "done"
    assert p.limit.counts == {"allowed": 1, "store_errors": 1}
    await rig.close()
    await p.close()


async def test_rate_limit_fails_closed_by_default_while_redis_is_down(
    parts: Callable[..., Parts],
) -> None:
    """With the default on_store_error, a call that cannot be counted is refused legibly."""
    p = parts(on_store_error="deny")
    rig = Rig([S.text("never")], cache=[p.cache], policy=[p.limit])
    p.server.stop()
    events = await rig.ask("Hi")
    assert text_of(events) == p.limit.unavailable_message
    meta = events[-1].custom_metadata or {}
    assert meta["adk_lattice"]["reason"] == "rate_limit_unavailable"
    assert rig.model.calls == 0
    await rig.close()
    await p.close()


async def test_a_failed_tool_count_is_a_legible_denial(parts: Callable[..., Parts]) -> None:
    """A before_tool RateLimit whose store is down denies the tool with a code, no crash."""
    p = parts()
    limit = RateLimit(5, 60, hook="before_tool", store=p.counter)
    ran: list[str] = []

    def lookup() -> dict[str, str]:
        """Look something up."""
        ran.append("ran")
        return {"status": "ok"}

    rig = Rig([S.call("lookup"), S.text("sorry")], policy=[limit], tools=[FunctionTool(lookup)])
    p.server.stop()
    events = await rig.ask("Go")
    responses = [
        part.function_response.response
        for e in events
        for part in (e.content.parts if e.content and e.content.parts else [])
        if part.function_response
    ]
    assert responses[0]["code"] == "rate_limit_unavailable" and not ran
    await rig.close()
    await p.close()


async def test_an_outage_is_logged_once_and_its_end_once(
    parts: Callable[..., Parts], caplog: pytest.LogCaptureFixture
) -> None:
    """Three failing calls log one warning; the first call after the restart logs recovery."""
    p = parts()
    rig = Rig([S.text(f"t{i}") for i in range(4)], policy=[p.limit])
    p.server.stop()
    with caplog.at_level(logging.INFO, logger="adk_lattice.policy"):
        for i in range(3):
            await rig.ask(f"Q{i}")
        p.server.start()
        await rig.ask("Q3")
    messages = [r.getMessage() for r in caplog.records if r.name == "adk_lattice.policy"]
    assert len([m for m in messages if "store failed" in m]) == 1
    assert len([m for m in messages if "answers again" in m]) == 1
    assert p.limit.counts["store_errors"] == 3
    await rig.close()
    await p.close()


async def test_a_stalled_redis_costs_a_timeout_not_a_hung_turn(
    parts: Callable[..., Parts],
) -> None:
    """Redis frozen (SIGSTOP): the turn answers after the short socket timeouts."""
    p = parts()
    rig = Rig([S.text("warm"), S.text("answered")], cache=[p.cache], policy=[p.limit])
    await rig.ask("Warm up")  # open the pooled connections before freezing the server
    proc = p.server._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        assert text_of(await rig.ask("Hi")) == "answered"
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    assert p.limit.counts["store_errors"] == 1 and p.store.stats["errors"] >= 1
    await rig.close()
    await p.close()


def _stopper(server: RedisServer) -> Callable[[], dict[str, str]]:
    def stop_redis() -> dict[str, str]:
        """Stop the Redis server."""
        server.stop()
        return {"status": "stopped"}

    return stop_redis
