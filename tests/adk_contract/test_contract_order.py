"""ADK facts: the order of plugin hooks in a turn, and the first-non-None rule."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, event_texts, run
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool, llm_response


def lookup(charge_id: str) -> dict[str, str]:
    """Look up a charge."""
    return {"charge_id": charge_id, "status": "paid"}


async def test_hook_order_in_a_model_tool_model_turn() -> None:
    """Fact: one model->tool->model turn calls the hooks in the documented order."""
    model = FakeModel(
        [ScriptedResponse.call("lookup", charge_id="c1"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="billing", model=model, tools=[function_tool(lookup)])
    rec = Recorder()
    await run(agent, rec)
    assert rec.hooks() == [
        "on_user_message",
        "before_run",
        "before_agent",
        "before_model",
        "after_model",
        "on_event",
        "before_tool",
        "after_tool",
        "on_event",
        "before_model",
        "after_model",
        "on_event",
        "after_agent",
        "after_run",
    ]


async def test_first_non_none_stops_later_plugins_and_agent_callbacks() -> None:
    """Fact: the first plugin returning non-None stops later plugins and agent callbacks."""
    agent_calls: list[str] = []

    def agent_before_model(**_: Any) -> None:
        agent_calls.append("before_model")

    first = Recorder("first", returns={"before_model": llm_response("served")})
    second = Recorder("second")
    model = FakeModel([ScriptedResponse.text("from model")])
    agent = LlmAgent(name="a", model=model, before_model_callback=agent_before_model)
    events = await run(agent, first, second)
    assert len(first.of("before_model")) == 1
    assert second.of("before_model") == []
    assert agent_calls == []
    assert event_texts(events) == ["served"]


async def test_none_returns_reach_every_plugin_in_registration_order() -> None:
    """Fact: plugins returning None all run, in registration order, then the agent's own."""
    order: list[str] = []

    class Named(Recorder):
        async def before_model_callback(self, **kw: Any) -> Any:
            order.append(self.name)
            return await super().before_model_callback(**kw)

    def agent_before_model(**_: Any) -> None:
        order.append("agent")

    agent = LlmAgent(
        name="a",
        model=FakeModel([ScriptedResponse.text("x")]),
        before_model_callback=agent_before_model,
    )
    await run(agent, Named("p1"), Named("p2"))
    assert order == ["p1", "p2", "agent"]
