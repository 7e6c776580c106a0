"""Shared test support: run a real ADK Runner with a Lattice and record every Outcome."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, Outcome


@dataclass
class Recorder:
    """An observer that keeps every outcome it is given, partial chunks included."""

    name: str = "recorder"
    partial: bool = True
    outcomes: list[Outcome] = field(default_factory=list)

    def observe(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def hooks(self, *, synthesized: bool | None = None) -> list[str]:
        """The hook names seen, optionally only the (non-)synthesized ones."""
        return [
            o.hook for o in self.outcomes if synthesized is None or o.synthesized is synthesized
        ]

    def of(self, hook: str) -> list[Outcome]:
        """The outcomes of one hook, in order."""
        return [o for o in self.outcomes if o.hook == hook]


@dataclass
class Turn:
    """What one run produced."""

    events: list[Event]
    session_id: str
    runner: Runner

    @property
    def texts(self) -> list[str]:
        """The text of every non-partial event, in order."""
        return [
            "".join(p.text or "" for p in (e.content.parts or []))
            for e in self.events
            if e.content and e.content.parts and not e.partial
        ]

    @property
    def tool_responses(self) -> list[dict[str, Any]]:
        """The response of every function response part, in order."""
        return [
            p.function_response.response or {}
            for e in self.events
            if e.content
            for p in e.content.parts or []
            if p.function_response
        ]


RunFn = Callable[..., Awaitable[Turn]]


async def run_app(
    agent: BaseAgent,
    lattice: Lattice,
    text: str = "hello",
    *,
    user_id: str = "u1",
    state: dict[str, Any] | None = None,
    streaming: bool = False,
    runner: Runner | None = None,
    session_id: str | None = None,
) -> Turn:
    """Run one user turn through a real Runner with ``lattice`` registered on the App."""
    if runner is None:
        app = App(name="app", root_agent=agent, plugins=[lattice])
        runner = Runner(app=app, session_service=InMemorySessionService())
    if session_id is None:
        session = await runner.session_service.create_session(
            app_name="app", user_id=user_id, state=state or {}
        )
        session_id = session.id
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events = [
        e
        async for e in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message, run_config=config
        )
    ]
    return Turn(events, session_id, runner)


def assert_balanced(outcomes: list[Outcome]) -> None:
    """Every before_* outcome has exactly one after_* outcome, and each run ended once."""
    runs: dict[str, int] = {}
    agents: dict[tuple[str, str], int] = {}
    models: dict[tuple[str, str], int] = {}
    tools: dict[tuple[str, str | None], int] = {}
    for o in outcomes:
        iid = o.invocation_id or ""
        if o.hook == "after_run":
            runs[iid] = runs.get(iid, 0) + 1
        elif o.hook == "before_agent":
            agents[(iid, o.agent or "")] = agents.get((iid, o.agent or ""), 0) + 1
        elif o.hook == "after_agent":
            agents[(iid, o.agent or "")] = agents.get((iid, o.agent or ""), 0) - 1
        elif o.hook == "before_model":
            models[(iid, o.agent or "")] = models.get((iid, o.agent or ""), 0) + 1
        elif o.hook == "after_model" and not o.partial:
            models[(iid, o.agent or "")] = models.get((iid, o.agent or ""), 0) - 1
        elif o.hook == "before_tool":
            tools[(iid, o.function_call_id)] = tools.get((iid, o.function_call_id), 0) + 1
        elif o.hook == "after_tool":
            tools[(iid, o.function_call_id)] = tools.get((iid, o.function_call_id), 0) - 1
    assert runs and all(n == 1 for n in runs.values()), f"after_run per invocation: {runs}"
    assert all(n == 0 for n in agents.values()), f"agents left open: {agents}"
    assert all(n == 0 for n in models.values()), f"model calls left open: {models}"
    assert all(n == 0 for n in tools.values()), f"tool calls left open: {tools}"


async def patch_session(
    service: BaseSessionService, user_id: str, session_id: str, delta: dict[str, Any]
) -> None:
    """What ``adk api_server``'s session PATCH does: a user-authored state event."""
    session = await service.get_session(app_name="app", user_id=user_id, session_id=session_id)
    assert session is not None
    event = Event(invocation_id="p-1", author="user", actions=EventActions(state_delta=delta))
    await service.append_event(session=session, event=event)
