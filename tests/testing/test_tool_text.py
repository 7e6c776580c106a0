"""model_facing_text and undeclared_arg_refs over ADK's real tool classes."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool
from google.genai import types
from pydantic import BaseModel, Field

from adk_lattice.testing import FakeModel, function_tool, model_facing_text, undeclared_arg_refs


class Finding(BaseModel):
    """One finding."""

    note: str = Field(description="the evidence, quoted")


def report(state: str, detail: str, findings: list[Finding]) -> dict[str, Any]:
    """Report the outcome. Put the evidence in the detail argument."""
    return {}


def report_wrong_arg(state: str, detail: str) -> dict[str, Any]:
    """Report the outcome. Put your actual findings in the result argument."""
    return {}


class Undeclared(BaseTool):
    """A tool that exposes no declaration (like a built-in that edits the request)."""

    def __init__(self) -> None:
        super().__init__(name="builtin", description="Searches the web.")


class Declared(BaseTool):
    """A custom tool whose declaration uses a typed genai Schema."""

    def __init__(self) -> None:
        super().__init__(name="custom", description="Custom tool.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = types.Schema(
            type=types.Type.OBJECT,
            properties={"q": types.Schema(type=types.Type.STRING, description="deep text")},
        )
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters=schema
        )


class Broken(BaseTool):
    """A tool whose declaration cannot be built here."""

    def __init__(self) -> None:
        super().__init__(name="broken", description="Needs a server.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        raise ConnectionError("no server")


def test_text_includes_descriptions_nested_in_array_of_objects() -> None:
    """The schema is serialised whole, so a nested field description is in the text."""
    text, declared = model_facing_text(function_tool(report))
    assert declared is True
    assert "Report the outcome." in text
    assert "the evidence, quoted" in text


def test_typed_schema_descriptions_are_in_the_text() -> None:
    """A tool declaring a typed genai Schema has its nested descriptions in the text."""
    text, declared = model_facing_text(Declared())
    assert declared is True
    assert "deep text" in text


def test_tool_without_declaration_says_so() -> None:
    """A tool exposing no declaration returns its description and declared=False."""
    assert model_facing_text(Undeclared()) == ("Searches the web.", False)


def test_declaration_that_cannot_be_built_counts_as_undeclared() -> None:
    """A tool whose declaration raises is reported undeclared, not crashed on."""
    assert model_facing_text(Broken()) == ("Needs a server.", False)


def test_agent_tool_text_carries_the_agent_description() -> None:
    """An AgentTool's model-facing text is its agent's description plus its schema."""
    helper = LlmAgent(name="helper", model=FakeModel(), description="Drafts replies.")
    text, declared = model_facing_text(AgentTool(helper))
    assert declared is True
    assert "Drafts replies." in text
    assert '"request"' in text


def test_transfer_tool_text_lists_the_targets() -> None:
    """The transfer tool's text includes the target names offered to the model."""
    text, declared = model_facing_text(TransferToAgentTool(agent_names=["refunds"]))
    assert declared is True
    assert "refunds" in text


def test_mcp_tool_text_comes_from_its_input_schema() -> None:
    """An MCP tool's text includes its input schema's descriptions."""
    mcp_types = pytest.importorskip("mcp.types")
    from google.adk.tools.mcp_tool.mcp_tool import McpTool

    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "deep"}}}
    raw = mcp_types.Tool(name="search", description="Search.", inputSchema=schema)
    tool = McpTool(mcp_tool=raw, mcp_session_manager=None)  # type: ignore[arg-type]
    text, declared = model_facing_text(tool)
    assert declared is True
    assert "deep" in text


def test_reference_to_an_undeclared_argument_is_found() -> None:
    """A description telling the model to fill an undeclared argument is reported."""
    assert undeclared_arg_refs(function_tool(report_wrong_arg)) == (["result"], True)


def test_reference_to_a_declared_argument_is_quiet() -> None:
    """A description naming a declared argument gives no finding."""
    assert undeclared_arg_refs(function_tool(report)) == ([], True)


def test_quoted_reference_forms_are_found() -> None:
    """'parameter `x`' and 'an argument named x' forms are recognised."""

    def tool(detail: str) -> dict[str, Any]:
        """Set the parameter `summary` and an argument named outcome."""
        return {}

    assert undeclared_arg_refs(function_tool(tool)) == (["outcome", "summary"], True)


def test_prose_around_argument_words_is_not_a_reference() -> None:
    """Phrases like 'the first argument' or 'invalid arguments' name no argument."""

    def tool(detail: str) -> dict[str, Any]:
        """The first argument is required; invalid arguments fail; takes one argument."""
        return {}

    assert undeclared_arg_refs(function_tool(tool)) == ([], True)


def test_tool_without_declaration_is_not_checked() -> None:
    """A tool with no declaration reports checked=False."""
    assert undeclared_arg_refs(Undeclared()) == ([], False)
