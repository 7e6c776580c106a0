"""ProtectState through a Runner: its counters, notes, undo events and what a run looks at."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice, on
from adk_lattice.policy import ProtectState
from adk_lattice.state import StateKey, StateKeys
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder

from .conftest import Run, user

PLAN = "user:plan"


async def _session(lattice: Lattice, turns: int = 1) -> Run:
    """A fresh session on a Runner with ``lattice``, its agent answering ``turns`` times."""
    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")] * turns))
    runner = Runner(
        app=App(name="app", root_agent=agent, plugins=[lattice]),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(
        app_name="app", user_id="u1", state={PLAN: "basic"}
    )
    return Run([], runner, session.id, "u1")


async def _send(run: Run, delta: dict[str, Any] | None = None) -> Run:
    """One turn in ``run``'s session, the client sending ``delta`` with its message."""
    events = [
        e
        async for e in run.runner.run_async(
            user_id="u1", session_id=run.session_id, new_message=user("go"), state_delta=delta
        )
    ]
    session = await run.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=run.session_id
    )
    assert session is not None
    return Run(events, run.runner, run.session_id, "u1", dict(session.state))


async def test_a_single_key_name_is_protected() -> None:
    """ProtectState("user:plan") protects that one key, as a list of one would."""
    run = await _send(await _session(Lattice(policy=[ProtectState(PLAN)])), {PLAN: "gold"})
    assert run.state[PLAN] == "basic"


async def test_a_refused_client_write_is_counted_per_key() -> None:
    """Each protected key a client's delta wrote counts once as refused:client."""
    guard = ProtectState([PLAN, "user:tenant"])
    await _send(await _session(Lattice(policy=[guard])), {PLAN: "gold", "user:tenant": "t2"})
    assert guard.counts == {"refused:client": 2}


async def test_a_refused_client_write_is_noted_as_a_block() -> None:
    """Telemetry sees the undone client write as block/protected_state from the guard."""
    recorder = Recorder()
    lattice = Lattice(policy=[ProtectState(PLAN, name="guard")], telemetry=[recorder])
    await _send(await _session(lattice), {PLAN: "gold"})
    notes = [(n.decision, n.handler, n.reason) for o in recorder.outcomes for n in notes_of(o)]
    assert notes == [("block", "guard", "protected_state")]


async def test_the_undo_event_belongs_to_the_run_that_undid_the_write() -> None:
    """The event restoring the key carries the invocation id of the run whose delta it undid."""
    run = await _send(await _session(Lattice(policy=[ProtectState(PLAN)])), {PLAN: "gold"})
    session = await run.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=run.session_id
    )
    assert session is not None
    [written] = [e for e in session.events if e.author == "user"]
    [undo] = [e for e in session.events if e.author == "ProtectState"]
    assert undo.invocation_id == written.invocation_id != ""


async def test_protecting_a_key_later_undoes_a_clients_earlier_write() -> None:
    """A key protected from now on is checked against its whole history: a client's write to
    it in an earlier run is undone at the next run."""
    registry = StateKeys()
    run = await _session(Lattice(policy=[ProtectState(registry=registry)]), turns=2)
    await _send(run, {PLAN: "gold"})
    StateKey(PLAN, str, "", "The user's plan.", protected=True, registry=registry)
    assert (await _send(run)).state.get(PLAN) is None


@pytest.mark.parametrize("fail", [False, True])
async def test_a_declared_writers_write_is_allowed_whether_it_fails_or_not(fail: bool) -> None:
    """A tool named in writers keeps its write to the key even when it then fails."""

    def upgrade(tool_context: ToolContext) -> dict[str, Any]:
        """Move this user to the gold plan."""
        tool_context.state[PLAN] = "gold"
        if fail:
            raise RuntimeError("billing unavailable")
        return {"status": "done"}

    @on("on_tool_error")
    def recover(*, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> dict[str, Any]:
        return {"status": "failed"}

    guard = ProtectState(PLAN, writers={"upgrade": [PLAN]})
    model = FakeModel([ScriptedResponse.call("upgrade"), ScriptedResponse.text("ok")])
    agent = LlmAgent(name="assistant", model=model, tools=[upgrade])
    runner = Runner(
        app=App(
            name="app", root_agent=agent, plugins=[Lattice(policy=[guard], handlers=[recover])]
        ),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(
        app_name="app", user_id="u1", state={PLAN: "basic"}
    )
    run = await _send(Run([], runner, session.id, "u1"))
    assert run.state[PLAN] == "gold"
    assert guard.counts == {"allowed:tool": 1}
