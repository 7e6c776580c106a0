"""ProtectState when the store of its records fails, through a real Runner and real Redis."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice
from adk_lattice.policy import ProtectState
from adk_lattice.stores import RedisStore
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests._redis import RedisServer, redis_factory
from tests.support import patch_session

from .conftest import user

__all__ = ["redis_factory"]

S = ScriptedResponse
FROZEN = "app:refunds_frozen"
DENIAL = "This request cannot run right now: protected settings cannot be checked."
pytestmark = pytest.mark.redis


class Desk:
    """An operator's ``freeze`` tool (which may make Redis refuse writes) and ``look``."""

    def __init__(self, server: RedisServer, *, refuse_writes: bool = False) -> None:
        self.server = server
        self.seen: list[Any] = []
        self.store = RedisStore(server.url, namespace="protect", retry_after=0, socket_timeout=0.3)
        self.guard = ProtectState([FROZEN], writers={"freeze": [FROZEN]}, store=self.store)

        def look(tool_context: ToolContext) -> dict[str, Any]:
            """Read the freeze."""
            self.seen.append(tool_context.state.get(FROZEN))
            return {"status": "ok"}

        def freeze(tool_context: ToolContext) -> dict[str, Any]:
            """Freeze refunds for everyone."""
            if refuse_writes:  # Redis refuses every write (out of memory) until reset
                redis.Redis(port=server.port).config_set("maxmemory", 1)
            tool_context.state[FROZEN] = True
            return {"status": "frozen"}

        first = [S.call("freeze"), S.text("ok")]
        model = FakeModel([*first, *[S.call("look"), S.text("ok")] * 5])
        agent = LlmAgent(name="desk", model=model, tools=[look, freeze])
        app = App(name="app", root_agent=agent, plugins=[Lattice(policy=[self.guard])])
        self.service = InMemorySessionService()
        self.runner = Runner(app=app, session_service=self.service)

    async def session(self, user_id: str) -> str:
        """A new session of ``user_id``."""
        created = await self.service.create_session(app_name="app", user_id=user_id)
        return created.id

    async def patch(self, user_id: str, session_id: str, delta: dict[str, Any]) -> None:
        """What adk api_server's PATCH of a session does: a user-authored state event."""
        await patch_session(self.service, user_id, session_id, delta)

    async def turn(self, user_id: str, session_id: str) -> list[str]:
        """One turn; the texts the agent answered."""
        texts = []
        async for event in self.runner.run_async(
            user_id=user_id, session_id=session_id, new_message=user("go")
        ):
            for part in (event.content.parts if event.content else None) or []:
                if part.text:
                    texts.append(part.text)
        return texts


async def test_an_unreadable_record_refuses_the_run(redis_factory: Any) -> None:
    """With Redis down, a client's PATCH lifting an app-wide freeze is refused, not adopted."""
    desk = Desk(redis_factory())
    await desk.turn("ops", await desk.session("ops"))
    await desk.patch("u2", await desk.session("u2"), {FROZEN: False})
    desk.server.stop()
    texts = await desk.turn("u3", await desk.session("u3"))
    assert (texts, desk.seen) == ([DENIAL], [])
    assert desk.guard.counts["unavailable"] == 1
    await desk.store.close()


async def test_a_record_the_store_failed_to_keep_is_written_later(redis_factory: Any) -> None:
    """An operator's freeze whose record write failed still undoes a client's PATCH later."""
    desk = Desk(redis_factory(), refuse_writes=True)
    await desk.turn("ops", await desk.session("ops"))
    redis.Redis(port=desk.server.port).config_set("maxmemory", 0)
    assert desk.store.stats["errors"] >= 1
    await desk.patch("u2", await desk.session("u2"), {FROZEN: False})
    await desk.turn("u3", await desk.session("u3"))
    assert desk.seen == [True]
    await desk.store.close()
