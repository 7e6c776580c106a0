"""RateLimit and its counter stores (in-memory, and Redis against a real server)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool

from adk_lattice import Lattice, Outcome
from adk_lattice.cache import ResponseCache
from adk_lattice.policy import CounterStore, MemoryCounter, RateLimit, RedisCounter
from adk_lattice.policy._common import DENIAL_STATE_KEY
from adk_lattice.state import StateKey
from adk_lattice.stores import MemoryStore, RedisStore, SQLiteStore
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.cache.rig import Rig, text_of

from .conftest import noted, run_app, user

TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_memory_counter_counts_within_a_window() -> None:
    """Increments within the window accumulate."""
    store = MemoryCounter()
    assert [await store.incr("k", 60) for _ in range(3)] == [1, 2, 3]


async def test_memory_counter_resets_after_the_window() -> None:
    """After the window expires the count starts again at one."""
    clock = Clock()
    store = MemoryCounter(clock=clock)
    await store.incr("k", 10)
    clock.now = 11
    assert await store.incr("k", 10) == 1


async def test_memory_counter_is_bounded() -> None:
    """Past max_keys, the oldest keys are dropped so memory stays flat."""
    store = MemoryCounter(max_keys=10)
    for i in range(50):
        await store.incr(f"k{i}", 60)
    assert len(store._counts) <= 10


def test_memory_counter_satisfies_the_protocol() -> None:
    """MemoryCounter is a CounterStore."""
    assert isinstance(MemoryCounter(), CounterStore)


async def test_under_the_limit_passes(ctx: Any) -> None:
    """Calls up to the limit pass."""
    limit = RateLimit(2, 60)
    c = await ctx()
    assert await limit.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]
    assert await limit.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]


async def test_over_the_limit_is_refused_and_counted(ctx: Any) -> None:
    """The call past the limit is refused with a model-role answer, counted."""
    limit = RateLimit(1, 60)
    c = await ctx()
    await limit.before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    out = await limit.before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    assert out.custom_metadata["adk_lattice"]["reason"] == "rate_limited"
    assert limit.counts == {"allowed": 1, "denied": 1}


async def test_users_are_counted_separately(ctx: Any) -> None:
    """Another user has their own budget."""
    limit = RateLimit(1, 60)
    await limit.before_model(callback_context=await ctx(user_id="a"), llm_request=None)  # type: ignore[attr-defined]
    out = await limit.before_model(callback_context=await ctx(user_id="b"), llm_request=None)  # type: ignore[attr-defined]
    assert out is None


async def test_tenant_key_shares_one_budget_across_users(ctx: Any) -> None:
    """per=TENANT counts every user of a tenant together, from state."""
    limit = RateLimit(1, 60, per=TENANT)
    a = await ctx({"user:tenant_id": "acme"}, user_id="a")
    b = await ctx({"user:tenant_id": "acme"}, user_id="b")
    await limit.before_model(callback_context=a, llm_request=None)  # type: ignore[attr-defined]
    assert await limit.before_model(callback_context=b, llm_request=None) is not None  # type: ignore[attr-defined]


async def test_tool_hook_denies_with_a_dict(ctx: Any) -> None:
    """On before_tool, over the limit is a legible denial dict."""

    def ping() -> dict[str, Any]:
        """Ping."""
        return {}

    limit = RateLimit(0, 60, hook="before_tool")
    out = await limit.before_tool(tool=FunctionTool(ping), tool_args={}, tool_context=await ctx())  # type: ignore[attr-defined]
    assert out["status"] == "denied"
    assert out["reason"] == "rate limit reached (0 per 60 s)"


def test_only_the_chosen_hook_is_bound() -> None:
    """The instance exposes only the hook it counts on."""
    limit = RateLimit(1, 60, hook="before_agent")
    assert hasattr(limit, "before_agent")
    assert not hasattr(limit, "before_model")


def test_bad_settings_are_refused() -> None:
    """A negative limit, a zero window or an unknown hook raise ValueError."""
    with pytest.raises(ValueError, match="limit"):
        RateLimit(-1, 60)
    with pytest.raises(ValueError, match="window"):
        RateLimit(1, 0)
    with pytest.raises(ValueError, match="cannot count"):
        RateLimit(1, 60, hook="after_tool")  # type: ignore[arg-type]


def test_unknown_store_error_mode_is_refused() -> None:
    """on_store_error other than deny or allow raises ValueError."""
    with pytest.raises(ValueError, match="on_store_error"):
        RateLimit(1, 60, on_store_error="skip")  # type: ignore[arg-type]


class _BrokenCounter:
    async def incr(self, key: str, window_seconds: float) -> int:
        raise ConnectionError("down")


async def test_a_failing_store_denies_by_default(ctx: Any) -> None:
    """A store that raises: the call is refused with rate_limit_unavailable, counted."""
    limit = RateLimit(5, 60, store=_BrokenCounter())
    refused = await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert refused.custom_metadata["adk_lattice"]["reason"] == "rate_limit_unavailable"
    assert limit.counts == {"denied": 1, "store_errors": 1}


async def test_a_failing_store_allows_when_configured_open(ctx: Any) -> None:
    """With on_store_error="allow", a store that raises lets the call go on, counted."""
    limit = RateLimit(5, 60, store=_BrokenCounter(), on_store_error="allow")
    c = await ctx()
    assert await limit.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]
    assert limit.counts == {"store_errors": 1}


def test_the_default_store_is_a_memory_store() -> None:
    """Without store=, a RateLimit counts on a MemoryStore."""
    assert isinstance(RateLimit(1, 60).store, MemoryStore)


def test_a_store_without_incr_is_refused() -> None:
    """A store with no incr method is a clear TypeError."""
    with pytest.raises(TypeError, match="incr"):
        RateLimit(1, 60, store=object())  # type: ignore[arg-type]


def _corrupt_sqlite(tmp_path: Path) -> SQLiteStore:
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    return SQLiteStore(path)


async def test_a_shared_store_answering_none_denies_by_default(ctx: Any, tmp_path: Path) -> None:
    """A Store whose incr fails (None): the call is refused with rate_limit_unavailable."""
    store = _corrupt_sqlite(tmp_path)
    limit = RateLimit(5, 60, store=store)
    refused = await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert refused.custom_metadata["adk_lattice"]["reason"] == "rate_limit_unavailable"
    assert limit.counts == {"denied": 1, "store_errors": 1}
    await store.close()


async def test_a_shared_store_answering_none_allows_when_configured_open(
    ctx: Any, tmp_path: Path
) -> None:
    """With on_store_error="allow", a Store whose incr fails lets the call go on, counted."""
    store = _corrupt_sqlite(tmp_path)
    limit = RateLimit(5, 60, store=store, on_store_error="allow")
    assert await limit.before_model(callback_context=await ctx(), llm_request=None) is None  # type: ignore[attr-defined]
    assert limit.counts == {"store_errors": 1}
    await store.close()


async def test_a_failing_shared_store_is_logged_once_per_outage(
    ctx: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two failed counts in a row log one RateLimit warning, not two."""
    store = _corrupt_sqlite(tmp_path)
    limit = RateLimit(5, 60, store=store)
    with caplog.at_level(logging.WARNING, logger="adk_lattice.policy"):
        for _ in range(2):
            await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert len([r for r in caplog.records if r.name == "adk_lattice.policy"]) == 1
    await store.close()


