"""ADK's own plugins inside the lattice's tiers, on real Runners."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.plugins import DebugLoggingPlugin, ToolCallIntegrityPlugin
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.context_filter_plugin import ContextFilterPlugin
from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin
from google.adk.plugins.logging_plugin import LoggingPlugin
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, on
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder, run_app

ran: list[str] = []
fails_left: list[int] = []


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    ran.append(charge_id)
    return {"charge_id": charge_id, "amount": 10.0}


def flaky_lookup(charge_id: str) -> dict[str, Any]:
    """Look up a charge on a backend that fails the first time."""
    if fails_left:
        fails_left.pop()
        raise ConnectionError("backend busy")
    return {"charge_id": charge_id, "amount": 10.0}


def _tool_agent(*extra: ScriptedResponse) -> LlmAgent:
    ran.clear()
    script = [
        ScriptedResponse.call("lookup_charge", charge_id="c1"),
        *extra,
        ScriptedResponse.text("Done."),
    ]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])


class Approver(BasePlugin):
    """A user-written ADK plugin: only before_tool is overridden; its answer is configurable."""

    def __init__(self, answer: Any = None, *, fail: bool = False) -> None:
        super().__init__("approver")
        self.answer, self.fail, self.closed = answer, fail, 0

    async def before_tool_callback(self, **kwargs: Any) -> Any:
        if self.fail:
            raise RuntimeError("approval service down")
        return self.answer

    async def close(self) -> None:
        self.closed += 1


def test_only_the_callbacks_a_plugin_overrides_are_chained() -> None:
    """A plugin joins the chains of the callbacks it overrides, and no other."""
    lattice = Lattice(policy=[GlobalInstructionPlugin("Be brief.")], handlers=[Approver()])
    assert lattice.chain("before_model") == ("global_instruction",)
    assert lattice.chain("before_tool") == ("approver",)
    assert lattice.chain("after_tool") == ()


async def test_logging_plugin_runs_in_the_handlers_tier(capsys: pytest.CaptureFixture[str]) -> None:
    """LoggingPlugin in handlers= prints its lines for the model and tool hooks of a turn."""
    await run_app(_tool_agent(), Lattice(handlers=[LoggingPlugin()], telemetry=()))
    out = capsys.readouterr().out
    assert "[logging_plugin]" in out
    assert "TOOL STARTING" in out or "lookup_charge" in out
    assert ran == ["c1"]


async def test_logging_plugin_as_an_observer(capsys: pytest.CaptureFixture[str]) -> None:
    """LoggingPlugin in telemetry= observes every hook ADK called, and the turn is unchanged."""
    turn = await run_app(_tool_agent(), Lattice(telemetry=[LoggingPlugin()]))
    out = capsys.readouterr().out
    assert out.count("[logging_plugin]") > 5
    assert turn.texts[-1] == "Done."


async def test_global_instruction_plugin_reaches_the_model() -> None:
    """GlobalInstructionPlugin in policy= prepends its instruction to every model request."""
    agent = _tool_agent()
    await run_app(agent, Lattice(policy=[GlobalInstructionPlugin("Answer in French.")]))
    requests = agent.model.requests  # type: ignore[union-attr]
    assert len(requests) == 2
    assert all("Answer in French." in str(r.config.system_instruction) for r in requests)


async def test_context_filter_plugin_trims_what_the_model_sees() -> None:
    """ContextFilterPlugin keeps only the latest invocation in the second turn's request."""
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    agent = LlmAgent(name="chat", model=model)
    lattice = Lattice(handlers=[ContextFilterPlugin(num_invocations_to_keep=1)])
    first = await run_app(agent, lattice, "first question")
    await run_app(
        agent, lattice, "second question", runner=first.runner, session_id=first.session_id
    )
    seen = [p.text for c in model.requests[1].contents for p in c.parts or [] if p.text]
    assert "second question" in seen
    assert "first question" not in seen


async def test_reflect_and_retry_plugin_recovers_a_failing_tool() -> None:
    """ReflectAndRetryToolPlugin's guidance stands in for a tool error; the retry succeeds."""
    fails_left[:] = [1]
    script = [
        ScriptedResponse.call("flaky_lookup", charge_id="c1"),
        ScriptedResponse.call("flaky_lookup", charge_id="c1"),
        ScriptedResponse.text("Done."),
    ]
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[flaky_lookup])
    turn = await run_app(agent, Lattice(handlers=[ReflectAndRetryToolPlugin(max_retries=2)]))
    first, second = turn.tool_responses
    assert first["response_type"] == "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
    assert second == {"charge_id": "c1", "amount": 10.0}
    assert turn.texts[-1] == "Done."


