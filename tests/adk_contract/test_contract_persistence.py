"""ADK facts: which event carries a callback's state writes, and the current span in hooks."""

from __future__ import annotations

from typing import Any

from contract_support import ADK_VERSION, Recorder, make_runner, message
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events.event import Event
from opentelemetry import trace

from adk_lattice.testing import FakeModel, ScriptedResponse, capture_spans, function_tool


def lookup(charge_id: str) -> dict[str, str]:
    """Look up a charge."""
    return {"charge_id": charge_id}


def tool_agent() -> LlmAgent:
    script = [ScriptedResponse.call("lookup", charge_id="c1"), ScriptedResponse.text("ok")]
    return LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(lookup)])


def writer(key: str, context_arg: str) -> Any:
    def write(**kwargs: Any) -> None:
        kwargs[context_arg].state[key] = True

    return write


async def persisted(rec: Recorder, agent: LlmAgent, run_config: RunConfig | None = None) -> Any:
    runner, service = make_runner(agent, rec)
    session = await service.create_session(app_name="contract", user_id="u")
    stream = runner.run_async(
        user_id="u", session_id=session.id, new_message=message("x"), run_config=run_config
    )
    async for _ in stream:
        pass
    stored = await service.get_session(app_name="contract", user_id="u", session_id=session.id)
    assert stored is not None
    return stored


def carrier(events: list[Event], key: str) -> Event:
    (event,) = [e for e in events if key in e.actions.state_delta]
    return event


async def test_model_hook_writes_ride_on_the_model_response_event() -> None:
    """Fact: before_model writes are committed on that call's model-response event."""
    rec = Recorder(returns={"before_model": writer("from_model_hook", "callback_context")})
    stored = await persisted(rec, tool_agent())
    carriers = [e for e in stored.events if "from_model_hook" in e.actions.state_delta]
    # One model call asks for the tool, the next answers: each commits its own write.
    assert [(bool(e.get_function_calls()), e.author) for e in carriers] == [
        (True, "a"),
        (False, "a"),
    ]
    assert carriers[1].content is not None


async def test_before_tool_writes_ride_on_the_function_response_event() -> None:
    """Fact: before_tool writes are committed on the function-response event."""
    rec = Recorder(returns={"before_tool": writer("from_tool_hook", "tool_context")})
    stored = await persisted(rec, tool_agent())
    assert carrier(stored.events, "from_tool_hook").get_function_responses()


async def test_before_agent_writes_ride_on_an_extra_contentless_event() -> None:
    """Fact: before_agent writes are committed on an extra event without content."""
    rec = Recorder(returns={"before_agent": writer("from_agent_hook", "callback_context")})
    stored = await persisted(rec, tool_agent())
    assert carrier(stored.events, "from_agent_hook").content is None


async def test_streaming_writes_ride_on_the_final_event() -> None:
    """Fact: under SSE, after_model writes on chunks are committed on the final event."""
    rec = Recorder(returns={"after_model": writer("from_chunks", "callback_context")})
    agent = LlmAgent(name="a", model=FakeModel([ScriptedResponse(text_chunks=["a", "b"])]))
    stored = await persisted(rec, agent, RunConfig(streaming_mode=StreamingMode.SSE))
    event = carrier(stored.events, "from_chunks")
    assert not event.partial


async def test_after_run_writes_are_not_persisted() -> None:
    """Fact: state written in after_run is not persisted."""

    def write(*, invocation_context: Any) -> None:
        invocation_context.session.state["from_after_run"] = True

    rec = Recorder(returns={"after_run": write})
    stored = await persisted(rec, tool_agent())
    assert "from_after_run" not in stored.state


async def test_current_span_in_hooks() -> None:
    """Fact: agent and model hooks run under invoke_agent, tool hooks under execute_tool.

    Before 2.13 model hooks run under ADK's ``call_llm`` span.
    """
    model_span = "invoke_agent a" if ADK_VERSION >= (2, 13) else "call_llm"
    seen: dict[str, str] = {}

    def note(hook: str) -> Any:
        def record(**_: Any) -> None:
            seen.setdefault(hook, getattr(trace.get_current_span(), "name", ""))

        return record

    hooks = ("before_agent", "before_model", "after_model", "before_tool", "after_tool")
    rec = Recorder(returns={hook: note(hook) for hook in hooks})
    with capture_spans():
        await persisted(rec, tool_agent())
    assert seen == {
        "before_agent": "invoke_agent a",
        "before_model": model_span,
        "after_model": model_span,
        "before_tool": "execute_tool lookup",
        "after_tool": "execute_tool lookup",
    }
