"""RedactPII through real Runners: every shape of tool result, call arguments, the user's
message, state deltas and media never reach the session, the model or a cache raw."""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.cache import ToolResultCache
from adk_lattice.policy import RedactPII
from adk_lattice.stores import MemoryStore
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import Run, noted, run_app

EMAIL = "jane.doe@example.com"


class RecordingStore(MemoryStore):
    """A memory store that keeps every value written, to look for raw values."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
        self.written.append(key.encode() + value)
        return await super()._set(key, value, ttl)


async def _events(run: Run) -> str:
    """Every persisted event of the run's session, as JSON text."""
    session = await run.runner.session_service.get_session(
        app_name="app", user_id=run.user_id, session_id=run.session_id
    )
    assert session is not None
    return json.dumps([e.model_dump(mode="json") for e in session.events])


async def _tool_turn(tool: Any, redactor: RedactPII, **extra: Any) -> tuple[Run, FakeModel]:
    model = FakeModel([ScriptedResponse.call(tool.__name__), ScriptedResponse.text("ok")])
    agent = LlmAgent(name="assistant", model=model, tools=[tool])
    run = await run_app(agent, [Lattice(policy=[redactor], **extra)], "go")
    return run, model


async def test_a_plain_string_tool_result_is_redacted_everywhere() -> None:
    """A tool returning a bare string reaches neither the session nor the model raw."""

    def lookup() -> str:
        """Look up."""
        return f"the customer is {EMAIL}"

    run, model = await _tool_turn(lookup, RedactPII())
    assert run.responses("lookup") == [{"result": "the customer is [REDACTED:EMAIL]"}]
    assert EMAIL not in await _events(run)
    assert EMAIL not in json.dumps(model.requests[1].model_dump(mode="json"))


async def test_values_in_tuples_and_keys_are_redacted() -> None:
    """Strings inside tuples and PII used as dict keys are redacted, values kept."""

    def lookup() -> dict[str, Any]:
        """Look up."""
        return {"pair": ("x", EMAIL), EMAIL: {"plan": "pro"}, "ssn 123-45-6789": 1}

    run, _ = await _tool_turn(lookup, RedactPII())
    assert run.responses("lookup") == [
        {
            "pair": ("x", "[REDACTED:EMAIL]"),
            "[REDACTED:EMAIL]": {"plan": "pro"},
            "ssn [REDACTED:SSN]": 1,
        }
    ]
    assert EMAIL not in await _events(run)


async def test_two_keys_redacted_alike_keep_both_values() -> None:
    """Two PII keys that redact to the same label keep both values, none is lost."""

    def lookup() -> dict[str, Any]:
        """Look up."""
        return {EMAIL: 1, "john@example.org": 2}

    run, _ = await _tool_turn(lookup, RedactPII())
    assert run.responses("lookup") == [{"[REDACTED:EMAIL]": 1, "[REDACTED:EMAIL]#2": 2}]


async def test_the_tool_result_cache_never_stores_a_raw_value() -> None:
    """A cached tool's result is stored redacted: tuple values and keys included."""

    def lookup() -> dict[str, Any]:
        """Look up."""
        return {"pair": ("x", EMAIL), EMAIL: "key"}

    store = RecordingStore()
    run, _ = await _tool_turn(lookup, RedactPII(), cache=[ToolResultCache(store, ["lookup"])])
    assert run.responses("lookup")
    assert store.written, "the cache stored nothing"
    assert not any(EMAIL.encode() in w for w in store.written)


