"""The lattice says once when an AgentTool runs an agent it can never see."""

from __future__ import annotations

import logging

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_lattice import Lattice
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import run_app, user


def _root(include_plugins: bool) -> LlmAgent:
    helper = LlmAgent(name="helper", model=FakeModel([ScriptedResponse.text("inner")]))
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    tool = AgentTool(helper, include_plugins=include_plugins)
    return LlmAgent(name="root", model=model, tools=[tool])


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "include_plugins=False" in r.getMessage()]


async def test_an_unguarded_agent_tool_is_named_once(caplog: pytest.LogCaptureFixture) -> None:
    """AgentTool(include_plugins=False) in the tree: one warning naming the agent, not per run."""
    with caplog.at_level(logging.WARNING, logger="adk_lattice"):
        run = await run_app(_root(False), [Lattice(telemetry=())], "hi")
        await run.send(user("again"))
    warnings = _warnings(caplog)
    assert len(warnings) == 1
    assert "helper" in warnings[0]


async def test_a_guarded_agent_tool_is_not_mentioned(caplog: pytest.LogCaptureFixture) -> None:
    """With include_plugins=True (the default) there is nothing to warn about."""
    with caplog.at_level(logging.WARNING, logger="adk_lattice"):
        await run_app(_root(True), [Lattice(telemetry=())], "hi")
    assert _warnings(caplog) == []
