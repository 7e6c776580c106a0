"""assert_tools_neutral and tool_findings walk an agent tree and report every finding."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset

from adk_lattice.testing import Ban, FakeModel, assert_tools_neutral, tool_findings


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up one charge by its id."""
    return {}


def mark_done(detail: str) -> dict[str, Any]:
    """Use this generously. Put your findings in the result argument."""
    return {}


def write_note(text: str) -> dict[str, Any]:
    """Write a status update."""
    return {}


class Builtin(BaseTool):
    """A tool with no declaration."""

    def __init__(self) -> None:
        super().__init__(name="builtin", description="Searches.")


class LazyTools(BaseToolset):
    """A toolset whose tools are only known at run time."""

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        return []


def agent(name: str, *tools: Any, description: str = "", **kw: Any) -> LlmAgent:
    return LlmAgent(name=name, model=FakeModel(), tools=list(tools), description=description, **kw)


def test_clean_tree_passes() -> None:
    """A tree of neutral tools passes."""
    assert_tools_neutral(agent("root", lookup_charge))


def test_every_finding_is_reported_at_once() -> None:
    """Bans and undeclared argument references of one tool all appear in one failure."""
    with pytest.raises(AssertionError) as failure:
        assert_tools_neutral(agent("root", mark_done))
    message = str(failure.value)
    assert "2 model-facing tool finding(s)" in message
    assert "root/mark_done: banned phrase 'generously'" in message
    assert "root/mark_done: description refers to argument 'result'" in message


def test_sub_agent_tools_are_checked() -> None:
    """Tools of a sub-agent are checked, named under the sub-agent."""
    root = agent("root", sub_agents=[agent("notes", write_note)])
    assert any(f.startswith("notes/write_note: banned phrase") for f in tool_findings(root))


def test_agent_tool_agents_are_walked() -> None:
    """The agent behind an AgentTool is walked, and its description checked as a tool."""
    inner = agent("inner", write_note, description="Gives a recap.")
    findings = tool_findings(agent("root", AgentTool(inner)))
    assert any(f.startswith("root/inner: banned phrase 'recap'") for f in findings)
    assert any(f.startswith("inner/write_note: banned phrase") for f in findings)


def test_transfer_target_descriptions_are_checked() -> None:
    """A transfer target's description is model-facing text under transfer_to_agent."""
    root = agent("root", sub_agents=[agent("spec", description="Writes a final report.")])
    findings = tool_findings(root)
    assert findings == [
        "root/transfer_to_agent: description of transfer target 'spec': banned phrase "
        "'final report': names a genre, not what the text must contain; say what it must "
        "contain"
    ]


def test_undeclared_tool_is_a_finding_unless_allowed() -> None:
    """A tool without a declaration is reported, and quiet once allowed by name."""
    root = agent("root", Builtin())
    assert tool_findings(root) == [
        "root/builtin: exposes no declaration; its argument schema was not checked"
    ]
    assert tool_findings(root, allow_unchecked={"builtin"}) == []


def test_toolset_is_a_finding_unless_allowed() -> None:
    """A toolset (tools known only at run time) is reported, and quiet once allowed."""
    root = agent("root", LazyTools())
    assert tool_findings(root) == [
        "root/LazyTools: toolset not checked (its tools load at run time)"
    ]
    assert tool_findings(root, allow_unchecked={"LazyTools"}) == []


def test_custom_bans_apply() -> None:
    """Custom bans replace the defaults in the walk."""
    root = agent("root", lookup_charge)
    assert tool_findings(root, bans=[Ban("charge", "test ban")]) == [
        "root/lookup_charge: banned phrase 'charge': test ban"
    ]


def test_an_app_is_walked_through_its_root_agent() -> None:
    """Passing an App checks its root agent's tree."""
    app = App(name="shop", root_agent=agent("root", mark_done))
    assert any(f.startswith("root/mark_done") for f in tool_findings(app))


def test_a_non_agent_root_is_a_type_error() -> None:
    """Something that is neither an agent nor an App is a TypeError, not a crash."""
    with pytest.raises(TypeError, match="expected an agent"):
        tool_findings(42)  # type: ignore[arg-type]