async def test_save_files_plugin_turns_uploads_into_artifacts() -> None:
    """SaveFilesAsArtifactsPlugin saves an uploaded file and the model sees a placeholder."""
    model = FakeModel([ScriptedResponse.text("Got it.")])
    agent = LlmAgent(name="files", model=model)
    lattice = Lattice(handlers=[SaveFilesAsArtifactsPlugin(attach_file_reference=False)])
    artifacts = InMemoryArtifactService()
    app = App(name="app", root_agent=agent, plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService(), artifact_service=artifacts)
    session = await runner.session_service.create_session(app_name="app", user_id="u1")
    upload = types.Part(
        inline_data=types.Blob(mime_type="text/plain", data=b"receipt", display_name="r.txt")
    )
    message = types.Content(role="user", parts=[types.Part(text="see attached"), upload])
    async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
        pass
    keys = await artifacts.list_artifact_keys(app_name="app", user_id="u1", session_id=session.id)
    assert keys == ["r.txt"]
    seen = [p.text for c in model.requests[0].contents for p in c.parts or [] if p.text]
    assert '[Uploaded Artifact: "r.txt"]' in seen
    assert not any(p.inline_data for c in model.requests[0].contents for p in c.parts or [])


async def test_a_raising_plugin_in_the_policy_tier_fails_closed() -> None:
    """A plugin callback that raises in policy= denies the tool with the lattice's denial."""
    turn = await run_app(_tool_agent(), Lattice(policy=[Approver(fail=True)]))
    assert ran == []
    (response,) = turn.tool_responses
    assert (response["code"], response["policy"]) == ("handler_error", "approver")


async def test_a_raising_plugin_in_the_handlers_tier_is_skipped() -> None:
    """A plugin callback that raises in handlers= is skipped and the tool runs."""
    lattice = Lattice(handlers=[Approver(fail=True)])
    await run_app(_tool_agent(), lattice)
    assert ran == ["c1"]
    assert lattice.stats[("error", "before_tool", "approver")] == 1


async def test_a_plugins_bad_return_goes_through_the_return_guard() -> None:
    """A plugin's str from before_tool in policy= is a bad return: the tool is denied."""
    turn = await run_app(_tool_agent(), Lattice(policy=[Approver("yes")]))
    assert ran == []
    assert turn.tool_responses[0]["code"] == "bad_return"


async def test_a_plugins_value_wins_at_its_tiers_place(recorder: Recorder) -> None:
    """A plugin's dict from before_tool short-circuits the tool like any decider."""
    answer = {"status": "denied", "reason": "frozen account"}
    turn = await run_app(_tool_agent(), Lattice(policy=[Approver(answer)], telemetry=[recorder]))
    assert ran == []
    assert turn.tool_responses == [answer]
    (outcome,) = recorder.of("before_tool")
    assert (outcome.acted_by, outcome.acted_tier, outcome.denied) == ("approver", "policy", True)


async def test_the_lattice_closes_its_plugins() -> None:
    """Closing the Runner closes the lattice, which closes each plugin once."""
    approver = Approver()
    turn = await run_app(_tool_agent(), Lattice(handlers=[approver]))
    await turn.runner.close()
    assert approver.closed == 1


async def test_debug_logging_plugin_writes_its_trace(tmp_path: Any) -> None:
    """DebugLoggingPlugin in telemetry= writes its per-invocation YAML file."""
    out = tmp_path / "debug.yaml"
    plugin = DebugLoggingPlugin(output_path=str(out), include_session_state=False)
    await run_app(_tool_agent(), Lattice(telemetry=[plugin]))
    text = out.read_text()
    assert "lookup_charge" in text
    assert ran == ["c1"]


async def test_tool_call_integrity_plugin_lets_a_stamped_call_run() -> None:
    """ToolCallIntegrityPlugin in policy= stamps the model's call and lets it run."""
    integrity = ToolCallIntegrityPlugin(b"k" * 32)
    turn = await run_app(_tool_agent(), Lattice(policy=[integrity]))
    assert ran == ["c1"]
    assert turn.texts[-1] == "Done."


async def test_tool_call_integrity_refusal_is_a_denial_in_the_policy_tier() -> None:
    """Arguments changed after stamping fail its check: in policy= the tool is denied."""

    @on("before_tool", name="retarget")
    def retarget(*, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        tool_args["charge_id"] = "c2"  # an in-place rewrite ahead of the integrity check

    integrity = ToolCallIntegrityPlugin(b"k" * 32)
    turn = await run_app(_tool_agent(), Lattice(policy=[retarget, integrity]))
    assert ran == []
    (response,) = turn.tool_responses
    assert (response["code"], response["policy"]) == ("handler_error", "tool_call_integrity")


class _Streamed(BasePlugin):
    """A user-written ADK plugin that records each model response it is shown."""

    def __init__(self) -> None:
        super().__init__("streamed")
        self.partial: list[bool | None] = []

    async def after_model_callback(self, **kwargs: Any) -> Any:
        self.partial.append(kwargs["llm_response"].partial)
        return None


async def test_a_plugin_observing_sees_every_streamed_chunk() -> None:
    """A plugin in telemetry= is shown the streamed chunks too, not only the final answer."""
    plugin = _Streamed()
    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo."])])
    await run_app(LlmAgent(name="a", model=model), Lattice(telemetry=[plugin]), streaming=True)
    assert plugin.partial.count(True) == 2 and plugin.partial[-1] is not True


async def test_a_plugin_observing_cannot_change_the_run() -> None:
    """A plugin in telemetry= whose callback returns an answer only observes: the tool runs."""
    denial = {"status": "denied", "reason": "no"}
    turn = await run_app(_tool_agent(), Lattice(telemetry=[Approver(denial)]))
    assert ran == ["c1"]
    assert turn.texts[-1] == "Done."
