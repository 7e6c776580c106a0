"""What ProvenanceGuard's request fingerprint costs when something may write after it.

The guard fingerprints a model request only when a plugin listed after the lattice, or the
agent's own ``before_model_callback``, may write into it; then it hashes the request twice
per model call (as the lattice left it, and as the model answered it). This runs real
Runner turns (a trusted tool call, then a text answer, on ``FakeModel``) in a session whose
history grows to ``TURNS`` turns, in four configurations interleaved round by round:

- ``bare``: ADK alone;
- ``reader``: ADK with a plugin that reads each request and writes nothing;
- ``guard``: the lattice with the guard, nothing after it (no fingerprint);
- ``guard+reader``: the lattice with the guard, the reading plugin after it (fingerprints).

It prints the median microseconds per turn, each ratio to ``bare``, and the fingerprint's
share: ``(guard+reader - reader) - (guard - bare)`` per turn, all from one run.

Usage: ``PYTHONPATH=src .venv/bin/python benchmarks/provenance_writer.py [TURNS]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.testing import FakeModel, ScriptedResponse

CONFIGS = ("bare", "reader", "guard", "guard+reader")


class Reader(BasePlugin):
    """Reads each request (its length) and writes nothing."""

    def __init__(self) -> None:
        super().__init__(name="reader")
        self.seen = 0

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.seen += len(llm_request.contents)
        return None


def exchange_rates() -> dict[str, Any]:
    """Current EUR exchange rates."""
    return {"EUR": {"USD": 1.08, "GBP": 0.86, "CHF": 0.94}, "note": "lorem ipsum " * 20}


def send_money(recipient: str, amount: float) -> dict[str, Any]:
    """Send money to an IBAN."""
    return {"status": "sent"}


def _plugins(config: str) -> list[BasePlugin]:
    guard = ProvenanceGuard(
        {"send_money": Consequential(args={"recipient": "iban"})},
        trusted_tools={"exchange_rates": True},
    )
    lattice = [Lattice(policy=[guard])] if config.startswith("guard") else []
    return [*lattice, *([Reader()] if config.endswith("reader") else [])]


class World:
    """One runner and session of a configuration, its history grown turn by turn."""

    def __init__(self, config: str) -> None:
        script = [ScriptedResponse.call("exchange_rates"), ScriptedResponse.text("1.08")]
        model = FakeModel(script, loop=True)
        agent = LlmAgent(name="assistant", model=model, tools=[exchange_rates, send_money])
        app = App(name="bench", root_agent=agent, plugins=_plugins(config))
        self.runner = Runner(app=app, session_service=InMemorySessionService())
        self.session_id = ""
        self.times: list[float] = []

    async def start(self) -> None:
        session = await self.runner.session_service.create_session(app_name="bench", user_id="u")
        self.session_id = session.id

    async def turn(self, n: int) -> float:
        message = types.Content(role="user", parts=[types.Part(text=f"rate, please ({n})")])
        start = time.perf_counter()
        async for _ in self.runner.run_async(
            user_id="u", session_id=self.session_id, new_message=message
        ):
            pass
        return time.perf_counter() - start


async def main(turns: int) -> None:
    """Grow every configuration's history together and print the per-turn figures."""
    worlds = {c: World(c) for c in CONFIGS}
    for w in worlds.values():
        await w.start()
    samples: dict[str, list[float]] = {c: [] for c in CONFIGS}
    for n in range(turns):
        for c in CONFIGS:
            t = await worlds[c].turn(n)
            if n >= 5:  # warm-up turns are not counted
                samples[c].append(t)
    med = {c: statistics.median(v) * 1e6 for c, v in samples.items()}
    print(f"history up to {turns} turns (two model calls each), median us per turn:")
    for c in CONFIGS:
        print(f"  {c:13s} {med[c]:9.0f}  x{med[c] / med['bare']:.3f} of bare")
    share = (med["guard+reader"] - med["reader"]) - (med["guard"] - med["bare"])
    print(f"  fingerprint   {share:9.0f}  ({share / med['bare'] * 100:+.1f}% of a bare turn)")
    for w in worlds.values():
        await w.runner.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
