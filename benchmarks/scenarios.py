"""Benchmark scenarios. Each runs in its own process and prints one JSON object.

Usage: ``python benchmarks/scenarios.py NAME`` with NAME one of :data:`SCENARIOS`.
``benchmarks/run.py`` runs them all and prints the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from bench_redact import redact  # this folder is sys.path[0]
from bundles import CONFIGS, EXPORTER, PROVIDER, make_plugins
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, on
from adk_lattice.testing import FakeModel, ScriptedResponse

TURNS_PER_BATCH = int(os.environ.get("BENCH_BATCH", "40"))
REPETITIONS = int(os.environ.get("BENCH_REPS", "7"))


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up one charge."""
    return {"charge_id": charge_id, "amount": _amount(charge_id), "currency": "EUR"}


def _amount(charge_id: str) -> float:
    return 10 + int(charge_id.removeprefix("ch_")) % 90 + 0.5


class _Discard(list):  # type: ignore[type-arg]
    def append(self, item: Any) -> None:  # keep nothing: the benchmark must not grow
        return None


#: Distinct scripted turns before the script repeats: more than any scenario runs, so each
#: turn's charge, tool result and answer are new text, as in a real conversation, and a memo
#: of what the guards read cannot be served the same answer twice.
SCRIPTED_TURNS = 5_000


def _agent(kind: str) -> LlmAgent:
    script: list[ScriptedResponse] = []
    for i in range(1, SCRIPTED_TURNS + 1):
        if kind == "tool":
            answer = f"Charge ch_{i} is EUR {_amount(f'ch_{i}'):.2f}."
            script.append(ScriptedResponse.call("lookup_charge", charge_id=f"ch_{i}"))
            script.append(ScriptedResponse.text(answer, input_tokens=20, output_tokens=8))
        else:
            answer = f"Hello there, this is answer {i}."
            script.append(ScriptedResponse.text(answer, input_tokens=10, output_tokens=4))
    # The script repeats (a benchmark never runs dry) and no request is kept.
    model = FakeModel(script, loop=True)
    model._requests = _Discard()
    return LlmAgent(name="billing", model=model, tools=[lookup_charge])


class _Setup:
    """One Runner per configuration; each turn runs on a fresh session, deleted after."""

    def __init__(self, config: str, kind: str, tmp: str) -> None:
        plugins = make_plugins(config, tmp)
        app = App(name="bench", root_agent=_agent(kind), plugins=plugins)
        self.service = InMemorySessionService()
        self.runner = Runner(app=app, session_service=self.service)
        self.peer = config == "openinference"
        self.count = 0
        #: CPU seconds of this process spent in turns (``time.process_time``): on a loaded
        #: machine, wall time also counts the time other jobs held the cores.
        self.cpu = 0.0

    async def turn(self, user: str = "u1") -> float:
        session = await self.service.create_session(
            app_name="bench", user_id=user, state={"user:account_active": True}
        )
        # A new question each turn: the response cache in the bundle misses, as asked.
        self.count += 1
        text = f"What is on charge ch_{self.count}?"
        message = types.Content(role="user", parts=[types.Part(text=text)])
        start, cpu = time.perf_counter(), time.process_time()
        async for _ in self.runner.run_async(
            user_id=user, session_id=session.id, new_message=message
        ):
            pass
        elapsed = time.perf_counter() - start
        self.cpu += time.process_time() - cpu
        await self.service.delete_session(app_name="bench", user_id=user, session_id=session.id)
        return elapsed


async def per_turn(kind: str) -> dict[str, Any]:
    """Median per-turn time of each configuration, batches interleaved across configs."""
    import tempfile

    tmp = tempfile.mkdtemp(prefix="bench-")
    setups = {name: _Setup(name, kind, tmp) for name in CONFIGS}
    peer = _Peer()

    async def batch(setup: _Setup, turns: int) -> tuple[float, float]:
        EXPORTER.clear()
        gc.collect()
        setup.cpu = 0.0
        with peer.on(setup.peer):
            total = 0.0
            for _ in range(turns):
                total += await setup.turn()
        return total / turns, setup.cpu / turns

    for setup in setups.values():  # warm-up: lazy imports, first-call caches
        await batch(setup, 10)
    samples: dict[str, list[float]] = {name: [] for name in setups}
    cpu: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(REPETITIONS):
        for name, setup in setups.items():
            wall, used = await batch(setup, TURNS_PER_BATCH)
            samples[name].append(wall)
            cpu[name].append(used)
    medians = {name: statistics.median(s) for name, s in samples.items()}
    cpu_medians = {name: statistics.median(s) for name, s in cpu.items()}
    bare, bare_cpu = medians["bare"], cpu_medians["bare"]
    return {
        "scenario": f"per_turn_{kind}",
        "unit": "ms per turn",
        "results": {
            name: {
                "ms": round(m * 1000, 4),
                "ratio": round(m / bare, 4),
                "cpu_ms": round(cpu_medians[name] * 1000, 4),
                "cpu_ratio": round(cpu_medians[name] / bare_cpu, 4),
            }
            for name, m in medians.items()
        },
    }


