"""ProtectState: a client's state delta or an unauthorised tool cannot write identity."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, DatabaseSessionService, InMemorySessionService
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice, on
from adk_lattice.policy import (
    Approval,
    InjectState,
    ProtectState,
    RequireState,
    ToolGuard,
    ToolRule,
)
from adk_lattice.state import StateKey
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder

from .conftest import Run, user

IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")
ACTIVE = StateKey("user:account_active", bool, False, "The account may use the agent.")
TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")
ROLE = StateKey("user:role", str, "", "The user's role.", protected=True)


async def _run(
    agent: LlmAgent,
    lattice: Lattice,
    *,
    state: dict[str, Any] | None = None,
    delta: dict[str, Any] | None = None,
    service: BaseSessionService | None = None,
) -> Run:
    """One turn through a real Runner, the client sending ``delta`` with its message."""
    app = App(name="app", root_agent=agent, plugins=[lattice])
    runner = Runner(app=app, session_service=service or InMemorySessionService())
    session = await runner.session_service.create_session(
        app_name="app", user_id="u1", state=state or {}
    )
    events = [
        e
        async for e in runner.run_async(
            user_id="u1", session_id=session.id, new_message=user("go"), state_delta=delta
        )
    ]
    return Run(events, runner, session.id, "u1")


async def _stored(run: Run) -> dict[str, Any]:
    session = await run.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=run.session_id
    )
    assert session is not None
    return dict(session.state)


def _refund_agent(done: list[float]) -> LlmAgent:
    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=500.0),
            ScriptedResponse.text("ok"),
        ]
    )
    return LlmAgent(name="billing", model=model, tools=[issue_refund])


def _manager_guard(**approval: Any) -> ToolGuard:
    rule = ToolRule(approval=Approval(("amount", 100), role=IS_MANAGER, **approval))
    return ToolGuard({"issue_refund": rule})


async def test_a_client_delta_does_not_grant_approval() -> None:
    """A client sending state_delta user:is_manager=True is still not a manager."""
    done: list[float] = []
    run = await _run(
        _refund_agent(done),
        Lattice(policy=[_manager_guard()]),
        delta={"user:is_manager": True},
    )
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "approval_required"
    assert (await _stored(run)).get("user:is_manager") is None


async def test_an_app_set_manager_still_approves() -> None:
    """A manager set by the application when creating the session goes ahead."""
    done: list[float] = []
    await _run(
        _refund_agent(done), Lattice(policy=[_manager_guard()]), state={"user:is_manager": True}
    )
    assert done == [500.0]


async def test_the_app_value_is_restored_not_erased() -> None:
    """A client delta flipping an app-set flag leaves the application's value in the session."""
    done: list[float] = []
    run = await _run(
        _refund_agent(done),
        Lattice(policy=[_manager_guard()]),
        state={"user:is_manager": False},
        delta={"user:is_manager": True},
    )
    assert (await _stored(run))["user:is_manager"] is False


async def test_require_state_still_blocks_an_inactive_account() -> None:
    """A client delta user:account_active=True does not unlock an inactive account."""
    model = FakeModel([ScriptedResponse.text("should not run")])
    agent = LlmAgent(name="assistant", model=model)
    lattice = Lattice(policy=[RequireState(ACTIVE, message="Your account is inactive.")])
    run = await _run(agent, lattice, delta={"user:account_active": True})
    assert run.texts == ["Your account is inactive."]
    assert model.requests == []


@pytest.mark.parametrize("kind", ["memory", "database"])
async def test_the_undo_is_persisted_by_the_session_service(kind: str, tmp_path: Path) -> None:
    """The next run, without any delta, still reads the application's value from storage."""
    service: BaseSessionService
    if kind == "memory":
        service = InMemorySessionService()
    else:
        service = DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}")
    model = FakeModel([ScriptedResponse.text("should not run")])
    agent = LlmAgent(name="assistant", model=model)
    lattice = Lattice(policy=[RequireState(ACTIVE, message="inactive")])
    run = await _run(agent, lattice, delta={"user:account_active": True}, service=service)
    again = await run.send(user("again"))
    assert again.texts == ["inactive"]
    assert again.state.get("user:account_active") is None
    assert model.requests == []
    if isinstance(service, DatabaseSessionService):
        await service.close()


