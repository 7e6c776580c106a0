"""``runner.close()`` closes what the lattice owns, so the process can end.

Each exit test runs a real Runner in a child process and waits for it to exit by itself:
a store left open (aiosqlite's thread) keeps the child alive until the timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice.cache import ResponseCache, ToolResultCache
from adk_lattice.policy import RateLimit
from adk_lattice.stores import RedisStore, SQLiteStore
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests._redis import RedisServer, redis_server
from tests.support import run_app

__all__ = ["redis_server"]

#: Seconds a child has to run its turn, close the runner and exit on a loaded machine.
EXIT_TIMEOUT = 60

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, threading
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types
    from adk_lattice import Lattice
    from adk_lattice.cache import ResponseCache
    from adk_lattice.stores import SQLiteStore
    from adk_lattice.telemetry import AuditLog
    from adk_lattice.testing import FakeModel, ScriptedResponse

    kind, path = sys.argv[1], sys.argv[2]
    if kind == "sqlite":
        lattice = Lattice(cache=[ResponseCache(SQLiteStore(path))], telemetry=())
    else:
        lattice = Lattice(telemetry=[AuditLog(path, background=True, flush_interval=30)])

    async def main():
        agent = LlmAgent(name="desk", model=FakeModel([ScriptedResponse.text("hi")]))
        app = App(name="app", root_agent=agent, plugins=[lattice])
        runner = Runner(app=app, session_service=InMemorySessionService())
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="hello")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
        await runner.close()

    asyncio.run(main())
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    print(json.dumps(others))
    """
)


def run_child(kind: str, path: Path) -> list[str]:
    """Run the child to its end and return the threads still alive after ``runner.close()``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, kind, str(path)],
            capture_output=True,
            text=True,
            timeout=EXIT_TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process did not exit within {EXIT_TIMEOUT} s of runner.close()")
    assert done.returncode == 0, done.stderr
    threads: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return threads


def test_sqlite_cache_lets_the_process_exit(tmp_path: Path) -> None:
    """With ResponseCache(SQLiteStore(path)) the process exits after runner.close()."""
    assert run_child("sqlite", tmp_path / "cache.db") == []


def test_background_audit_is_written_and_its_worker_stopped(tmp_path: Path) -> None:
    """A background AuditLog writes its queued record at runner.close() and stops its thread."""
    path = tmp_path / "audit.jsonl"
    assert run_child("audit", path) == []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["agents"] for r in records] == [["desk"]]


class CountingSQLiteStore(SQLiteStore):
    """A real SQLite store that counts its closes."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.closes = 0

    async def close(self) -> None:
        self.closes += 1
        await super().close()


def lookup(order: str) -> dict[str, str]:
    """Look an order up."""
    return {"order": order, "status": "shipped"}


def agent() -> LlmAgent:
    """An agent that answers once, with a tool it could cache."""
    return LlmAgent(name="desk", model=FakeModel([ScriptedResponse.text("hi")]), tools=[lookup])


async def test_a_store_shared_by_handlers_is_closed_once(tmp_path: Path) -> None:
    """One store held by three handlers is closed once by runner.close()."""
    store = CountingSQLiteStore(tmp_path / "shared.db")
    handlers: list[Any] = [ResponseCache(store), ToolResultCache(store, tools=["lookup"])]
    lattice = Lattice(policy=[RateLimit(10, 60, store=store)], cache=handlers, telemetry=())
    turn = await run_app(agent(), lattice)
    await turn.runner.close()
    assert store.closes == 1


async def test_close_stores_false_leaves_the_stores_to_the_app(tmp_path: Path) -> None:
    """With close_stores=False runner.close() leaves a store the app shares open."""
    store = CountingSQLiteStore(tmp_path / "kept.db")
    lattice = Lattice(cache=[ResponseCache(store)], telemetry=(), close_stores=False)
    turn = await run_app(agent(), lattice)
    await turn.runner.close()
    assert store.closes == 0
    await store.close()


def redis_clients(server: RedisServer) -> int:
    """How many clients the server has connected, this probe's own connection excluded."""
    import redis

    probe = redis.Redis.from_url(server.url)
    try:
        return len(probe.client_list()) - 1
    finally:
        probe.close()


async def test_redis_connections_are_released(redis_server: RedisServer) -> None:
    """runner.close() hangs up every Redis connection of the lattice's stores."""
    cache = ResponseCache(RedisStore(redis_server.url, namespace="close-cache"))
    limit = RateLimit(10, 60, store=RedisStore(redis_server.url, namespace="close-rate"))
    lattice = Lattice(policy=[limit], cache=[cache], telemetry=())
    turn = await run_app(agent(), lattice)
    assert redis_clients(redis_server) >= 1
    await turn.runner.close()
    assert redis_clients(redis_server) == 0