class _Peer:
    """openinference-instrumentation-google-adk, instrumented only around its own batches."""

    def __init__(self) -> None:
        from openinference.instrumentation.google_adk import GoogleADKInstrumentor

        self.instrumentor = GoogleADKInstrumentor()

    @contextlib.contextmanager
    def on(self, active: bool) -> Iterator[None]:
        if not active:
            yield
            return
        self.instrumentor.instrument(tracer_provider=PROVIDER)
        try:
            yield
        finally:
            self.instrumentor.uninstrument()


class _NoOp(BasePlugin):
    def __init__(self) -> None:
        super().__init__("noop")


async def _captured() -> tuple[Any, Any]:
    """A real callback context and request, captured from one real run."""
    seen: dict[str, Any] = {}

    @on("before_model")
    def grab(*, callback_context: Any, llm_request: Any) -> None:
        seen["ctx"], seen["req"] = callback_context, llm_request

    lattice = Lattice(name="grab", handlers=[grab], telemetry=())
    app = App(name="bench", root_agent=_agent("text"), plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    msg = types.Content(role="user", parts=[types.Part(text="hi")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=msg):
        pass
    return seen["ctx"], seen["req"]


class _Pass:
    """A pass-through handler on both model hooks."""

    def __init__(self, i: int) -> None:
        self.name = f"pass{i}"

    def before_model(self, *, callback_context: Any, llm_request: Any) -> None:
        return None

    def after_model(self, *, callback_context: Any, llm_response: Any) -> None:
        return None


def _passing(n: int) -> list[Any]:
    return [_Pass(i) for i in range(n)]


async def dispatch() -> dict[str, Any]:
    """ns per before_model dispatch through ADK's PluginManager, per plugin setup."""
    ctx, req = await _captured()
    managers: dict[str, PluginManager] = {
        "no plugin": PluginManager([]),
        "no-op BasePlugin": PluginManager([_NoOp()]),
        "empty Lattice": PluginManager([Lattice(telemetry=())]),
    }
    for n in (1, 5, 20):
        managers[f"Lattice + {n} handlers"] = PluginManager(
            [Lattice(handlers=_passing(n), telemetry=())]
        )
    calls = 20_000
    samples: dict[str, list[float]] = {name: [] for name in managers}

    resp = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="hi")]))

    async def loop(pm: PluginManager) -> float:
        # before_model and after_model in pairs, as in a real turn; ns per hook call.
        before, after = pm.run_before_model_callback, pm.run_after_model_callback
        start = time.perf_counter_ns()
        for _ in range(calls):
            await before(callback_context=ctx, llm_request=req)
            await after(callback_context=ctx, llm_response=resp)
        return (time.perf_counter_ns() - start) / (2 * calls)

    for pm in managers.values():
        for plugin in pm.plugins:  # an open invocation, as in a real run
            await plugin.before_run_callback(invocation_context=ctx._invocation_context)
        await loop(pm)
    for _ in range(REPETITIONS):
        for name, pm in managers.items():
            samples[name].append(await loop(pm))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    noop = medians["no-op BasePlugin"]
    return {
        "scenario": "dispatch_model_hooks",
        "unit": "ns per hook",
        "results": {
            name: {"ns": round(m, 1), "ratio_to_noop_plugin": round(m / noop, 4)}
            for name, m in medians.items()
        },
    }


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def memory() -> dict[str, Any]:
    """RSS growth over 10,000 invocations, bare ADK and with the bundle, same loop."""
    import tempfile

    tmp = tempfile.mkdtemp(prefix="bench-")
    count = int(os.environ.get("BENCH_INVOCATIONS", "10000"))
    results: dict[str, Any] = {}
    for name in ("bare", "bundle"):
        setup = _Setup(name, "tool", tmp)
        for _ in range(500):
            await setup.turn()
        EXPORTER.clear()
        gc.collect()
        before = _rss_kib()
        for i in range(count):
            await setup.turn(user=f"u{i % 50}")
            if i % 100 == 0:
                EXPORTER.clear()  # the in-memory span exporter keeps every span it is given
        gc.collect()
        after = _rss_kib()
        plugins = setup.runner.plugin_manager.plugins
        open_records = sum(getattr(p, "open_invocations", 0) for p in plugins)
        results[name] = {
            "rss_before_mib": round(before / 1024, 2),
            "rss_after_mib": round(after / 1024, 2),
            "growth_mib": round((after - before) / 1024, 2),
            "open_records_after": open_records,
        }
    return {"scenario": "memory", "invocations": count, "results": results}