async def test_inject_state_uses_the_apps_tenant() -> None:
    """InjectState's tenant is the one the app set, not the one the client sent."""
    seen: list[str] = []

    def query_rows(tenant_id: str) -> dict[str, Any]:
        """Rows of a tenant."""
        seen.append(tenant_id)
        return {"rows": []}

    model = FakeModel(
        [ScriptedResponse.call("query_rows", tenant_id="t2"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="data", model=model, tools=[query_rows])
    guard = ToolGuard({"query_rows": ToolRule(rewrites=[InjectState("tenant_id", TENANT)])})
    await _run(
        agent,
        Lattice(policy=[guard]),
        state={"user:tenant_id": "t1"},
        delta={"user:tenant_id": "t2"},
    )
    assert seen == ["t1"]


async def test_the_refusal_is_reported_and_readable(caplog: pytest.LogCaptureFixture) -> None:
    """The run logs the refused key by name with the code, and a later policy can tell."""
    told: list[bool] = []

    @on("before_agent")
    def look(*, agent: Any, callback_context: Any) -> None:
        told.append(ACTIVE.refused(callback_context.state))

    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")]))
    guard = RequireState(ACTIVE, message="inactive")
    lattice = Lattice(policy=[guard], handlers=[look])
    with caplog.at_level(logging.WARNING, logger="adk_lattice.policy"):
        await _run(
            agent,
            lattice,
            state={"user:account_active": True},
            delta=dict.fromkeys(["user:account_active"], True),
        )
    assert told == [True]
    assert any(
        "user:account_active" in r.getMessage() and "protected_state" in r.getMessage()
        for r in caplog.records
    )


async def test_a_declared_protected_key_is_guarded_without_a_policy_reading_it() -> None:
    """ProtectState() undoes client writes to any key declared protected=True."""
    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")]))
    run = await _run(
        agent,
        Lattice(policy=[ProtectState()]),
        state={"user:role": "clerk"},
        delta={"user:role": "admin", "user:theme": "dark"},
    )
    stored = await _stored(run)
    assert stored["user:role"] == "clerk"
    assert stored["user:theme"] == "dark"


def _writer_agent() -> LlmAgent:
    def promote(tool_context: ToolContext) -> dict[str, Any]:
        """Make this user an admin."""
        tool_context.state["user:role"] = "admin"
        return {"status": "done"}

    model = FakeModel([ScriptedResponse.call("promote"), ScriptedResponse.text("ok")])
    return LlmAgent(name="assistant", model=model, tools=[promote])


async def test_a_tool_not_named_as_writer_cannot_write_a_protected_key() -> None:
    """A tool's write to a protected key is taken back unless the app named it a writer."""
    guard = ProtectState()
    run = await _run(_writer_agent(), Lattice(policy=[guard]), state={"user:role": "clerk"})
    assert (await _stored(run))["user:role"] == "clerk"
    assert guard.counts == {"refused:tool": 1}


async def test_a_declared_writer_tool_may_write_it() -> None:
    """writers={"promote": [ROLE]} lets that tool set the key."""
    guard = ProtectState(writers={"promote": [ROLE]})
    run = await _run(_writer_agent(), Lattice(policy=[guard]), state={"user:role": "clerk"})
    assert (await _stored(run))["user:role"] == "admin"


def test_lattice_adds_protection_for_keys_its_policies_trust() -> None:
    """A Lattice whose policy reads a state key puts a ProtectState first."""
    lattice = Lattice(policy=[RequireState(ACTIVE, message="inactive")], telemetry=())
    assert lattice.chain("before_run") == ("ProtectState",)
    plain = Lattice(policy=[ToolGuard({})], telemetry=())
    assert plain.chain("before_run") == ()


async def test_a_non_manager_cannot_approve_their_own_call() -> None:
    """With role= and confirm=True, the requester's own "yes" does not run the call."""
    done: list[float] = []
    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=500.0),
            ScriptedResponse.text("wait"),
            ScriptedResponse.text("no"),
        ]
    )
    agent = _refund_agent(done)
    agent.model = model
    run = await _run(agent, Lattice(policy=[_manager_guard(confirm=True)]))
    resumed = await run.send(run.confirmation(True))
    assert done == []
    assert resumed.responses("issue_refund")[-1]["code"] == "approver_not_authorised"