async def test_runner_on_a_memory_store_refuses_the_request_over_the_limit() -> None:
    """Through a Runner, RateLimit(store=MemoryStore()) refuses the second request."""
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    agent = LlmAgent(name="assistant", model=model)
    store = MemoryStore()
    limit = RateLimit(1, 3600, store=store)
    run = await run_app(agent, [Lattice(policy=[limit])], "first")
    again = await run.send(user("second"))
    assert (run.texts, again.texts, model.calls) == (["one"], [limit.message], 1)
    assert store.stats["incrs"] == 2


async def test_runner_second_request_over_the_limit_is_refused() -> None:
    """Through a Runner, a second request in the window is refused before the model."""
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    agent = LlmAgent(name="assistant", model=model)
    limit = RateLimit(1, 3600)
    run = await run_app(agent, [Lattice(policy=[limit])], "first")
    again = await run.send(user("second"))
    assert run.texts == ["one"]
    assert again.texts == [limit.message]
    assert model.calls == 1


# -- Redis -------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port, for this module."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("ADK_LATTICE_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is not on PATH but ADK_LATTICE_REQUIRE_REDIS=1")
        pytest.skip("redis-server is not on PATH (install it, or set ADK_LATTICE_REQUIRE_REDIS=1)")
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
async def redis_store(redis_url: str) -> AsyncIterator[RedisCounter]:
    # Generous timeouts: these tests check counting, not a loaded machine's latency.
    store = RedisCounter.from_url(
        redis_url, prefix=f"t{time.monotonic_ns()}:", connect_timeout=5.0, socket_timeout=5.0
    )
    yield store
    await store.close()


