"""Real ADK contexts and a real Runner for policy tests."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Outcome
from adk_lattice._hooks import CONTEXT_ARG
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel

_ids = itertools.count(1)


async def make_context(
    state: dict[str, Any] | None = None,
    *,
    agent_name: str = "assistant",
    function_call_id: str | None = None,
    user_id: str = "u1",
    invocation_id: str | None = None,
    artifacts: bool = False,
) -> Context:
    """A real ADK Context (CallbackContext / ToolContext) over an in-memory session."""
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id=user_id, state=state or {})
    agent = LlmAgent(name=agent_name, model=FakeModel())
    inv = InvocationContext(
        session_service=service,
        artifact_service=InMemoryArtifactService() if artifacts else None,
        invocation_id=invocation_id or f"inv-{next(_ids)}",
        agent=agent,
        session=session,
    )
    return Context(inv, function_call_id=function_call_id)


def noted(ctx: Any, hook: str) -> list[tuple[str, str | None]]:
    """What policies noted against ``ctx`` on ``hook`` for telemetry: (decision, reason)."""
    outcome = Outcome(hook=hook, args={CONTEXT_ARG[hook]: ctx})  # type: ignore[arg-type, index]
    return [(n.decision, n.reason) for n in notes_of(outcome)]


@pytest.fixture
def ctx() -> Callable[..., Awaitable[Context]]:
    """Factory for real ADK contexts: ``await ctx(state, function_call_id=...)``."""
    return make_context


@dataclass
class Run:
    """What one Runner turn produced."""

    events: list[Event]
    runner: Runner
    session_id: str
    user_id: str
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def texts(self) -> list[str]:
        """Text of every non-partial event with text, in order."""
        out = []
        for e in self.events:
            if e.partial or e.content is None or not e.content.parts:
                continue
            text = "".join(p.text for p in e.content.parts if p.text)
            if text:
                out.append(text)
        return out

    @property
    def partial_texts(self) -> list[str]:
        """Text of every partial event, in order."""
        return [
            "".join(p.text for p in e.content.parts if p.text)
            for e in self.events
            if e.partial and e.content and e.content.parts
        ]

    def responses(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every function response (optionally for one tool), in order."""
        out = []
        for e in self.events:
            for fr in e.get_function_responses():
                if name is None or fr.name == name:
                    out.append(dict(fr.response or {}))
        return out

    def confirmation(self, confirmed: bool) -> types.Content:
        """The user's answer to the confirmation this turn asked for."""
        for e in self.events:
            for fc in e.get_function_calls():
                if fc.name == "adk_request_confirmation":
                    reply = types.FunctionResponse(
                        name="adk_request_confirmation", id=fc.id, response={"confirmed": confirmed}
                    )
                    return types.Content(role="user", parts=[types.Part(function_response=reply)])
        raise AssertionError("no confirmation was requested")

    async def send(self, message: types.Content, run_config: RunConfig | None = None) -> Run:
        """Send another message in the same session."""
        events = [
            e
            async for e in self.runner.run_async(
                user_id=self.user_id,
                session_id=self.session_id,
                new_message=message,
                run_config=run_config,
            )
        ]
        session = await self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=self.user_id, session_id=self.session_id
        )
        state = dict(session.state) if session else {}
        return Run(events, self.runner, self.session_id, self.user_id, state)


def user(text: str) -> types.Content:
    """A user message."""
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_app(
    agent: LlmAgent,
    plugins: Sequence[Any],
    message: str,
    *,
    state: dict[str, Any] | None = None,
    run_config: RunConfig | None = None,
    user_id: str = "u1",
) -> Run:
    """One turn through a real Runner on an App with the given plugins."""
    app = App(name="app", root_agent=agent, plugins=list(plugins))
    runner = Runner(
        app=app,
        session_service=InMemorySessionService(),
        artifact_service=InMemoryArtifactService(),
    )
    session = await runner.session_service.create_session(
        app_name="app", user_id=user_id, state=state or {}
    )
    first = Run([], runner, session.id, user_id)
    return await first.send(user(message), run_config)
