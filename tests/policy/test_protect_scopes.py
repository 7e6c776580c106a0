"""ProtectState on temp: and app: keys, through a real Runner."""

from __future__ import annotations

from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice, configure
from adk_lattice.policy import ProtectState, RequireState
from adk_lattice.state import StateKey, StateKeys
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import patch_session

from .conftest import user

MFA = "temp:mfa_ok"
FROZEN = "app:refunds_frozen"


class Desk:
    """One Runner whose agent reads ``key`` in a tool (and may freeze refunds), many sessions."""

    def __init__(
        self,
        guard: ProtectState,
        key: str,
        *,
        policy: tuple[Any, ...] = (),
        first: tuple[ScriptedResponse, ...] = (),
    ) -> None:
        self.seen: list[Any] = []

        def look(tool_context: ToolContext) -> dict[str, Any]:
            """Read the key."""
            self.seen.append(tool_context.state.get(key))
            return {"status": "ok"}

        def freeze(tool_context: ToolContext) -> dict[str, Any]:
            """Freeze refunds for everyone."""
            tool_context.state[FROZEN] = True
            return {"status": "frozen"}

        turn = [ScriptedResponse.call("look"), ScriptedResponse.text("ok")]
        self.model = FakeModel([*first, *turn * 10])
        agent = LlmAgent(name="desk", model=self.model, tools=[look, freeze])
        app = App(name="app", root_agent=agent, plugins=[Lattice(policy=[guard, *policy])])
        self.service = InMemorySessionService()
        self.runner = Runner(app=app, session_service=self.service)

    async def session(self, user_id: str, state: dict[str, Any] | None = None) -> str:
        """A new session of ``user_id``."""
        created = await self.service.create_session(
            app_name="app", user_id=user_id, state=state or {}
        )
        return created.id

    async def patch(self, user_id: str, session_id: str, delta: dict[str, Any]) -> None:
        """What adk api_server's PATCH of a session does: a user-authored state event."""
        await patch_session(self.service, user_id, session_id, delta)

    async def turn(
        self, user_id: str, session_id: str, delta: dict[str, Any] | None = None
    ) -> list[str]:
        """One turn; the texts the agent answered."""
        texts = []
        async for event in self.runner.run_async(
            user_id=user_id, session_id=session_id, new_message=user("go"), state_delta=delta
        ):
            for part in (event.content.parts if event.content else None) or []:
                if part.text:
                    texts.append(part.text)
        return texts

    async def state(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The session's stored state."""
        session = await self.service.get_session(
            app_name="app", user_id=user_id, session_id=session_id
        )
        assert session is not None
        return dict(session.state)


async def test_a_clients_temp_write_to_an_unprotected_key_reaches_tools() -> None:
    """Control: a client's temp: delta is live for the run's tools when the key is not
    protected."""
    desk = Desk(ProtectState(["temp:other"]), MFA)
    await desk.turn("u1", await desk.session("u1"), {MFA: True})
    assert desk.seen == [True]


async def test_a_clients_temp_write_to_a_protected_key_is_undone() -> None:
    """A client's state_delta for a protected temp: key never reaches the run's tools."""
    guard = ProtectState([MFA])
    desk = Desk(guard, MFA)
    await desk.turn("u1", await desk.session("u1"), {MFA: True})
    assert desk.seen == [None]
    assert guard.counts == {"refused:client": 1}


async def test_require_state_blocks_a_clients_protected_temp_key() -> None:
    """RequireState on a protected temp: key blocks a run whose client sent it."""
    key = StateKey(MFA, bool, False, "Verified this run.", registry=StateKeys())
    desk = Desk(ProtectState([MFA]), MFA, policy=(RequireState(key, message="verify first"),))
    texts = await desk.turn("u1", await desk.session("u1"), {MFA: True})
    assert texts == ["verify first"]
    assert desk.model.requests == []


async def _frozen_by_an_operator() -> tuple[Desk, str]:
    """A desk whose operator froze refunds through a writer tool; an attacker's session."""
    guard = ProtectState([FROZEN], writers={"freeze": [FROZEN]})
    first = (ScriptedResponse.call("freeze"), ScriptedResponse.text("ok"))
    desk = Desk(guard, FROZEN, first=first)
    await desk.turn("ops", await desk.session("ops"))
    attacker = await desk.session("u2")
    await desk.patch("u2", attacker, {FROZEN: False})
    return desk, attacker


async def test_a_patched_app_key_lands_in_app_state() -> None:
    """Control: a client's PATCH of an app: key reaches the app-wide state before a run."""
    desk, attacker = await _frozen_by_an_operator()
    assert (await desk.state("u2", attacker))[FROZEN] is False


async def test_a_patched_app_key_is_restored_from_the_apps_record() -> None:
    """A client's PATCH lifting an app-wide freeze is undone to the operator's value."""
    desk, attacker = await _frozen_by_an_operator()
    await desk.turn("u2", attacker)
    assert desk.seen == [True]
    assert (await desk.state("u2", attacker))[FROZEN] is True
    assert (await desk.state("u3", await desk.session("u3")))[FROZEN] is True


async def test_an_app_key_with_no_record_is_refused_not_unset() -> None:
    """Without the application's record, a client-written app: key refuses the run and
    every later run, instead of being reset to unset for every user."""
    guard = ProtectState([FROZEN])
    desk = Desk(guard, FROZEN)
    attacker = await desk.session("u2", {FROZEN: True})  # set outside any run
    await desk.patch("u2", attacker, {FROZEN: False})
    refused = await desk.turn("u2", attacker)
    other = await desk.turn("u3", await desk.session("u3"))
    denial = "This request cannot run: a protected setting could not be verified."
    assert refused == other == [denial]
    assert desk.seen == []
    assert guard.counts == {"unverified": 2}


async def test_adopting_an_app_key_ends_the_refusal() -> None:
    """After the application adopts a session's values, runs go ahead with them."""
    guard = ProtectState([FROZEN])
    desk = Desk(guard, FROZEN)
    attacker = await desk.session("u2", {FROZEN: True})
    await desk.patch("u2", attacker, {FROZEN: False})
    await desk.turn("u2", attacker)
    ops = await desk.service.create_session(app_name="app", user_id="ops", state={FROZEN: True})
    await guard.adopt(ops)
    await desk.turn("u3", await desk.session("u3"))
    assert desk.seen == [True]


async def test_a_shadow_protect_state_writes_nothing_to_storage() -> None:
    """A shadow-mode ProtectState appends no event: the stored session keeps the client's
    write, as it would with no guard."""
    desk = Desk(configure(ProtectState(["user:role"]), mode="shadow"), "user:role")
    session = await desk.session("u1", {"user:role": "clerk"})
    await desk.turn("u1", session, {"user:role": "admin"})
    stored = await desk.service.get_session(app_name="app", user_id="u1", session_id=session)
    assert stored is not None
    assert "ProtectState" not in [e.author for e in stored.events]
    assert stored.state["user:role"] == "admin"
    assert desk.seen == ["admin"]


async def test_an_enforcing_protect_state_undoes_the_same_write() -> None:
    """Control: the same set-up with an enforcing ProtectState restores the app's value."""
    desk = Desk(ProtectState(["user:role"]), "user:role")
    session = await desk.session("u1", {"user:role": "clerk"})
    await desk.turn("u1", session, {"user:role": "admin"})
    assert (await desk.state("u1", session))["user:role"] == "clerk"