async def test_an_approver_check_decides_whose_yes_counts() -> None:
    """approver=callable(ctx, confirmation) -> True lets a confirmed call run."""
    done: list[float] = []
    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=500.0),
            ScriptedResponse.text("wait"),
            ScriptedResponse.text("done"),
        ]
    )
    agent = _refund_agent(done)
    agent.model = model
    guard = _manager_guard(confirm=True, approver=lambda ctx, c: c.confirmed is True)
    run = await _run(agent, Lattice(policy=[guard]))
    await run.send(run.confirmation(True))
    assert done == [500.0]


def test_an_approver_needs_confirm() -> None:
    """approver= without confirm=True is a construction error with the fix."""
    with pytest.raises(ValueError, match="confirm=True"):
        Approval(("amount", 100), approver=lambda ctx, c: True)


async def test_a_session_patch_between_runs_is_undone_at_the_next_run() -> None:
    """A user-authored state event appended outside a run (api_server's PATCH) is undone."""
    model = FakeModel([ScriptedResponse.text("should not run")])
    agent = LlmAgent(name="assistant", model=model)
    lattice = Lattice(policy=[RequireState(ACTIVE, message="inactive")])
    app = App(name="app", root_agent=agent, plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u1")
    patch = Event(
        invocation_id="p-1",
        author="user",
        actions=EventActions(state_delta={"user:account_active": True}),
    )
    await runner.session_service.append_event(session=session, event=patch)
    run = Run([], runner, session.id, "u1")
    blocked = await run.send(user("hi"))
    assert blocked.texts == ["inactive"]
    assert blocked.state.get("user:account_active") is None
    assert model.requests == []


async def test_an_undone_write_is_undone_once() -> None:
    """Later runs do not append another correction for a write already undone."""
    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")]))
    lattice = Lattice(policy=[RequireState(ACTIVE, message="inactive")])
    run = await _run(agent, lattice, delta={"user:account_active": True})
    await run.send(user("again"))
    session = await run.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=run.session_id
    )
    assert session is not None
    assert [e.author for e in session.events].count("ProtectState") == 1


def _reading_agent(seen: list[Any], *, fail: bool = False) -> LlmAgent:
    """promote writes user:role (and raises with ``fail``); whoami reads it back in the run."""

    def promote(tool_context: ToolContext) -> dict[str, Any]:
        """Make this user an admin."""
        tool_context.state["user:role"] = "admin"
        if fail:
            raise RuntimeError("directory unavailable")
        return {"status": "done"}

    def whoami(tool_context: ToolContext) -> dict[str, Any]:
        """The signed-in user's role."""
        seen.append(tool_context.state.get("user:role", "guest"))
        return {"status": "ok"}

    script = [ScriptedResponse.call("promote"), ScriptedResponse.call("whoami")]
    model = FakeModel([*script, ScriptedResponse.text("ok")])
    return LlmAgent(name="assistant", model=model, tools=[promote, whoami])


async def test_a_refused_tool_write_is_not_read_later_in_the_run() -> None:
    """After a refused tool write, a later tool in the same run reads the app's value."""
    seen: list[Any] = []
    await _run(_reading_agent(seen), Lattice(policy=[ProtectState()]), state={"user:role": "clerk"})
    assert seen == ["clerk"]


async def test_a_refused_tool_write_to_an_unset_key_leaves_it_unset() -> None:
    """A refused write to a key the app never set leaves it unset for the rest of the run."""
    seen: list[Any] = []
    run = await _run(_reading_agent(seen), Lattice(policy=[ProtectState()]))
    assert seen == ["guest"]
    assert "user:role" not in await _stored(run)


