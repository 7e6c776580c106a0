"""A real Runner with a Lattice and FakeModel, for the cache tests."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, Outcome
from adk_lattice.stores import MemoryStore
from adk_lattice.testing import FakeModel, ScriptedResponse

_ids = itertools.count()


@dataclass
class Recorder:
    """An observer keeping every non-partial outcome."""

    name: str = "recorder"
    outcomes: list[Outcome] = field(default_factory=list)

    def observe(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def of(self, hook: str) -> list[Outcome]:
        """The outcomes of one hook, in order."""
        return [o for o in self.outcomes if o.hook == hook]


def text_of(events: Sequence[Event]) -> str:
    """The text of the last non-partial event with text."""
    for e in reversed(events):
        if not e.partial and e.content and e.content.parts:
            text = "".join(p.text or "" for p in e.content.parts)
            if text:
                return text
    return ""


class Rig:
    """One App + Runner over FakeModel with the given lattice tiers.

    Args:
        script: the model's scripted turns.
        cache, policy, handlers: the lattice tiers.
        tools: the agent's tools.
        sub_agents: the agent's sub-agents.
        app_name: the App name (part of the cache scope).
        model: a FakeModel to use instead of one made from ``script``.
        telemetry: more observers, after the rig's recorder.
    """

    def __init__(
        self,
        script: Sequence[ScriptedResponse],
        *,
        cache: Sequence[Any] = (),
        policy: Sequence[Any] = (),
        handlers: Sequence[Any] = (),
        tools: Sequence[Any] = (),
        sub_agents: Sequence[Any] = (),
        app_name: str = "billing",
        model: FakeModel | None = None,
        telemetry: Sequence[Any] = (),
    ) -> None:
        self.model = model if model is not None else FakeModel(script=script)
        self.recorder = Recorder()
        agent = LlmAgent(
            name="assistant",
            model=self.model,
            instruction="Be brief.",
            tools=tools,
            sub_agents=list(sub_agents),
        )
        self.lattice = Lattice(
            policy=policy,
            cache=cache,
            handlers=handlers,
            telemetry=[self.recorder, *telemetry],
            strict=True,
        )
        self.app_name = app_name
        app = App(name=app_name, root_agent=agent, plugins=[self.lattice])
        self.runner = Runner(app=app, session_service=InMemorySessionService())

    async def ask(
        self,
        text: str,
        *,
        user: str = "u1",
        state: dict[str, Any] | None = None,
        sse: bool = False,
    ) -> list[Event]:
        """Run one turn in a new session and return its events."""
        session = await self.runner.session_service.create_session(
            app_name=self.app_name, user_id=user, state=state or {}, session_id=f"s{next(_ids)}"
        )
        mode = StreamingMode.SSE if sse else StreamingMode.NONE
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [
            e
            async for e in self.runner.run_async(
                user_id=user,
                session_id=session.id,
                new_message=message,
                run_config=RunConfig(streaming_mode=mode),
            )
        ]

    async def close(self) -> None:
        """Close the runner (and the lattice)."""
        await self.runner.close()


class SlowModel(FakeModel):
    """FakeModel that waits ``delay`` seconds before answering (so calls overlap)."""

    delay: float = 0.2

    async def generate_content_async(  # type: ignore[override]
        self, llm_request: Any, stream: bool = False
    ) -> Any:
        await asyncio.sleep(self.delay)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


class RecordingStore(MemoryStore):
    """A MemoryStore that also keeps every value ever written to it."""

    def __init__(self) -> None:
        super().__init__(name="recording")
        self.written: list[bytes] = []

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        self.written.append(value)
        return await super()._set(key, value, ttl)
