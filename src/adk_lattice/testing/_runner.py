"""``LatticeRunner``: an App and a real Runner on in-memory services, for integration tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types

from .._plugin import Lattice
from ._confirm import confirmation_reply
from ._model import FakeModel


class LatticeRunner:
    """A real ADK ``Runner`` over an ``App`` carrying a :class:`~adk_lattice.Lattice`.

    Each user keeps one session across :meth:`run` calls (a conversation), until
    ``new_session=True`` starts another.

    Example::

        model = FakeModel([ScriptedResponse.text("Hello.")])
        runner = LatticeRunner(LlmAgent(name="greeter", model=model), lattice=Lattice())
        events = await runner.run("hi")
        assert runner.texts(events) == ["Hello."]

    Args:
        agent: the root agent (default: an ``LlmAgent`` named ``agent`` on ``model``).
        lattice: the lattice to register (default: ``Lattice()``).
        model: the model of the default agent (default: an empty ``FakeModel``).
        app_name: the App's name.
        plugins: further plugins, registered after the lattice.

    Attributes:
        app, runner, session_service, lattice, agent: the pieces, for assertions.
    """

    def __init__(
        self,
        agent: BaseAgent | None = None,
        *,
        lattice: Lattice | None = None,
        model: FakeModel | None = None,
        app_name: str = "app",
        plugins: Sequence[BasePlugin] = (),
    ) -> None:
        if agent is not None and model is not None:
            raise TypeError("pass model= only when the default agent is used, not with agent=")
        self.lattice = lattice if lattice is not None else Lattice()
        if agent is None:
            agent = LlmAgent(name="agent", model=model if model is not None else FakeModel())
        self.agent = agent
        self.app = App(name=app_name, root_agent=self.agent, plugins=[self.lattice, *plugins])
        self.session_service = InMemorySessionService()
        self.runner = Runner(app=self.app, session_service=self.session_service)
        self._sessions: dict[str, str] = {}

    async def run(
        self,
        text: str,
        *,
        user_id: str = "user",
        state: Mapping[str, Any] | None = None,
        streaming: bool = False,
        new_session: bool = False,
        run_config: RunConfig | None = None,
    ) -> list[Event]:
        """Send one user message and return every event the run yielded.

        Args:
            text: the user's message.
            user_id: whose conversation; each user has their own session.
            state: state for a new session, or a state delta applied before this turn on an
                existing one (``user:``/``app:`` keys go to their scopes).
            streaming: run with SSE streaming (partial events included in the result).
            new_session: start a fresh session for this user first.
            run_config: a full run config; ``streaming`` then must be False.

        Returns:
            The events, in order, partial ones included.

        Raises:
            TypeError: when both ``streaming`` and ``run_config`` are given.
        """
        if streaming and run_config is not None:
            raise TypeError("pass streaming=True or run_config=, not both")
        if streaming:
            # By value: ADK exports StreamingMode only implicitly from run_config.
            run_config = RunConfig.model_validate({"streaming_mode": "sse"})
        session_id = self._sessions.get(user_id)
        delta: dict[str, Any] | None = dict(state) if state else None
        if session_id is None or new_session:
            session = await self.session_service.create_session(
                app_name=self.app.name, user_id=user_id, state=delta
            )
            session_id, delta = session.id, None
            self._sessions[user_id] = session_id
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [
            event
            async for event in self.runner.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=message,
                run_config=run_config,
                state_delta=delta,
            )
        ]

    async def confirm(
        self,
        events: Sequence[Event],
        *,
        confirmed: bool = True,
        payload: Any = None,
        tool: str | None = None,
        user_id: str = "user",
    ) -> list[Event]:
        """Answer the confirmations ``events`` asked for, as a person in ``adk web`` would.

        Sends :func:`confirmation_reply` in the user's session and returns the resumed
        run's events.

        Args:
            events: the events of the run that paused.
            confirmed: the person's answer.
            payload: the data a tool asked for with its confirmation, if any.
            tool: answer only the requests for this tool's calls.
            user_id: whose session.

        Raises:
            LookupError: when the events asked for no confirmation, or the user has no
                session.
        """
        message = confirmation_reply(events, confirmed=confirmed, payload=payload, tool=tool)
        session_id = self._sessions.get(user_id)
        if session_id is None:
            raise LookupError(f"user {user_id!r} has no session yet: call run() first")
        return [
            event
            async for event in self.runner.run_async(
                user_id=user_id, session_id=session_id, new_message=message
            )
        ]

    async def session(self, user_id: str = "user") -> Session:
        """The user's current session as stored (state and persisted events).

        Raises:
            LookupError: when the user has not run yet.
        """
        session_id = self._sessions.get(user_id)
        stored = None
        if session_id is not None:
            stored = await self.session_service.get_session(
                app_name=self.app.name, user_id=user_id, session_id=session_id
            )
        if stored is None:
            raise LookupError(f"user {user_id!r} has no session yet: call run() first")
        return stored

    @staticmethod
    def texts(events: Sequence[Event], *, partial: bool = False) -> list[str]:
        """The text parts of the events (final events only unless ``partial``)."""
        return [
            part.text
            for event in events
            if event.content and (partial or not event.partial)
            for part in event.content.parts or ()
            if part.text
        ]

    async def close(self) -> None:
        """Close the runner (each plugin's ``close()`` runs)."""
        await self.runner.close()
