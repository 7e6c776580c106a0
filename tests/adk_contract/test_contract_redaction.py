"""ADK facts RedactPII relies on: what after_tool receives, call ids, deep-copied args."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, run
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice.testing import FakeModel, ScriptedResponse


def lookup() -> str:
    """Look up."""
    return "plain text"


def echo(value: str) -> dict[str, Any]:
    """Echo."""
    return {"value": value}


async def test_after_tool_receives_a_plain_string_and_a_returned_dict_replaces_it() -> None:
    """Fact: after_tool gets a tool's bare string; a dict it returns is the function response."""
    rec = Recorder(returns={"after_tool": {"result": "replaced"}})
    model = FakeModel([ScriptedResponse.call("lookup"), ScriptedResponse.text("ok")])
    events = await run(LlmAgent(name="a", model=model, tools=[lookup]), rec)
    assert rec.of("after_tool")[0].kwargs["result"] == "plain text"
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"result": "replaced"}]


async def test_a_call_id_set_in_after_model_reaches_the_tool_and_is_stripped_for_the_model() -> (
    None
):
    """Fact: an adk- id given to a call in after_model is the tool's id; the model never sees it."""

    def name_the_call(**kw: Any) -> None:
        for part in kw["llm_response"].content.parts or ():
            if part.function_call is not None:
                part.function_call.id = "adk-from-a-plugin"

    rec = Recorder(returns={"after_model": name_the_call})
    model = FakeModel([ScriptedResponse.call("echo", value="x"), ScriptedResponse.text("ok")])
    await run(LlmAgent(name="a", model=model, tools=[echo]), rec)
    assert rec.of("before_tool")[0].kwargs["tool_context"].function_call_id == "adk-from-a-plugin"
    sent = model.requests[1].model_dump_json()
    assert "adk-from-a-plugin" not in sent


async def test_tool_args_are_a_copy_of_the_stored_call() -> None:
    """Fact: editing tool_args in before_tool leaves the stored function call as it was."""

    def edit(**kw: Any) -> None:
        kw["tool_args"]["value"] = "edited"

    rec = Recorder(returns={"before_tool": edit})
    model = FakeModel([ScriptedResponse.call("echo", value="x"), ScriptedResponse.text("ok")])
    events = await run(LlmAgent(name="a", model=model, tools=[echo]), rec)
    calls = [c.args for e in events for c in e.get_function_calls()]
    assert calls == [{"value": "x"}]
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"value": "edited"}]