async def test_restore_args_false_redacts_call_arguments_for_the_tool_too() -> None:
    """With restore_args=False the model's arguments reach the tool, event and model redacted."""
    got: list[str] = []

    def send_receipt(email: str) -> dict[str, str]:
        """Send a receipt."""
        got.append(email)
        return {"status": "sent"}

    model = FakeModel(
        [ScriptedResponse.call("send_receipt", email=EMAIL), ScriptedResponse.text("done")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[send_receipt])
    run = await run_app(agent, [Lattice(policy=[RedactPII(restore_args=False)])], "mail me")
    assert got == ["[REDACTED:EMAIL]"]
    assert EMAIL not in await _events(run)
    assert EMAIL not in json.dumps(model.requests[1].model_dump(mode="json"))


async def test_by_default_the_tool_gets_the_value_the_model_wrote() -> None:
    """By default the tool gets the value; the stored event and the model do not."""
    got: list[str] = []

    def send_receipt(email: str) -> dict[str, str]:
        """Send a receipt."""
        got.append(email)
        return {"status": "sent"}

    model = FakeModel(
        [ScriptedResponse.call("send_receipt", email=EMAIL), ScriptedResponse.text("done")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[send_receipt])
    run = await run_app(agent, [Lattice(policy=[RedactPII()])], "mail me")
    assert got == [EMAIL]
    assert EMAIL not in await _events(run)
    assert EMAIL not in json.dumps(model.requests[1].model_dump(mode="json"))


async def test_restore_args_gives_the_named_tool_the_original_value() -> None:
    """A tool named in restore_args gets the value; the event and the model do not."""
    got: list[str] = []

    def send_receipt(email: str) -> dict[str, str]:
        """Send a receipt."""
        got.append(email)
        return {"status": "sent"}

    model = FakeModel(
        [ScriptedResponse.call("send_receipt", email=EMAIL), ScriptedResponse.text("done")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[send_receipt])
    redactor = RedactPII(restore_args={"send_receipt"})
    run = await run_app(agent, [Lattice(policy=[redactor])], "mail me")
    assert got == [EMAIL]
    assert EMAIL not in await _events(run)
    sent = model.requests[1].model_dump(mode="json")
    assert EMAIL not in json.dumps(sent)
    assert '"id": "adk-' not in json.dumps(sent)  # ADK strips the id the policy assigned


async def test_inputs_persist_the_user_message_redacted() -> None:
    """With inputs=True the user's message is stored in the session redacted."""
    model = FakeModel([ScriptedResponse.text("noted")])
    agent = LlmAgent(name="assistant", model=model)
    run = await run_app(agent, [Lattice(policy=[RedactPII(inputs=True)])], f"I am {EMAIL}")
    events = await _events(run)
    assert EMAIL not in events
    assert "I am [REDACTED:EMAIL]" in events
    assert EMAIL not in json.dumps(model.requests[0].model_dump(mode="json"))


async def test_a_blocked_input_is_refused_and_stored_redacted() -> None:
    """A block kind in the user's message refuses the turn; the stored message is redacted."""
    model = FakeModel([ScriptedResponse.text("never")])
    agent = LlmAgent(name="assistant", model=model)
    redactor = RedactPII(inputs=True, strategies={"SSN": "block"})
    run = await run_app(agent, [Lattice(policy=[redactor])], "ssn 123-45-6789")
    assert model.calls == 0
    assert run.texts == [redactor.block_message]
    assert "123-45-6789" not in await _events(run)


async def test_state_written_by_a_tool_is_redacted() -> None:
    """A value a tool writes to state is persisted and read back redacted."""

    def remember(tool_context: ToolContext) -> dict[str, str]:
        """Remember the customer."""
        tool_context.state["customer"] = {"contact": EMAIL}
        return {"status": "ok"}

    run, _ = await _tool_turn(remember, RedactPII())
    assert run.state["customer"] == {"contact": "[REDACTED:EMAIL]"}
    assert EMAIL not in await _events(run)


async def test_keep_state_leaves_named_keys_alone() -> None:
    """A state key named in keep_state keeps the value the app wrote."""

    def remember(tool_context: ToolContext) -> dict[str, str]:
        """Remember the customer."""
        tool_context.state["user:contact"] = EMAIL
        return {"status": "ok"}

    run, _ = await _tool_turn(remember, RedactPII(keep_state={"user:contact"}))
    assert run.state["user:contact"] == EMAIL


async def test_text_media_in_a_tool_result_is_scrubbed() -> None:
    """A text file a tool returns as a part is redacted before the model reads it."""

    def export() -> types.Part:
        """Export the customer."""
        return types.Part.from_bytes(data=f"email,{EMAIL}".encode(), mime_type="text/csv")

    run, model = await _tool_turn(export, RedactPII())
    assert EMAIL.encode() not in (await _events(run)).encode()
    blob = json.dumps(model.requests[1].model_dump(mode="json"))
    assert EMAIL not in blob


async def test_opaque_media_can_be_withheld() -> None:
    """With media="withhold", an image a tool returns is replaced by a notice."""

    def snapshot() -> dict[str, Any]:
        """Take a snapshot."""
        return {"image": types.Part.from_bytes(data=b"\x89PNG\r\n", mime_type="image/png")}

    run, model = await _tool_turn(snapshot, RedactPII(media="withhold"))
    assert run.responses("snapshot") == [{"image": "[WITHHELD:MEDIA]"}]
    assert "image/png" not in json.dumps(model.requests[1].model_dump(mode="json"))


async def test_a_clean_tuple_result_is_left_as_the_tool_returned_it(ctx: Any) -> None:
    """A result that held nothing sensitive is not replaced, whatever its shape."""
    result = ("plain", 1)
    out = RedactPII().after_tool(tool=None, tool_args={}, tool_context=await ctx(), result=result)
    assert out is None


async def test_later_steps_of_the_run_read_the_redacted_state() -> None:
    """A tool that reads state a previous tool wrote gets the redacted value."""
    seen: list[Any] = []

    def remember(tool_context: ToolContext) -> dict[str, str]:
        """Remember the customer."""
        tool_context.state["contact"] = EMAIL
        return {"status": "ok"}

    def recall(tool_context: ToolContext) -> dict[str, str]:
        """Recall the customer."""
        seen.append(tool_context.state.get("contact"))
        return {"status": "ok"}

    model = FakeModel(
        [
            ScriptedResponse.call("remember"),
            ScriptedResponse.call("recall"),
            ScriptedResponse.text("done"),
        ]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[remember, recall])
    await run_app(agent, [Lattice(policy=[RedactPII()])], "go")
    assert seen == ["[REDACTED:EMAIL]"]


async def test_a_tools_state_write_is_redacted_in_the_delta_and_the_live_state(ctx: Any) -> None:
    """after_tool redacts what the tool wrote to state, in the delta and the session's state."""
    c = await ctx({}, function_call_id="fc-1")
    c.state["contact"] = EMAIL  # what a tool does: the delta and the live state hold it
    out = RedactPII().after_tool(tool=None, tool_args={}, tool_context=c, result={"ok": 1})
    assert out is None
    assert c.actions.state_delta["contact"] == "[REDACTED:EMAIL]"
    assert c.session.state["contact"] == "[REDACTED:EMAIL]"
    assert noted(c, "after_tool") == [("redact", "email")]