@pytest.mark.redis
async def test_redis_counter_counts_within_a_window(redis_store: RedisCounter) -> None:
    """Increments within the window accumulate on the server."""
    assert [await redis_store.incr("k", 60) for _ in range(3)] == [1, 2, 3]


@pytest.mark.redis
async def test_redis_counter_expires_with_the_window(redis_store: RedisCounter) -> None:
    """The key expires after the window, so the count starts again."""
    await redis_store.incr("short", 0.2)
    await asyncio.sleep(0.4)
    assert await redis_store.incr("short", 0.2) == 1


@pytest.mark.redis
async def test_redis_counter_is_atomic_under_concurrency(
    redis_url: str, redis_store: RedisCounter
) -> None:
    """200 concurrent increments from two clients (two replicas) yield every count exactly once."""
    other = RedisCounter.from_url(
        redis_url, prefix=redis_store._prefix, connect_timeout=5.0, socket_timeout=5.0
    )
    try:
        results = await asyncio.gather(*(s.incr("shared", 60) for s in [redis_store, other] * 100))
    finally:
        await other.close()
    assert sorted(results) == list(range(1, 201))


@pytest.mark.redis
async def test_rate_limit_on_redis_is_shared_by_two_instances(redis_url: str, ctx: Any) -> None:
    """Two RateLimit instances (two replicas) on one Redis share one budget."""
    prefix = f"r{time.monotonic_ns()}:"
    a = RateLimit(1, 60, store=RedisCounter.from_url(redis_url, prefix=prefix))
    b = RateLimit(1, 60, store=RedisCounter.from_url(redis_url, prefix=prefix))
    c = await ctx()
    assert await a.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]
    assert await b.before_model(callback_context=c, llm_request=None) is not None  # type: ignore[attr-defined]
    for store in (a.store, b.store):
        assert isinstance(store, RedisCounter)
        await store.close()


@pytest.mark.redis
async def test_runner_rate_limit_on_a_redis_store_shared_with_a_response_cache(
    redis_url: str,
) -> None:
    """One RedisStore serves a ResponseCache and a RateLimit: a hit still counts, then refusal."""
    store = RedisStore(redis_url, namespace=f"shared{time.monotonic_ns()}")
    limit = RateLimit(2, 3600, store=store)
    rig = Rig([ScriptedResponse.text("a1")], cache=[ResponseCache(store)], policy=[limit])
    answers = [text_of(await rig.ask("A?")) for _ in range(3)]
    assert answers == ["a1", "a1", limit.message]
    assert rig.model.calls == 1
    assert limit.counts == {"allowed": 2, "denied": 1}
    await rig.close()
    await store.close()


@pytest.mark.redis
async def test_rate_limit_on_one_redis_store_namespace_is_shared_by_two_instances(
    redis_url: str, ctx: Any
) -> None:
    """Two RateLimits (two replicas) on RedisStores of one namespace share one budget."""
    namespace = f"replicas{time.monotonic_ns()}"
    stores = [RedisStore(redis_url, namespace=namespace) for _ in range(2)]
    a, b = (RateLimit(1, 60, store=s) for s in stores)
    c = await ctx()
    assert await a.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]
    assert await b.before_model(callback_context=c, llm_request=None) is not None  # type: ignore[attr-defined]
    for store in stores:
        await store.close()


async def test_rate_limit_on_a_closed_redis_port_denies(ctx: Any) -> None:
    """A RedisStore that cannot connect: the call is refused with rate_limit_unavailable."""
    store = RedisStore(f"redis://127.0.0.1:{_free_port()}/0", retry_after=0)
    limit = RateLimit(5, 60, store=store)
    refused = await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert refused.custom_metadata["adk_lattice"]["reason"] == "rate_limit_unavailable"
    assert store.stats["errors"] == 1
    await store.close()


