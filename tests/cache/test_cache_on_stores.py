"""Caches over real stores: redaction before store, Redis outages, replicas sharing Redis."""

from __future__ import annotations

import asyncio
import itertools
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from google.adk.models.llm_response import LlmResponse

from adk_lattice import on
from adk_lattice.cache import RedisStore, ResponseCache, SQLiteStore
from adk_lattice.testing import ScriptedResponse
from tests._redis import RedisServer
from tests.cache.rig import RecordingStore, Rig, text_of

S = ScriptedResponse
EMAIL = "jane.doe@example.com"
_ns = itertools.count()


@on("after_model")
def redact_email(*, callback_context: object, llm_response: LlmResponse) -> None:
    """Output policy for the test: redact e-mail addresses in place."""
    for part in llm_response.content.parts if llm_response.content else ():
        if part.text:
            part.text = re.sub(r"[\w.]+@\w+(?:\.\w+)+", "[email]", part.text)


def _all_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in directory.iterdir())


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _redacted_turn(store: object) -> str:
    rig = Rig([S.text(f"Write to {EMAIL}.")], cache=[ResponseCache(store)], policy=[redact_email])
    answer = text_of(await rig.ask("Contact?"))
    await rig.close()
    return answer


async def test_memory_store_never_receives_the_raw_value() -> None:
    """What reaches the memory store is the redacted answer the user got."""
    store = RecordingStore()
    assert await _redacted_turn(store) == "Write to [email]."
    assert len(store.written) == 1
    assert b"[email]" in store.written[0] and EMAIL.encode() not in store.written[0]


async def test_sqlite_file_never_contains_the_raw_value(tmp_path: Path) -> None:
    """The SQLite file holds the redacted answer and never the raw e-mail."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    assert await _redacted_turn(store) == "Write to [email]."
    await store.close()
    data = await asyncio.to_thread(_all_bytes, tmp_path)
    assert b"[email]" in data and EMAIL.encode() not in data


@pytest.mark.redis
async def test_redis_never_holds_the_raw_value(redis_server: RedisServer) -> None:
    """Every value in the Redis namespace is redacted."""
    store = RedisStore(redis_server.url, namespace=f"pii{next(_ns)}")
    assert await _redacted_turn(store) == "Write to [email]."
    keys = [k async for k in store.client.scan_iter(match=f"{store.namespace}:*")]
    values = [await store.client.get(k) for k in keys]
    assert len(values) == 1 and b"[email]" in values[0] and EMAIL.encode() not in values[0]
    await store.close()


@pytest.mark.redis
async def test_turns_keep_working_when_redis_refuses_connections() -> None:
    """A RedisStore on a closed port: every turn is answered by the model, errors counted."""
    store = RedisStore(f"redis://127.0.0.1:{_closed_port()}/0", retry_after=0)
    rig = Rig([S.text("one"), S.text("two")], cache=[ResponseCache(store)])
    answers = [text_of(await rig.ask("Hi")) for _ in range(2)]
    assert answers == ["one", "two"]
    assert store.stats["errors"] >= 2
    await rig.close()
    await store.close()


@pytest.mark.redis
async def test_turns_keep_working_while_redis_is_down_and_the_cache_resumes(
    redis_factory: Callable[[], RedisServer],
) -> None:
    """Redis stopped mid-run: turns still answer; restarted: the cache hits again."""
    server = redis_factory()
    store = RedisStore(server.url, namespace="midrun", retry_after=0)
    script = [S.text("a1"), S.text("b1"), S.text("c1"), S.text("never")]
    rig = Rig(script, cache=[ResponseCache(store)])
    assert text_of(await rig.ask("A?")) == "a1"
    server.stop()
    assert text_of(await rig.ask("B?")) == "b1"
    assert store.stats["errors"] >= 1
    server.start()
    assert text_of(await rig.ask("C?")) == "c1"
    assert text_of(await rig.ask("C?")) == "c1"
    assert rig.model.calls == 3
    await rig.close()
    await store.close()


@pytest.mark.redis
async def test_a_second_replica_hits_what_the_first_stored(redis_server: RedisServer) -> None:
    """Two Runners (replicas) over one Redis: the second answers from the cache."""
    namespace = f"replicas{next(_ns)}"
    stores = [RedisStore(redis_server.url, namespace=namespace) for _ in range(2)]
    first = Rig([S.text("Paris.")], cache=[ResponseCache(stores[0])])
    second = Rig([S.text("never")], cache=[ResponseCache(stores[1])])
    await first.ask("Capital of France?")
    answer = await second.ask("Capital of France?")
    assert text_of(answer) == "Paris."
    assert (first.model.calls, second.model.calls) == (1, 0)
    for thing in (first, second, *stores):
        await thing.close()
