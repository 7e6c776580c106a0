"""Response and tool-result caching on a memory store and an SQLite file, offline.

Run it with ``PYTHONPATH=src python examples/caching/main.py``. Part 1 caches answers and a
read-only tool in memory, shows a hit (and its marker), tenant isolation and a refund
invalidating the cached charge lookup. Part 2 puts the cache in an SQLite file and shows a
fresh Runner (think: the app restarted) answering from it.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.cache import MemoryStore, ResponseCache, SQLiteStore, Store, ToolResultCache
from adk_lattice.testing import FakeModel, ScriptedResponse

S = ScriptedResponse
tool_runs: dict[str, int] = {"lookup_charge": 0, "issue_refund": 0}


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge: amount and status."""
    tool_runs["lookup_charge"] += 1
    return {"charge_id": charge_id, "amount": 42.0, "status": "paid"}


def issue_refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge in full."""
    tool_runs["issue_refund"] += 1
    return {"charge_id": charge_id, "status": "refunded"}


def build(
    store: Store, script: list[ScriptedResponse]
) -> tuple[Runner, FakeModel, ResponseCache, ToolResultCache]:
    """An App whose lattice caches answers and charge lookups in ``store``."""
    model = FakeModel(script=script)
    agent = LlmAgent(
        name="billing",
        model=model,
        instruction="Answer billing questions.",
        tools=[lookup_charge, issue_refund],
    )
    answers = ResponseCache(store, ttl=600)
    lookups = ToolResultCache(
        store, tools={"lookup_charge": 300}, invalidates={"issue_refund": ["lookup_charge"]}
    )
    lattice = Lattice(cache=[answers, lookups], telemetry=())
    app = App(name="billing", root_agent=agent, plugins=[lattice])
    return Runner(app=app, session_service=InMemorySessionService()), model, answers, lookups


async def ask(runner: Runner, user: str, text: str) -> str:
    """One turn in a fresh session; returns the answer and whether the cache served it."""
    session = await runner.session_service.create_session(app_name="billing", user_id=user)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events: list[Event] = [
        e async for e in runner.run_async(user_id=user, session_id=session.id, new_message=message)
    ]
    final = events[-1]
    text_out = "".join(p.text or "" for p in (final.content.parts if final.content else []))
    marker = (final.custom_metadata or {}).get("adk_lattice", {}).get("cache")
    source = f"cache {marker['cache']!r} ({marker['store']})" if marker else "model"
    return f"{text_out!r:38} <- {source}"


def _brief(stats: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in stats.items() if v)


async def memory_part() -> None:
    print("== memory store ==")
    store = MemoryStore(max_entries=1000, max_bytes=8 * 2**20)
    look = S.call("lookup_charge", charge_id="ch_1")
    script = [
        S.text("We accept cards."),  # alice, then served from the cache
        S.text("We accept cards (bob)."),  # bob: same question, own entry
        look,  # alice looks up ch_1: the tool runs
        S.text("Charge ch_1 is 42.00, paid."),
        look,  # again: the tool result and then the final answer come from the cache
        S.call("issue_refund", charge_id="ch_1"),  # the refund clears alice's lookups
        S.text("Refunded ch_1."),
        look,  # so this lookup runs the tool again
        S.text("Charge ch_1 is refunded."),
    ]
    runner, model, answers, lookups = build(store, script)
    print("alice:", await ask(runner, "alice", "Which payment methods?"))
    print("alice:", await ask(runner, "alice", "Which payment methods?"))
    print("bob:  ", await ask(runner, "bob", "Which payment methods?"), "(users never share)")
    print("alice:", await ask(runner, "alice", "Show charge ch_1"))
    print("alice:", await ask(runner, "alice", "Show charge ch_1"))
    print("alice:", await ask(runner, "alice", "Refund ch_1"))
    print("alice:", await ask(runner, "alice", "Show charge ch_1 now"))
    print(f"model calls: {model.calls}, tool runs: {tool_runs}")
    print(f"response cache: {_brief(answers.stats)}")
    print(f"tool cache:     {_brief(lookups.stats)}")
    await runner.close()
    await store.close()


async def sqlite_part(path: Path) -> None:
    print(f"== SQLite store ({path.name}) ==")
    store = SQLiteStore(path)
    runner, model, *_ = build(store, [S.text("Invoices are emailed monthly.")])
    print("first process: ", await ask(runner, "alice", "When do invoices go out?"))
    await runner.close()
    await store.close()
    store = SQLiteStore(path)  # a new store and Runner on the same file: the app restarted
    runner, model, *_ = build(store, [S.text("never used")])
    print("after restart: ", await ask(runner, "alice", "When do invoices go out?"))
    print(f"model calls after restart: {model.calls}")
    await runner.close()
    await store.close()


async def main() -> None:
    # ADK warns about responses without token usage; cache hits spend no tokens.
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    await memory_part()
    with tempfile.TemporaryDirectory() as tmp:
        await sqlite_part(Path(tmp) / "cache.sqlite3")


if __name__ == "__main__":
    asyncio.run(main())
