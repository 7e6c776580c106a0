"""ADK facts: context identity and state, including temp: keys."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, make_runner, message
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.tool_context import ToolContext

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool


def lookup(charge_id: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look up a charge; reports what temp state the tool can read."""
    return {"charge_id": charge_id, "seen": tool_context.state.get("temp:cache_key")}


def agent() -> LlmAgent:
    script = [ScriptedResponse.call("lookup", charge_id="c1"), ScriptedResponse.text("ok")]
    return LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(lookup)])


def test_callback_context_and_tool_context_are_one_class() -> None:
    """Fact: CallbackContext and ToolContext are the same class (agents.context.Context)."""
    assert CallbackContext is ToolContext


async def test_function_call_id_is_set_in_tool_hooks_only() -> None:
    """Fact: function_call_id is set in tool hooks and None in model hooks."""
    rec = Recorder()
    runner, service = make_runner(agent(), rec)
    session = await service.create_session(app_name="contract", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message("x")):
        pass
    assert {r.kwargs["callback_context"].function_call_id for r in rec.of("before_model")} == {None}
    assert rec.of("before_tool")[0].kwargs["tool_context"].function_call_id


async def test_temp_state_is_readable_later_in_the_invocation_but_not_persisted() -> None:
    """Fact: temp: keys are readable by later hooks and tools but never persisted."""

    def set_key(*, tool_context: ToolContext, **_: Any) -> None:
        tool_context.state["temp:cache_key"] = "k1"
        tool_context.state["kept"] = "yes"

    def read_key(*, callback_context: CallbackContext, **_: Any) -> None:
        reads.append(callback_context.state.get("temp:cache_key"))

    reads: list[Any] = []
    rec = Recorder(returns={"before_tool": set_key, "before_model": read_key})
    runner, service = make_runner(agent(), rec)
    session = await service.create_session(app_name="contract", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message("x")):
        pass
    assert reads == [None, "k1"]
    assert rec.of("after_tool")[0].kwargs["result"]["seen"] == "k1"
    stored = await service.get_session(app_name="contract", user_id="u", session_id=session.id)
    assert stored is not None
    assert stored.state.get("kept") == "yes"
    assert "temp:cache_key" not in stored.state
    assert all("temp:cache_key" not in e.actions.state_delta for e in stored.events)


async def test_context_state_writes_go_through_its_event_actions_and_state() -> None:
    """Fact: a Context writes state through ``_state`` (value and delta) and ``_event_actions``.

    Shadow mode redirects exactly these to copies; if ADK changes them, this fails first.
    """
    rec = Recorder()
    runner, service = make_runner(agent(), rec)
    session = await service.create_session(app_name="contract", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message("x")):
        pass
    ctx = rec.of("before_model")[0].kwargs["callback_context"]
    assert ctx._state._delta is ctx._event_actions.state_delta
    assert isinstance(ctx._state._value, dict)
    ctx.state["contract_probe"] = 1
    assert ctx._state._value["contract_probe"] == 1
    assert ctx._event_actions.state_delta["contract_probe"] == 1