async def test_a_failed_tools_write_is_taken_back() -> None:
    """A tool that wrote a protected key and then failed leaves no trace of the write."""
    seen: list[Any] = []
    guard = ProtectState()

    @on("on_tool_error")
    def recover(*, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> dict[str, Any]:
        return {"status": "failed"}

    lattice = Lattice(policy=[guard], handlers=[recover])
    run = await _run(_reading_agent(seen, fail=True), lattice, state={"user:role": "clerk"})
    assert run.responses("promote") == [{"status": "failed"}]
    assert seen == ["clerk"]
    assert (await _stored(run))["user:role"] == "clerk"
    assert guard.counts["refused:tool"] == 1


async def test_an_allowed_tool_write_is_counted() -> None:
    """A write by a declared writer is counted as allowed:tool, not as refused."""
    guard = ProtectState(writers={"promote": [ROLE]})
    await _run(_writer_agent(), Lattice(policy=[guard]), state={"user:role": "clerk"})
    assert guard.counts == {"allowed:tool": 1}


async def test_a_refused_write_is_noted_under_the_guards_name() -> None:
    """Telemetry sees the refusal as block/protected_state from ProtectState."""
    recorder = Recorder()
    lattice = Lattice(policy=[ProtectState()], telemetry=[recorder])
    await _run(_writer_agent(), lattice, state={"user:role": "clerk"})
    notes = [n for o in recorder.outcomes for n in notes_of(o)]
    assert [(n.decision, n.handler, n.reason) for n in notes] == [
        ("block", "ProtectState", "protected_state")
    ]


async def test_a_later_turns_delta_is_undone_to_the_value_set_at_creation() -> None:
    """A second turn's client delta is undone to the value the app set creating the session."""
    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")] * 2))
    run = await _run(agent, Lattice(policy=[ProtectState()]), state={"user:role": "clerk"})
    async for _ in run.runner.run_async(
        user_id="u1",
        session_id=run.session_id,
        new_message=user("again"),
        state_delta={"user:role": "admin"},
    ):
        pass
    assert (await _stored(run))["user:role"] == "clerk"


async def _patched_session(service: InMemorySessionService, *deltas: dict[str, Any]) -> str:
    """A session whose history holds each delta as an event; ``{}`` is a plain app event."""
    session = await service.create_session(app_name="app", user_id="u1")
    for n, delta in enumerate(deltas):
        author = "user" if delta.get("by") == "client" else "assistant"
        state = {k: v for k, v in delta.items() if k != "by"}
        event = Event(invocation_id=f"old-{n}", author=author)
        event.actions = EventActions(state_delta=state)
        await service.append_event(session=session, event=event)
    return session.id


async def _turn_on(service: InMemorySessionService, session_id: str) -> dict[str, Any]:
    agent = LlmAgent(name="assistant", model=FakeModel([ScriptedResponse.text("hi")]))
    app = App(name="app", root_agent=agent, plugins=[Lattice(policy=[ProtectState()])])
    run = await Run([], Runner(app=app, session_service=service), session_id, "u1").send(user("hi"))
    return run.state


async def test_a_client_write_behind_a_long_history_is_undone() -> None:
    """A client write 2,000 events back is still undone: the check has no window."""
    service = InMemorySessionService()
    filler = [{}] * 2000
    session_id = await _patched_session(service, {"by": "client", "user:role": "admin"}, *filler)
    assert (await _turn_on(service, session_id)).get("user:role") is None


async def test_a_key_is_never_restored_to_a_clients_value() -> None:
    """Restoring from history skips client events, even one behind a long history."""
    service = InMemorySessionService()
    history: list[dict[str, Any]] = [
        {"user:role": "clerk"},
        {"by": "client", "user:role": "admin"},
        *[{}] * 1500,
        {"by": "client", "user:role": "owner"},
    ]
    session_id = await _patched_session(service, *history)
    assert (await _turn_on(service, session_id))["user:role"] == "clerk"


@pytest.mark.parametrize(("key", "kind"), [("", "str"), (5, "int")])
def test_a_protected_key_that_is_not_a_name_is_refused(key: Any, kind: str) -> None:
    """An empty name or a non-string key fails at construction, naming what was given."""
    with pytest.raises(
        TypeError, match=f"^a protected key is a StateKey or a key name, not {kind}$"
    ):
        ProtectState(keys=[key])


async def test_refusals_in_one_run_are_all_readable_later() -> None:
    """A client write refused at the start and a tool write refused later in the same run
    are both readable by later policies, not only the newest."""
    told: list[tuple[bool, bool]] = []

    @on("after_tool")
    def look(*, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        told.append((ACTIVE.refused(tool_context.state), ROLE.refused(tool_context.state)))

    guard = RequireState(ACTIVE, message="inactive")
    lattice = Lattice(policy=[guard], handlers=[look])
    await _run(
        _writer_agent(),
        lattice,
        state={"user:account_active": True, "user:role": "clerk"},
        delta={"user:account_active": True},
    )
    assert told == [(True, True)]