async def test_a_refused_model_call_is_noted_rate_limited(ctx: Any) -> None:
    """Over the limit on before_model is noted as deny rate_limited."""
    c = await ctx()
    await RateLimit(0, 60).before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    assert noted(c, "before_model") == [("deny", "rate_limited")]


async def test_a_denied_tool_call_carries_and_notes_rate_limited(ctx: Any) -> None:
    """Over the limit on before_tool, the denial carries code rate_limited and is noted."""

    def ping() -> dict[str, Any]:
        """Ping."""
        return {}

    c = await ctx()
    limit = RateLimit(0, 60, hook="before_tool")
    out = await limit.before_tool(tool=FunctionTool(ping), tool_args={}, tool_context=c)  # type: ignore[attr-defined]
    assert out["code"] == "rate_limited"
    assert noted(c, "before_tool") == [("deny", "rate_limited")]


async def test_a_stopped_agent_is_noted_as_block_rate_limited(ctx: Any) -> None:
    """Over the limit on before_agent is noted as block rate_limited."""
    c = await ctx()
    await RateLimit(0, 60, hook="before_agent").before_agent(agent=None, callback_context=c)  # type: ignore[attr-defined]
    assert noted(c, "before_agent") == [("block", "rate_limited")]


async def test_a_call_under_the_limit_is_not_noted(ctx: Any) -> None:
    """A call within the limit leaves no note."""
    c = await ctx()
    await RateLimit(1, 60).before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    assert noted(c, "before_model") == []


async def test_a_user_id_holding_the_separator_has_its_own_counter() -> None:
    """A user id shaped like "tenant_id:acme" never shares the acme tenant's counter."""
    store = MemoryStore()
    by_tenant = Lattice(policy=[RateLimit(1, 60, per=TENANT, store=store)], telemetry=())
    by_user = Lattice(policy=[RateLimit(1, 60, store=store)], telemetry=())

    def model() -> FakeModel:
        return FakeModel([ScriptedResponse.text("hi")])

    spent = await run_app(
        LlmAgent(name="a", model=model()), [by_tenant], "hi", state={"user:tenant_id": "acme"}
    )
    assert spent.texts == ["hi"]
    forged = await run_app(
        LlmAgent(name="a", model=model()), [by_user], "hi", user_id="tenant_id:acme"
    )
    assert forged.texts == ["hi"]


def test_two_handlers_with_one_name_are_refused() -> None:
    """Two RateLimits with the default name fail at construction, saying to pass name=."""
    with pytest.raises(TypeError, match="name="):
        Lattice(policy=[RateLimit(5, 60), RateLimit(100, 3600)])


def _text(response: Any) -> str:
    return str(response.content.parts[0].text)


async def test_the_default_messages_read_as_written(ctx: Any) -> None:
    """Over the limit and with the store down, the user reads the default messages."""
    over = RateLimit(0, 60)
    refused = await over.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert _text(refused) == "You've reached the usage limit for now. Please try again later."
    down = RateLimit(5, 60, store=_BrokenCounter())
    busy = await down.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    assert _text(busy) == "The service is busy right now. Please try again shortly."


async def test_a_refusal_names_the_limit_that_made_it(ctx: Any) -> None:
    """The refusal says which handler refused: RateLimit, or the name given."""
    for name in ("RateLimit", "per_user_quota"):
        limit = RateLimit(0, 60) if name == "RateLimit" else RateLimit(0, 60, name=name)
        out = await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
        assert out.custom_metadata["adk_lattice"]["denied_by"] == name


async def test_apps_sharing_a_store_are_counted_apart() -> None:
    """One user of two apps on one store has each app's limit."""
    store = MemoryStore()
    seen = []
    for _ in range(2):
        model = FakeModel([ScriptedResponse.text("hi")])
        agent = LlmAgent(name="assistant", model=model)
        app = App(
            name=f"app{len(seen)}",
            root_agent=agent,
            plugins=[Lattice(policy=[RateLimit(1, 60, store=store)])],
        )
        runner = Runner(app=app, session_service=InMemorySessionService())
        session = await runner.session_service.create_session(app_name=app.name, user_id="u1")
        async for _ in runner.run_async(
            user_id="u1", session_id=session.id, new_message=user("hi")
        ):
            pass
        seen.append(model.calls)
    assert seen == [1, 1]