async def throughput() -> dict[str, Any]:
    """Turns per second with 200 concurrent sessions, bare ADK vs the bundle."""
    import tempfile

    tmp = tempfile.mkdtemp(prefix="bench-")
    sessions = 200
    results: dict[str, Any] = {}
    setups = {name: _Setup(name, "tool", tmp) for name in ("bare", "bundle")}
    for setup in setups.values():
        await asyncio.gather(*(setup.turn(f"u{i}") for i in range(sessions)))
    samples: dict[str, list[float]] = {name: [] for name in setups}
    cpu: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(REPETITIONS):
        for name, setup in setups.items():
            start, used = time.perf_counter(), time.process_time()
            await asyncio.gather(*(setup.turn(f"u{i % 50}") for i in range(sessions)))
            samples[name].append(sessions / (time.perf_counter() - start))
            cpu[name].append(sessions / (time.process_time() - used))
    for name, s in samples.items():
        results[name] = {
            "turns_per_s": round(statistics.median(s), 1),
            "turns_per_cpu_s": round(statistics.median(cpu[name]), 1),
        }
    bare = results["bare"]["turns_per_s"]
    bare_cpu = results["bare"]["turns_per_cpu_s"]
    for r in results.values():
        r["ratio"] = round(r["turns_per_s"] / bare, 4)
        r["cpu_ratio"] = round(r["turns_per_cpu_s"] / bare_cpu, 4)
    return {"scenario": "throughput", "concurrent_sessions": sessions, "results": results}


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _request_of_size(base: Any, size: int) -> Any:
    """A copy of a real request whose contents hold about ``size`` bytes of text."""
    req = base.model_copy(deep=True)
    words = "the charge was refunded to the original card after review "
    text = (words * (size // len(words) + 1))[:size]
    req.contents = [types.Content(role="user", parts=[types.Part(text=text)])]
    return req


@contextlib.contextmanager
def _redis_server() -> Iterator[str | None]:
    """A throw-away redis-server on a free loopback port, or None when there is none."""
    import shutil
    import socket
    import subprocess

    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


async def cache() -> dict[str, Any]:
    """Cache key cost against the serialise-and-hash floor, and hit latency per store."""
    import hashlib
    import tempfile

    from adk_lattice.cache import ResponseCache
    from adk_lattice.cache._keys import request_digest
    from adk_lattice.stores import MemoryStore, RedisStore, SQLiteStore

    ctx, base = await _captured()
    keys: dict[str, Any] = {}
    for size in (1_000, 10_000, 100_000, 1_000_000):
        req = _request_of_size(base, size)
        runs = max(5, 2_000_000 // (size + 2_000))

        def floor(req: Any = req) -> str:
            return hashlib.sha256(req.model_dump_json().encode()).hexdigest()

        def key(req: Any = req) -> str:
            return request_digest(req)

        timings: dict[str, list[float]] = {"floor": [], "key": []}
        for _ in range(REPETITIONS):
            for name, fn in (("floor", floor), ("key", key)):
                start = time.perf_counter()
                for _ in range(runs):
                    fn()
                timings[name].append((time.perf_counter() - start) / runs)
        f, k = statistics.median(timings["floor"]), statistics.median(timings["key"])
        keys[f"{size // 1000} KB"] = {
            "floor_us": round(f * 1e6, 1),
            "key_us": round(k * 1e6, 1),
            "key_to_floor": round(k / f, 3),
        }
    hits: dict[str, Any] = {}
    with _redis_server() as redis_url:
        stores: dict[str, Any] = {
            "memory": MemoryStore(),
            "sqlite": SQLiteStore(os.path.join(tempfile.mkdtemp(prefix="bench-"), "c.db")),
        }
        if redis_url is not None:
            stores["redis"] = RedisStore(redis_url, namespace="bench")
        from adk_lattice.testing import llm_response

        for name, store in stores.items():
            rc = ResponseCache(store, name=f"bench_{name}")
            key = rc.key(ctx, base)
            assert key is not None
            await store.set(key, rc._encode(llm_response("a cached answer")), None)
            samples = []
            for _ in range(1_000):
                start = time.perf_counter()
                served = await rc._lookup(key, ctx)
                samples.append(time.perf_counter() - start)
                assert served is not None
            hits[name] = {
                "p50_ms": round(_percentile(samples, 0.5) * 1000, 4),
                "p99_ms": round(_percentile(samples, 0.99) * 1000, 4),
            }
            await store.close()
    return {"scenario": "cache", "key_cost": keys, "hit_latency": hits}


SCENARIOS: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
    "per_turn_text": lambda: per_turn("text"),
    "per_turn_tool": lambda: per_turn("tool"),
    "dispatch": dispatch,
    "memory": memory,
    "cache": cache,
    "semantic_cache": lambda: __import__("semantic_cost").semantic_cache(),
    "throughput": throughput,
    # In its own module (heavy imports); this folder is sys.path[0].
    "detectors": lambda: __import__("detectors").detectors(),
    "redact": redact,
    "scan": lambda: _sync(__import__("scan").scan),
    "stream": lambda: _sync(__import__("scan").stream),
}


async def _sync(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return fn()


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    print(json.dumps(asyncio.run(SCENARIOS[sys.argv[1]]())))
