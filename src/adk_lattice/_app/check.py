"""Declarations checked against the app: a name that names nothing real refuses every run.

A handler that names a tool no agent has, or an argument its tool does not take, would
never act: a misspelt ``consequential`` tool is never checked, a ``ToolResultCache`` for a
misspelt tool never serves. That is a silent no-op, so it fails closed instead. At the first
run of each root agent the lattice walks the tree (:mod:`.tree`) and compares what each
handler declares: its ``declared_names()`` (tool name -> argument names) and its scoping
(``tools=``, ``agents=``). Any mismatch refuses every run of that app with a reply and an
ERROR log line naming the handler, the unknown name and the nearest real one. The verdict
is kept per root agent, so later runs pay one dictionary lookup.
"""

from __future__ import annotations

import difflib
import logging
import weakref
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from google.genai import types

from .._handlers import handler_name
from .tree import AppTree, walk

logger = logging.getLogger("adk_lattice")

#: The ``code`` of a refusal for an unknown name (a tool denial's ``code``).
CODE: Final = "unknown_name"
_SHOWN: Final = 20


@dataclass(frozen=True, slots=True)
class Declared:
    """What one handler names: tools with the arguments it relies on, and agents."""

    handler: str
    tools: Mapping[str, frozenset[str]]
    agents: frozenset[str]
    problem: str | None = None


def _names(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset({value})
    return frozenset(v for v in value if isinstance(v, str))


def declarations(entries: Iterable[Any]) -> tuple[Declared, ...]:
    """What each decider names (its ``declared_names()`` and its scoping); none: left out."""
    out: list[Declared] = []
    for obj in entries:
        name = handler_name(obj)
        tools: dict[str, frozenset[str]] = {t: frozenset() for t in _names(obj_tools(obj))}
        problem = None
        method = getattr(obj, "declared_names", None)
        if callable(method):
            try:
                for tool, args in method().items():
                    tools[tool] = tools.get(tool, frozenset()) | frozenset(args)
            except Exception as exc:  # a declaration we cannot read cannot be trusted
                problem = f"{name}: declared_names() raised {type(exc).__name__}"
        agents = _names(getattr(obj, "agents", None))
        if tools or agents or problem:
            out.append(Declared(name, tools, agents, problem))
    return tuple(out)


def obj_tools(obj: Any) -> Any:
    """A handler's ``tools`` scoping (None when it is not a collection of names)."""
    tools = getattr(obj, "tools", None)
    return tools if isinstance(tools, str | Collection) else None


def _nearest(name: str, real: Iterable[str], what: str) -> str:
    choices = sorted(real)
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if close:
        return f"the nearest real name is {close[0]!r}"
    shown = ", ".join(choices[:_SHOWN]) + (", ..." if len(choices) > _SHOWN else "")
    return f"no real name is close; {what}: {shown or 'none'}"


def findings(declared: Iterable[Declared], tree: AppTree, dynamic: Collection[str]) -> list[str]:
    """Every declared name ``tree`` does not hold, each naming the handler and the nearest name.

    Args:
        declared: what the handlers name.
        tree: what the app holds.
        dynamic: tool names accepted unseen (tools a dynamic toolset adds at run time).
    """
    found: list[str] = []
    unlisted = f" (the tools of {', '.join(tree.unlisted)} could not be listed)"
    for d in declared:
        if d.problem:
            found.append(d.problem)
        for agent in sorted(d.agents - tree.agent_names):
            near = _nearest(agent, tree.agent_names, "the app's agents")
            found.append(f"{d.handler}: names the agent {agent!r}, which the app has not; {near}")
        for tool, args in sorted(d.tools.items()):
            if tool in dynamic:
                continue
            if tool not in tree.tools:
                near = _nearest(tool, tree.tools, "the app's tools")
                tail = unlisted if tree.unlisted else ""
                what = f"{d.handler}: names the tool {tool!r}, which no agent has"
                found.append(f"{what}; {near}{tail}")
                continue
            real = tree.tools[tool]
            if real is None:  # a tool that declares no readable arguments: nothing to check
                continue
            for arg in sorted(args - real):
                near = _nearest(arg, real, f"the arguments of {tool!r}")
                found.append(
                    f"{d.handler}: names the argument {arg!r} of {tool!r}, which that tool "
                    f"does not take; {near}"
                )
    return found


@dataclass(frozen=True, slots=True)
class NameRefusal:
    """An app whose declarations name nothing real: every run is refused with this reply.

    Attributes:
        root: the root agent's name.
        findings: each unknown name, with its handler and the nearest real name.
    """

    root: str
    findings: tuple[str, ...]
    code: ClassVar[str] = CODE

    def reply(self) -> types.Content:
        """The model-authored reply a refused run ends with (names only, no values)."""
        text = (
            "This request was refused: the app's safety configuration names tools or "
            "arguments this app does not have, so nothing runs until it is fixed: "
            + "; ".join(self.findings)
        )
        return types.Content(role="model", parts=[types.Part(text=text)])

    def log(self, when: str) -> None:
        """Log every finding at ERROR level, saying what happens to runs."""
        logger.error(
            "adk_lattice: %s: declarations name nothing in the app of root agent %s, so every "
            "run is refused. Fix each name (or list tools that appear only at run time in "
            "dynamic_tools=):\n  %s",
            when,
            self.root,
            "\n  ".join(self.findings),
        )


class DeclarationCheck:
    """Checks the declarations once per root agent and remembers the verdict."""

    def __init__(
        self, declared: tuple[Declared, ...], dynamic: Collection[str], max_agents: int = 4096
    ) -> None:
        self.declared = declared
        self.dynamic = frozenset(dynamic)
        self._verdicts: dict[int, tuple[weakref.ref[Any], NameRefusal | None]] = {}
        self._max = max_agents
        self._blind = False

    async def refusal(self, invocation_context: Any) -> NameRefusal | None:
        """The refusal for this run's app, or None; the tree is walked on its first run only.

        A nested ``AgentTool`` run's root was part of a tree already checked: it shares
        that tree's verdict, as its declarations name the whole app's tools.
        """
        if not self.declared:
            return None
        agent = getattr(invocation_context, "agent", None)
        root = getattr(agent, "root_agent", None) or agent
        if root is None:
            if not self._blind:
                self._blind = True
                logger.warning(
                    "adk_lattice: this run has no root agent (a Workflow?): the names the "
                    "handlers declare cannot be checked against it"
                )
            return None
        hit = self._verdicts.get(id(root))
        if hit is not None and hit[0]() is root:
            return hit[1]
        from google.adk.agents.readonly_context import ReadonlyContext

        tree = await walk(root, ReadonlyContext(invocation_context))
        found = findings(self.declared, tree, self.dynamic)
        verdict = NameRefusal(str(root.name), tuple(found)) if found else None
        if verdict is not None and tree.unlisted:
            return verdict  # a toolset may list its tools next time: check again then
        if len(self._verdicts) + len(tree.agents) > self._max:
            self._verdicts.clear()  # bounded: a forgotten app is walked again
        for member in tree.agents:
            self._verdicts[id(member)] = (weakref.ref(member), verdict)
        return verdict

    async def check(self, root: Any) -> tuple[str, ...]:
        """The findings for ``root``'s tree, walked now (toolsets listed without a context)."""
        return tuple(findings(self.declared, await walk(root), self.dynamic))