async def test_tenants_are_counted_apart(ctx: Any) -> None:
    """per=TENANT gives each tenant a budget of its own."""
    limit = RateLimit(1, 60, per=TENANT)
    acme = await ctx({"user:tenant_id": "acme"})
    globex = await ctx({"user:tenant_id": "globex"})
    await limit.before_model(callback_context=acme, llm_request=None)  # type: ignore[attr-defined]
    assert await limit.before_model(callback_context=globex, llm_request=None) is None  # type: ignore[attr-defined]


async def test_a_refusal_is_recorded_for_later_callbacks(ctx: Any) -> None:
    """Later callbacks of the run read why the call was refused in temp state."""
    limit = RateLimit(0, 60)
    c = await ctx()
    await limit.before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    assert c.state[DENIAL_STATE_KEY] == {
        "policy": "RateLimit",
        "reason": "rate_limited",
        "limit": 0,
    }


async def test_a_store_outage_is_recorded_for_later_callbacks(ctx: Any) -> None:
    """A refusal because the store is down is recorded as rate_limit_unavailable."""
    limit = RateLimit(5, 60, store=_BrokenCounter())
    c = await ctx()
    await limit.before_model(callback_context=c, llm_request=None)  # type: ignore[attr-defined]
    assert c.state[DENIAL_STATE_KEY]["reason"] == "rate_limit_unavailable"


async def test_a_tool_denial_names_the_tool(ctx: Any) -> None:
    """On before_tool, the denial says which tool was limited."""

    def ping() -> dict[str, Any]:
        """Ping."""
        return {}

    limit = RateLimit(0, 60, hook="before_tool")
    out = await limit.before_tool(tool=FunctionTool(ping), tool_args={}, tool_context=await ctx())  # type: ignore[attr-defined]
    assert out["tool"] == "ping"


