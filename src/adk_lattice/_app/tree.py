"""What an app really holds: every agent of a root's tree, each tool and its arguments.

The walk follows what ADK runs: an agent's ``sub_agents`` (Sequential, Parallel, Loop and
transfer targets), the agent an ``AgentTool`` runs, and each ``LlmAgent``'s ``tools``: a
``BaseTool`` as it is, a plain function as the ``FunctionTool`` ADK wraps it in, and a
toolset (MCP, OpenAPI, ...) through ``get_tools_with_prefix``, the call ADK itself makes
before each model call. A tool's arguments are the top-level properties of the declaration
ADK builds for the model; a tool that builds none (a built-in server-side tool) has
arguments nobody can check, and is listed with ``None``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

logger = logging.getLogger("adk_lattice")

#: Tools ADK's flows add to an agent's request themselves (never in ``tools``).
FLOW_TOOLS: Final = frozenset({"transfer_to_agent", "set_model_response"})
#: How long one toolset may take to list its tools at the check.
LIST_TIMEOUT: Final = 10.0


@dataclass(slots=True)
class AppTree:
    """The names an app's tree holds.

    Attributes:
        agents: the agents, in walk order (objects, for the per-agent cache).
        agent_names: every agent's name.
        tools: tool name -> its argument names (None: it declares none we can read).
        unlisted: the toolsets whose tools could not be listed, as ``agent: Toolset``.
    """

    agents: list[Any] = field(default_factory=list)
    agent_names: set[str] = field(default_factory=set)
    tools: dict[str, frozenset[str] | None] = field(default_factory=dict)
    unlisted: list[str] = field(default_factory=list)


def parameters(tool: Any) -> frozenset[str] | None:
    """The top-level argument names a tool declares to the model, or None when unknown."""
    try:
        declaration = tool._get_declaration()
    except Exception:  # a tool that cannot describe itself: its arguments cannot be checked
        return None
    if declaration is None:
        return None
    schema: Any = declaration.parameters_json_schema
    if schema is None and declaration.parameters is not None:
        schema = declaration.parameters.model_dump(exclude_none=True)
    if schema is None:
        return frozenset()  # a declaration without parameters: the tool takes none
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return frozenset()
    return frozenset(k for k in props if isinstance(k, str))


def _add(tree: AppTree, tool: Any) -> None:
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not name:
        return
    args = parameters(tool)
    known = tree.tools.get(name, frozenset())
    # One name in two agents (two tools sharing a name): a declared argument of either counts.
    tree.tools[name] = None if args is None or known is None else known | args


async def _listed(toolset: Any, context: Any) -> list[Any]:
    return list(await asyncio.wait_for(toolset.get_tools_with_prefix(context), LIST_TIMEOUT))


async def walk(root: Any, context: Any = None) -> AppTree:
    """Every agent, tool and argument name of ``root``'s tree.

    Args:
        root: the root agent.
        context: a ``ReadonlyContext`` for toolsets that list their tools per context
            (None at a check made outside a run).

    Returns:
        The tree's names; a toolset that raised or took longer than ``LIST_TIMEOUT`` is
        named in ``unlisted`` (its tools are unknown).
    """
    from google.adk.tools.agent_tool import AgentTool
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.base_toolset import BaseToolset
    from google.adk.tools.function_tool import FunctionTool

    tree = AppTree()
    seen: set[int] = set()
    queue: deque[Any] = deque([root])
    while queue:
        agent = queue.popleft()
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        tree.agents.append(agent)
        tree.agent_names.add(str(getattr(agent, "name", "")))
        queue.extend(getattr(agent, "sub_agents", None) or ())
        for entry in getattr(agent, "tools", None) or ():
            if isinstance(entry, BaseToolset):
                try:
                    tools = await _listed(entry, context)
                except Exception as exc:
                    tree.unlisted.append(f"{agent.name}: {type(entry).__name__}")
                    logger.warning(
                        "adk_lattice: the tools of %s (agent %s) could not be listed (%s)",
                        type(entry).__name__,
                        agent.name,
                        type(exc).__name__,
                    )
                    continue
            elif isinstance(entry, BaseTool):
                tools = [entry]
            elif callable(entry):
                tools = [FunctionTool(func=entry)]
            else:
                continue
            for tool in tools:
                _add(tree, tool)
                if isinstance(tool, AgentTool):
                    queue.append(tool.agent)
    for name in FLOW_TOOLS:
        tree.tools.setdefault(name, None)
    return tree
