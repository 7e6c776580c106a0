"""What the lattice cannot see: agents run by ``AgentTool(include_plugins=False)``.

Such a tool runs its agent in a Runner of its own without the parent's plugins, so no
policy, cache or telemetry handler of the lattice sees that agent's model or tool calls.
The lattice cannot change that; it says so once, at the first run of each app.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

logger = logging.getLogger("adk_lattice")


def unguarded_agents(root: Any) -> list[str]:
    """The agents in ``root``'s tree that an ``AgentTool(include_plugins=False)`` runs."""
    from google.adk.tools.agent_tool import AgentTool

    found: list[str] = []
    seen: set[int] = set()
    queue: deque[Any] = deque([root])
    while queue:
        agent = queue.popleft()
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        queue.extend(getattr(agent, "sub_agents", None) or ())
        for tool in getattr(agent, "tools", None) or ():
            if isinstance(tool, AgentTool):
                if not tool.include_plugins:
                    found.append(str(tool.agent.name))
                queue.append(tool.agent)
    return found


class CoverageCheck:
    """Warns once per root agent about the agents the lattice will never see."""

    def __init__(self, max_roots: int = 256) -> None:
        self._checked: set[int] = set()
        self._max = max_roots

    def check(self, invocation_context: Any) -> None:
        """Look at the tree of this run's root agent, the first time it is seen."""
        agent = getattr(invocation_context, "agent", None)
        root = getattr(agent, "root_agent", None) or agent
        if root is None or id(root) in self._checked or len(self._checked) >= self._max:
            return
        self._checked.add(id(root))
        try:
            hidden = unguarded_agents(root)
        except Exception:  # a tree we cannot walk is not worth failing a run over
            return
        if hidden:
            logger.warning(
                "adk_lattice: agent(s) %s run through AgentTool(include_plugins=False): no "
                "policy, cache or telemetry of this lattice sees their model or tool calls; "
                "use include_plugins=True (the default) to guard them",
                ", ".join(sorted(set(hidden))),
            )
