"""The ``semantic_cache`` scenario of ``make bench``: a lookup among 10,000 questions of a scope.

For each store, one scope is filled with 10,000 distinct questions and their answers, then
``before_model`` is timed on the real captured context for: an exact hit of the plain
``ResponseCache`` (the floor), a semantic hit (an exact miss, the embedding, the version
read, one matrix-vector product over the 10,000 rows, the guards and the answer read), a
refused near miss, and a cold lookup after another writer changed the scope (the rows read
again). The embedding and the search are also timed alone.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from google.genai import types
from scenarios import _captured, _percentile, _redis_server  # this folder is sys.path[0]

from adk_lattice.cache import (
    MemoryStore,
    RedisStore,
    ResponseCache,
    SemanticResponseCache,
    SQLiteStore,
)
from adk_lattice.cache._lexicon import words
from adk_lattice.testing import llm_response

ENTRIES = int(os.environ.get("BENCH_SEMANTIC_ENTRIES", "10000"))
RUNS = 300

_VERBS = words("book cancel find show list compare track refund renew update check explain")
_THINGS = words(
    "flight hotel invoice order parcel subscription ticket account card loan policy"
    " meeting report booking contract device router printer licence voucher"
)
_PLACES = words("Paris Rome Oslo Lima Cairo Quito Seoul Dakar Hanoi Perth Porto Accra")


def _questions(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    seen: set[str] = set()
    while len(seen) < n:
        seen.add(
            f"{rng.choice(_VERBS)} the {rng.choice(_THINGS)} {rng.randint(1, 99999)} for"
            f" {rng.choice(_PLACES)} in week {rng.randint(1, 52)}"
        )
    return sorted(seen)


def _request(base: Any, text: str) -> Any:
    contents = [types.Content(role="user", parts=[types.Part(text=text)])]
    return base.model_copy(update={"contents": contents})


async def _time(fn: Callable[[], Awaitable[Any]], runs: int = RUNS) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return {
        "p50_ms": round(_percentile(samples, 0.5) * 1000, 4),
        "p99_ms": round(_percentile(samples, 0.99) * 1000, 4),
    }


async def _fill(cache: SemanticResponseCache, ctx: Any, base: Any, texts: list[str]) -> None:
    model = cache.embedder._model  # type: ignore[attr-defined]
    from adk_lattice.cache._embedding import embedding_text

    vectors = model.embed([embedding_text(t) for t in texts], norm=True)
    query = await cache._query(ctx, _request(base, texts[0]))
    assert query is not None
    answer = cache._encode(llm_response("a cached answer"))
    for text, vector in zip(texts, vectors, strict=True):
        key = cache.key(ctx, _request(base, text))
        assert key is not None
        await cache.store.set(key, answer, None)
        meta = json.dumps({"text": text}).encode()
        await cache.store.vector_add(query.space, key, vector.tobytes(), meta, None, ENTRIES)


async def _measure(store: Any, ctx: Any, base: Any, texts: list[str]) -> dict[str, Any]:
    """The lookups of one store, filled with ``texts``."""
    stored = texts[123]
    exact = ResponseCache(store, name="bench_exact")
    exact_req = _request(base, stored)
    key = exact.key(ctx, exact_req)
    assert key is not None
    await store.set(key, exact._encode(llm_response("a cached answer")), None)
    cache = SemanticResponseCache(store, name="bench_semantic")
    await _fill(cache, ctx, base, texts)
    # The same words written otherwise: a semantic hit; with "not": refused by a guard.
    hit_req = _request(base, stored.upper())
    miss_req = _request(base, stored.replace(" for ", " not for "))

    async def exact_hit() -> Any:
        assert await exact.before_model(callback_context=ctx, llm_request=exact_req)

    async def semantic_hit() -> Any:
        assert await cache.before_model(callback_context=ctx, llm_request=hit_req)

    async def refused() -> Any:
        assert not await cache.before_model(callback_context=ctx, llm_request=miss_req)

    await semantic_hit()  # loads the scope's rows once
    row: dict[str, Any] = {
        "exact_hit": await _time(exact_hit),
        "semantic_hit": await _time(semantic_hit),
        "near_miss_refused": await _time(refused),
    }
    query = await cache._query(ctx, hit_req)
    assert query is not None
    colds = []
    for i in range(5):  # another writer changes the scope: the rows are read again
        other = cache.embedder(f"other question {i}").tobytes()  # type: ignore[union-attr]
        await store.vector_add(query.space, f"other{i}", other, b'{"text": "o"}', None, ENTRIES)
        start = time.perf_counter()
        await semantic_hit()
        colds.append(time.perf_counter() - start)
    row["cold_after_a_write"] = {"median_ms": round(statistics.median(colds) * 1000, 2)}
    row["semantic_to_exact"] = round(row["semantic_hit"]["p50_ms"] / row["exact_hit"]["p50_ms"], 1)
    vector = np.frombuffer(query.vector, dtype="<f4")

    async def embed() -> Any:
        cache.embedder("What is the capital of France?")

    async def search() -> Any:
        await cache._index.search(query.space, vector, threshold=0.84, limit=32)

    row["embed_one_question"] = await _time(embed)
    row["search_warm"] = await _time(search)
    return row


async def semantic_cache() -> dict[str, Any]:
    """Lookup cost at 10,000 entries in one scope, per store, against the exact cache."""
    ctx, base = await _captured()
    texts = _questions(ENTRIES)
    results: dict[str, Any] = {}
    with _redis_server() as redis_url:
        stores: dict[str, Callable[[], Any]] = {
            "memory": lambda: MemoryStore(max_entries=2 * ENTRIES),
            "sqlite": lambda: SQLiteStore(os.path.join(tempfile.mkdtemp(prefix="bench-"), "s.db")),
        }
        if redis_url is not None:
            stores["redis"] = lambda: RedisStore(redis_url, namespace="semantic_bench")
        for name, make in stores.items():
            store = make()
            results[name] = await _measure(store, ctx, base, texts)
            await store.close()
    return {
        "scenario": "semantic_cache",
        "unit": f"before_model in ms, {ENTRIES:,} entries in the scope",
        "results": {
            name: {
                "exact_hit_p50": r["exact_hit"]["p50_ms"],
                "semantic_hit_p50": r["semantic_hit"]["p50_ms"],
                "semantic_hit_p99": r["semantic_hit"]["p99_ms"],
                "near_miss_refused_p50": r["near_miss_refused"]["p50_ms"],
                "cold_after_a_write": r["cold_after_a_write"]["median_ms"],
                "embed_p50": r["embed_one_question"]["p50_ms"],
                "search_p50": r["search_warm"]["p50_ms"],
                "semantic_to_exact": r["semantic_to_exact"],
            }
            for name, r in results.items()
        },
    }