async def test_a_redis_counter_does_not_retry_a_stalled_server() -> None:
    """A stalled Redis costs one attempt per call: the client makes no retries of its own."""
    accepted: list[asyncio.StreamWriter] = []

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # the command arrives; no reply ever does

    server = await asyncio.start_server(stall, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    counter = RedisCounter.from_url(f"redis://127.0.0.1:{port}/0", socket_timeout=0.2)
    try:
        with pytest.raises(Exception):  # noqa: B017, PT011 - redis's timeout error type
            await counter.incr("k", 60)
    finally:
        await counter.close()
        for writer in accepted:
            writer.close()
            await writer.wait_closed()
        server.close()
        await server.wait_closed()
    assert len(accepted) == 1


async def test_memory_counter_keeps_up_to_max_keys_and_no_more() -> None:
    """The counter drops keys only past max_keys: at 100,000 by default, at max_keys if set."""
    clock = Clock()
    store = MemoryCounter(clock=clock, max_keys=3)
    for key in ("a", "b", "c"):
        await store.incr(key, 60)
    assert [await store.incr(key, 60) for key in ("a", "b", "c")] == [2, 2, 2]
    await store.incr("d", 60)  # the fourth key pushes out the oldest
    assert await store.incr("a", 60) == 1
    default = MemoryCounter()
    for i in range(100_000):
        default._counts[f"k{i}"] = (1, 1e18)
    await default.incr("new", 60)
    assert len(default._counts) == 100_000


async def test_memory_counter_window_ends_exactly_at_its_length() -> None:
    """A window of 10 s started at 0 still counts at 5 and is over at 10."""
    clock = Clock()
    store = MemoryCounter(clock=clock)
    assert await store.incr("k", 10) == 1
    clock.now = 5
    assert await store.incr("k", 10) == 2
    clock.now = 10
    assert await store.incr("k", 10) == 1


async def test_expired_counters_are_purged_first_when_full() -> None:
    """When full, counters whose window ended go before live ones."""
    clock = Clock()
    store = MemoryCounter(clock=clock, max_keys=2)
    await store.incr("live", 100)
    await store.incr("brief", 5)
    clock.now = 5  # "brief" ends exactly now
    await store.incr("new", 100)
    assert await store.incr("live", 100) == 2


@pytest.mark.parametrize("hook", ["before_model", "before_agent", "before_tool"])
async def test_a_store_outage_reads_its_own_message(ctx: Any, hook: str) -> None:
    """With the counter store down, the user reads the unavailable message, not the limit's."""
    limit = RateLimit(5, 60, store=_BrokenCounter(), hook=hook, name="rl")  # type: ignore[arg-type]
    c = await ctx()
    out = await getattr(limit, hook)(
        **{
            "before_model": {"callback_context": c, "llm_request": None},
            "before_agent": {"agent": None, "callback_context": c},
            "before_tool": {"tool": None, "tool_args": {}, "tool_context": c},
        }[hook]
    )
    if hook == "before_tool":
        assert out["reason"] == "the rate limit could not be checked (counter store unavailable)"
        assert out["policy"] == "rl"
    else:
        text = (out.content if hook == "before_model" else out).parts[0].text
        assert text == limit.unavailable_message
    assert c.state[DENIAL_STATE_KEY] == {
        "policy": "rl",
        "reason": "rate_limit_unavailable",
        "limit": 5,
    }
    outcome = Outcome(
        hook=hook, args={("tool_context" if hook == "before_tool" else "callback_context"): c}
    )
    assert [n.handler for n in notes_of(outcome)] == ["rl"]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"limit": -1}, ValueError, "^limit must be a non-negative integer$"),
        ({"limit": 1.5}, ValueError, "^limit must be a non-negative integer$"),
        ({"window_seconds": 0}, ValueError, "^window_seconds must be positive$"),
        ({"per": "session"}, ValueError, "^RateLimit per: no state key 'session' is declared"),
        ({"on_store_error": "skip"}, ValueError, "^on_store_error must be 'deny' or 'allow'$"),
        (
            {"store": object()},
            TypeError,
            r"^store must be a Store or have async incr\(key, window\), got object$",
        ),
    ],
)
def test_a_bad_setting_fails_with_its_fix(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each setting mistake fails at construction with the rule as written."""
    settings: dict[str, Any] = {"limit": 1, "window_seconds": 60, **options}
    with pytest.raises(error, match=message):
        RateLimit(**settings)


def test_a_window_under_a_second_is_accepted() -> None:
    """window_seconds may be any positive length, under a second too."""
    assert RateLimit(1, 0.5).window_seconds == 0.5


def test_the_per_key_is_protected_and_the_store_named_after_the_limit() -> None:
    """A per= StateKey is among the state keys (protected); the default store is named
    after the handler; a per-user limit trusts no state key."""
    limit = RateLimit(1, 60, per=TENANT, name="per-tenant")
    assert (limit.state_keys, limit.store.name) == ((TENANT,), "per-tenant")  # type: ignore[attr-defined]
    assert RateLimit(1, 60).state_keys == ()


async def test_two_limits_on_one_store_count_apart(ctx: Any) -> None:
    """Two differently named limits sharing a store each count their own calls."""
    store = MemoryStore()
    first, second = RateLimit(1, 60, store=store, name="a"), RateLimit(1, 60, store=store, name="b")
    c = await ctx()
    assert await first.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]
    assert await second.before_model(callback_context=c, llm_request=None) is None  # type: ignore[attr-defined]


async def test_only_the_listed_tools_are_limited() -> None:
    """With tools=, a tool not listed is never counted or refused."""

    def ping() -> dict[str, Any]:
        """Ping."""
        return {"pong": True}

    def pong() -> dict[str, Any]:
        """Pong."""
        return {"ping": True}

    model = FakeModel([ScriptedResponse.call("pong"), ScriptedResponse.text("ok")])
    agent = LlmAgent(name="assistant", model=model, tools=[ping, pong])
    limit = RateLimit(0, 60, hook="before_tool", tools={"ping"})
    run = await run_app(agent, [Lattice(policy=[limit])], "go")
    assert run.responses("pong") == [{"ping": True}]


class _Switch:
    """A counter store that can be taken down and brought back."""

    def __init__(self) -> None:
        self.down = False
        self.n = 0

    async def incr(self, key: str, window_seconds: float) -> int:
        if self.down:
            raise ConnectionError("down")
        self.n += 1
        return self.n


async def test_each_outage_is_logged_with_the_error_type(
    ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """An outage, a recovery and a second outage log two warnings naming the error type."""
    store = _Switch()
    limit = RateLimit(100, 60, store=store)
    with caplog.at_level(logging.WARNING, logger="adk_lattice.policy"):
        for down in (True, False, True):
            store.down = down
            await limit.before_model(callback_context=await ctx(), llm_request=None)  # type: ignore[attr-defined]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all("(ConnectionError)" in w for w in warnings)
