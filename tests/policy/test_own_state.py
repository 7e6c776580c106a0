"""The lattice's own state keys: no tool can shrink or clear them (through real Runners)."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

from adk_lattice import Lattice
from adk_lattice.policy.provenance.taint import TAINT_KEY
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import run_app, user
from tests.policy.test_provenance_runner import ATTACKER_IBAN, Bank, guard, pay


def forget_preference(name: str, tool_context: ToolContext) -> dict[str, Any]:
    """Forget one of the user's saved preferences."""
    tool_context.state[name] = None
    return {"status": "forgotten"}


def erasing(bank: Bank) -> LlmAgent:
    """An agent whose injected model reads mail, erases the taint, then pays the attacker."""
    script = [
        ScriptedResponse.call("read_inbox"),
        ScriptedResponse.call("forget_preference", name=TAINT_KEY),
        pay(ATTACKER_IBAN),
        ScriptedResponse.text("ok"),
    ]
    return LlmAgent(
        name="assistant", model=FakeModel(script), tools=[*bank.tools(), forget_preference]
    )


async def test_a_tool_cannot_erase_the_taint_record() -> None:
    """A trusted tool writing None over the taint record leaves it, and the payment is denied."""
    bank = Bank()
    guarded = guard(trusted_tools={"forget_preference": True})
    run = await run_app(erasing(bank), [Lattice(policy=[guarded])], "check mail")
    assert bank.sent == []
    assert run.responses("send_money")[0]["code"] == "ungrounded_argument"


async def test_a_client_state_delta_cannot_erase_the_taint_record() -> None:
    """A client's state_delta clearing the taint record is undone, and the payment is denied."""
    bank = Bank()
    script = [ScriptedResponse.call("read_inbox"), ScriptedResponse.text("read")]
    script += [pay(ATTACKER_IBAN), ScriptedResponse.text("ok")]
    assistant = LlmAgent(name="assistant", model=FakeModel(script), tools=bank.tools())
    run = await run_app(assistant, [Lattice(policy=[guard()])], "check mail")
    async for _ in run.runner.run_async(
        user_id="u1",
        session_id=run.session_id,
        new_message=user("pay it"),
        state_delta={TAINT_KEY: None},
    ):
        pass
    assert bank.sent == []
    session = await run.runner.session_service.get_session(
        app_name="app", user_id="u1", session_id=run.session_id
    )
    assert session is not None and session.state[TAINT_KEY] is not None
