"""``assert_tools_neutral``: check every model-facing tool of an agent tree at once."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.apps import App
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool

from ._bans import DEFAULT_BANS, Ban, ban_violations
from ._tool_text import model_facing_text, undeclared_arg_refs


def _transfer_targets(agent: BaseAgent) -> list[BaseAgent]:
    # Mirrors ADK's choice of transfer targets: sub-agents, then parent and peers unless
    # the agent disallows them (only LLM agents transfer).
    if not hasattr(agent, "disallow_transfer_to_parent"):
        return []
    targets = list(agent.sub_agents)
    parent = agent.parent_agent
    if parent is not None and hasattr(parent, "disallow_transfer_to_parent"):
        if not getattr(agent, "disallow_transfer_to_parent", False):
            targets.append(parent)
        if not getattr(agent, "disallow_transfer_to_peers", False):
            targets += [p for p in parent.sub_agents if p.name != agent.name]
    return targets


def _tools_of(agent: BaseAgent) -> Iterator[BaseTool | BaseToolset]:
    for entry in getattr(agent, "tools", None) or ():
        if isinstance(entry, BaseTool | BaseToolset):
            yield entry
        elif callable(entry):
            yield FunctionTool(entry)
    targets = _transfer_targets(agent)
    if targets:
        yield TransferToAgentTool(agent_names=[t.name for t in targets])


def _agents(root: BaseAgent) -> Iterator[BaseAgent]:
    """The root, its sub-agents and every agent behind an AgentTool, each once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(reversed(agent.sub_agents))
        stack.extend(
            t.agent for t in getattr(agent, "tools", None) or () if isinstance(t, AgentTool)
        )


def tool_findings(
    root: BaseAgent | App,
    *,
    bans: Iterable[Ban] = DEFAULT_BANS,
    allow_unchecked: Collection[str] = (),
) -> list[str]:
    """Every neutrality finding for the tools of ``root`` and all agents below it.

    Checks each tool's model-facing text against ``bans`` and its description's argument
    references against its declaration; a tool without a declaration, or a toolset (its
    tools are only known at run time), is a finding unless its name is in
    ``allow_unchecked``. Transfer targets' descriptions are checked too: ADK shows them
    to the model as part of ``transfer_to_agent``.

    Args:
        root: the root agent, or an ``App`` (its root agent is walked).
        bans: the banned phrases (default :data:`DEFAULT_BANS`).
        allow_unchecked: names of tools/toolsets that may go unchecked.

    Returns:
        One line per finding, ``agent/tool: message``; empty means clean.

    Raises:
        TypeError: when ``root`` is neither an agent nor an App with a root agent.
    """
    start = root.root_agent if isinstance(root, App) else root
    if not isinstance(start, BaseAgent):
        # A Workflow root holds its agents as graph nodes; pass those agents instead.
        raise TypeError(f"expected an agent or an App with a root agent, got {start!r:.80}")
    bans = tuple(bans)
    findings: list[str] = []
    for agent in _agents(start):
        for tool in _tools_of(agent):
            where = f"{agent.name}/{_name(tool)}"
            if isinstance(tool, BaseToolset):
                if _name(tool) not in allow_unchecked:
                    findings.append(f"{where}: toolset not checked (its tools load at run time)")
                continue
            findings += _check_tool(tool, where, bans, allow_unchecked)
            if isinstance(tool, TransferToAgentTool):
                findings += _check_targets(agent, where, bans)
    return findings


def _name(tool: Any) -> str:
    return str(getattr(tool, "name", None) or type(tool).__name__)


def _check_tool(
    tool: BaseTool, where: str, bans: tuple[Ban, ...], allow_unchecked: Collection[str]
) -> list[str]:
    text, declared = model_facing_text(tool)
    found = [f"{where}: banned phrase {v}" for v in ban_violations(text, bans)]
    if not declared and tool.name not in allow_unchecked:
        found.append(f"{where}: exposes no declaration; its argument schema was not checked")
    names, _ = undeclared_arg_refs(tool)
    found += [
        f"{where}: description refers to argument {n!r}, which the tool does not declare"
        for n in names
    ]
    return found


def _check_targets(agent: BaseAgent, where: str, bans: tuple[Ban, ...]) -> list[str]:
    return [
        f"{where}: description of transfer target {target.name!r}: banned phrase {v}"
        for target in _transfer_targets(agent)
        for v in ban_violations(target.description or "", bans)
    ]


def assert_tools_neutral(
    root: BaseAgent | App,
    *,
    bans: Iterable[Ban] = DEFAULT_BANS,
    allow_unchecked: Collection[str] = (),
) -> None:
    """Fail with every neutrality finding of the agent tree at once.

    Args:
        root: the root agent or an App; sub-agents and AgentTool agents are walked too.
        bans: the banned phrases (default :data:`DEFAULT_BANS`).
        allow_unchecked: names of tools/toolsets that may go unchecked.

    Raises:
        AssertionError: listing every finding, one per line.
    """
    findings = tool_findings(root, bans=bans, allow_unchecked=allow_unchecked)
    if findings:
        raise AssertionError(
            f"{len(findings)} model-facing tool finding(s):\n  " + "\n  ".join(findings)
        )
