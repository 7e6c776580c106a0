"""Pins ADK's tool confirmation as a plugin's before_tool uses it (ToolGuard's approval)."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, make_runner, message
from google.adk.agents.llm_agent import LlmAgent
from google.genai import types

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool

done: list[str] = []


def refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    done.append(charge_id)
    return {"status": "refunded"}


def _ask_or_let_through(*, tool_context: Any, **_: Any) -> dict[str, Any] | None:
    if tool_context.tool_confirmation is None:
        tool_context.request_confirmation(hint="approve?", payload={"tool": "refund"})
        return {"status": "pending_approval"}
    return None if tool_context.tool_confirmation.confirmed else {"status": "denied"}


async def _turns(answer: bool) -> tuple[Recorder, list[Any]]:
    done.clear()
    script = [
        ScriptedResponse.call("refund", charge_id="c1"),
        ScriptedResponse.text("waiting"),
        ScriptedResponse.text("done"),
    ]
    agent = LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(refund)])
    rec = Recorder(returns={"before_tool": _ask_or_let_through})
    runner, service = make_runner(agent, rec)
    session = await service.create_session(app_name="contract", user_id="u")
    first = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=message("refund c1")
        )
    ]
    (ask,) = [
        c for e in first for c in e.get_function_calls() if c.name == "adk_request_confirmation"
    ]
    reply = types.FunctionResponse(
        name="adk_request_confirmation", id=ask.id, response={"confirmed": answer}
    )
    resumed = types.Content(role="user", parts=[types.Part(function_response=reply)])
    second = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=resumed)
    ]
    return rec, second


async def test_request_confirmation_pauses_and_a_yes_runs_the_call_again() -> None:
    """Fact: after a yes, before_tool runs again with confirmed=True and the tool runs."""
    rec, _ = await _turns(True)
    assert done == ["c1"]
    confirmations = [r.kwargs["tool_context"].tool_confirmation for r in rec.of("before_tool")]
    assert confirmations[0] is None
    assert confirmations[-1].confirmed is True


async def test_a_no_reaches_before_tool_as_not_confirmed() -> None:
    """Fact: on 'no' before_tool sees tool_confirmation.confirmed False and can deny."""
    rec, second = await _turns(False)
    assert done == []
    assert rec.of("before_tool")[-1].kwargs["tool_context"].tool_confirmation.confirmed is False
    responses = [r.response for e in second for r in e.get_function_responses()]
    assert {"status": "denied"} in responses
