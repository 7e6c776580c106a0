"""Two replicas of one app (two Runners) sharing one Redis cache, offline on FakeModel.

Run it with ``PYTHONPATH=src python examples/shared_cache/main.py``. It uses the Redis at
``REDIS_URL`` when set; otherwise it starts its own ``redis-server`` on a free loopback
port (and stops it at the end), and says so clearly when ``redis-server`` is missing.
Replica A answers a question with its model; replica B, asked the same by the same user,
answers from Redis without calling its model. Then Redis is stopped: both replicas keep
answering from their models, and the cache is back when Redis is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import subprocess
import sys
import time

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.cache import RedisStore, ResponseCache
from adk_lattice.testing import FakeModel, ScriptedResponse

S = ScriptedResponse


def start_redis(port: int = 0) -> tuple[str, subprocess.Popen[bytes]]:
    """Start a throwaway redis-server on a loopback port (0: a free one); exit clearly if
    redis-server is missing."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit(
            "redis-server is not installed, and REDIS_URL is not set.\n"
            "Install Redis (e.g. `apt-get install redis-server`) or point REDIS_URL at one."
        )
    if not port:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                sys.exit(f"redis-server did not start on port {port}")
            time.sleep(0.05)
    return f"redis://127.0.0.1:{port}/0", proc


def replica(
    url: str, name: str, script: list[ScriptedResponse]
) -> tuple[Runner, FakeModel, RedisStore]:
    """One replica: its own Runner, model and RedisStore client, the shared namespace."""
    model = FakeModel(script=script)
    agent = LlmAgent(name="support", model=model, instruction="Answer support questions.")
    store = RedisStore(url, namespace="support_app", retry_after=0.5, name=f"redis@{name}")
    lattice = Lattice(cache=[ResponseCache(store, ttl=300)], telemetry=())
    app = App(name="support", root_agent=agent, plugins=[lattice])
    return Runner(app=app, session_service=InMemorySessionService()), model, store


async def ask(runner: Runner, user: str, text: str) -> str:
    """One turn in a fresh session; the answer and where it came from."""
    session = await runner.session_service.create_session(app_name="support", user_id=user)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events = [
        e async for e in runner.run_async(user_id=user, session_id=session.id, new_message=message)
    ]
    final = events[-1]
    answer = "".join(p.text or "" for p in (final.content.parts if final.content else []))
    marker = (final.custom_metadata or {}).get("adk_lattice", {}).get("cache")
    return f"{answer!r:34} <- {'cache via ' + marker['store'] if marker else 'model'}"


async def main() -> None:
    logging.basicConfig(format="   (log) %(message)s", stream=sys.stdout)
    # Cache hits spend no tokens, so ADK's "missing token usage" warning is noise here.
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    url = os.environ.get("REDIS_URL")
    proc = None
    if url is None:
        url, proc = start_redis()
        print(f"started redis-server for this demo at {url}")
    else:
        print(f"using REDIS_URL={url}")
    script = [S.text("Reset it under Settings."), S.text("Ask billing."), S.text("Mondays.")]
    a, model_a, store_a = replica(url, "A", script)
    b, model_b, store_b = replica(url, "B", [S.text("Reset it under Settings (B).")])
    try:
        print("replica A:", await ask(a, "alice", "How do I reset my password?"))
        print("replica B:", await ask(b, "alice", "How do I reset my password?"))
        print(f"model calls: A={model_a.calls}, B={model_b.calls}")
        if proc is not None:
            proc.terminate()
            proc.wait()
            print("-- redis-server stopped: the cache is a miss, every turn still answers")
            print("replica B:", await ask(b, "bob", "How do I reset my password?"))
            print("replica A:", await ask(a, "carol", "Who handles invoices?"))
            url, proc = start_redis(int(url.rsplit(":", 1)[1].split("/")[0]))
            await asyncio.sleep(0.6)  # past the stores' retry_after pause
            print("-- redis-server restarted (empty): the cache resumes")
            print("replica A:", await ask(a, "dave", "When are payouts?"))
            print("replica B:", await ask(b, "dave", "When are payouts?"))
        print(f"errors counted: A={store_a.stats['errors']}, B={store_b.stats['errors']}")
    finally:
        for closable in (a, b, store_a, store_b):
            await closable.close()
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    asyncio.run(main())
