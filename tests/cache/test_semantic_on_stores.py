"""SemanticResponseCache on SQLite and a real Redis: paraphrase hits, shared by replicas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
import redis

from adk_lattice.cache import RedisStore, SemanticResponseCache, SQLiteStore
from adk_lattice.policy import RateLimit
from adk_lattice.testing import ScriptedResponse
from tests._redis import RedisServer
from tests.cache.rig import Rig, text_of

S = ScriptedResponse


async def test_a_paraphrase_hits_on_sqlite(tmp_path: Path) -> None:
    """On SQLite a reworded question is served the stored answer."""
    store = SQLiteStore(tmp_path / "cache.sqlite3")
    rig = Rig([S.text("Paris.")], cache=[SemanticResponseCache(store)])
    await rig.ask("What is the capital of France?")
    events = await rig.ask("what is the capital of france")
    assert (text_of(events), rig.model.calls) == ("Paris.", 1)
    await rig.close()
    await store.close()


async def test_two_processes_on_one_sqlite_file_share_paraphrases(tmp_path: Path) -> None:
    """A second store on the same file (another process) serves what the first stored."""
    path = tmp_path / "cache.sqlite3"
    first, second = SQLiteStore(path), SQLiteStore(path)
    writer = Rig([S.text("Paris.")], cache=[SemanticResponseCache(first)])
    await writer.ask("What is the capital of France?")
    reader = Rig([S.text("never used")], cache=[SemanticResponseCache(second)])
    events = await reader.ask("what is the capital of france")
    assert (text_of(events), reader.model.calls) == ("Paris.", 0)
    for done in (writer, reader):
        await done.close()
    for store in (first, second):
        await store.close()


@pytest.mark.redis
async def test_replicas_on_one_redis_share_paraphrases(redis_server: RedisServer) -> None:
    """A replica's stored answer serves another replica's paraphrase; a refused one does not."""
    stores = [RedisStore(redis_server.url, namespace="semantic_replicas") for _ in range(2)]
    writer = Rig([S.text("Paris.")], cache=[SemanticResponseCache(stores[0])])
    await writer.ask("What is the capital of France?")
    reader_cache = SemanticResponseCache(stores[1])
    reader = Rig([S.text("Not Paris.")], cache=[reader_cache])
    served = await reader.ask("what is the capital of france")
    refused = await reader.ask("What is not the capital of France?")
    assert (text_of(served), text_of(refused)) == ("Paris.", "Not Paris.")
    assert reader_cache.stats["refused.negation"] == 1
    for done in (writer, reader):
        await done.close()
    for store in stores:
        await store.close()


@pytest.mark.redis
async def test_a_redis_outage_makes_the_semantic_cache_a_miss(
    redis_factory: object,
) -> None:
    """With Redis down the model answers; nothing is raised into the run."""
    server = redis_factory()  # type: ignore[operator]
    store = RedisStore(server.url, namespace="semantic_outage", retry_after=0)
    rig = Rig([S.text("one"), S.text("two")], cache=[SemanticResponseCache(store)])
    await rig.ask("What is the capital of France?")
    server.stop()
    events = await rig.ask("what is the capital of france")
    assert (text_of(events), rig.model.calls) == ("two", 2)
    await rig.close()
    await store.close()


@pytest.mark.redis
async def test_a_row_another_writer_left_unreadable_is_skipped(redis_server: RedisServer) -> None:
    """A truncated row in a Redis space is skipped: the paraphrase is still served, the store
    stays up, and a rate limit sharing it counts the next call instead of denying it."""
    store = RedisStore(redis_server.url, namespace="semantic_corrupt")
    rate = RateLimit(100, 60, store=store)
    cache = SemanticResponseCache(store)
    rig = Rig([S.text("Paris."), S.text("Bread.")], cache=[cache], policy=[rate])
    await rig.ask("What is the capital of France?")
    r = redis.Redis(port=redis_server.port)
    (rows,) = r.scan_iter("semantic_corrupt~h~*")
    r.hset(rows, "junk", b"\x01")
    r.zadd(rows.replace(b"~h~", b"~z~", 1), {"junk": 10**9})
    r.zadd(rows.replace(b"~h~", b"~e~", 1), {"junk": "+inf"})
    r.incr(rows.replace(b"~h~", b"~v~", 1))
    served = await rig.ask("what is the capital of france")
    after = await rig.ask("How do I bake bread?")
    assert (text_of(served), text_of(after)) == ("Paris.", "Bread.")
    assert (store.stats["vector_corrupt"], store.stats["errors"]) == (1, 0)
    await rig.close()
    await store.close()


async def test_a_stretched_row_does_not_outscore_every_question(tmp_path: Path) -> None:
    """A row another writer stretched to 1000 times unit length matches only its paraphrases,
    not every question of the scope."""
    path = tmp_path / "cache.sqlite3"
    store = SQLiteStore(path)
    rig = Rig([S.text("Paris."), S.text("Bread.")], cache=[SemanticResponseCache(store)])
    await rig.ask("What is the capital of France?")
    with sqlite3.connect(path) as db:
        ((space, vector),) = db.execute("SELECT space, vector FROM vectors").fetchall()
        stretched = (np.frombuffer(vector, dtype="<f4") * 1000).astype("<f4").tobytes()
        db.execute("UPDATE vectors SET vector = ?", (stretched,))
        db.execute("UPDATE vector_spaces SET version = version + 1 WHERE space = ?", (space,))
    events = await rig.ask("capital of France population")  # served "Paris." unnormalised
    assert text_of(events) == "Bread."
    await rig.close()
    await store.close()
