"""A plain recording ADK plugin and a run helper for pinning ADK's plugin behaviour."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk import version as adk_version
from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

#: The installed google-adk release as (major, minor): the facts below differ across releases
#: where a test says so (`make test-compat` runs them on the oldest and newest supported).
_MAJOR, _MINOR = adk_version.__version__.split(".")[:2]
ADK_VERSION = (int(_MAJOR), int(_MINOR))

HOOKS = (
    "on_user_message",
    "before_run",
    "on_event",
    "after_run",
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
    "on_agent_error",
    "on_run_error",
)


@dataclass(frozen=True)
class Rec:
    """One plugin hook call: its hook name, the agent it ran for, and its kwargs."""

    hook: str
    agent: str | None
    invocation_id: str
    kwargs: Mapping[str, Any]


def _identity(kwargs: Mapping[str, Any]) -> tuple[str | None, str]:
    if "invocation_context" in kwargs:
        ic = kwargs["invocation_context"]
        return (ic.agent.name if ic.agent else None), ic.invocation_id
    ctx = kwargs.get("callback_context") or kwargs.get("tool_context")
    return ctx.agent_name, ctx.invocation_id


class Recorder(BasePlugin):
    """Records every hook call; answers per hook with a value or a callable of the kwargs."""

    def __init__(
        self,
        name: str = "recorder",
        *,
        returns: Mapping[str, Any] | None = None,
        raises: Mapping[str, BaseException] | None = None,
    ) -> None:
        super().__init__(name=name)
        self.records: list[Rec] = []
        self._returns = dict(returns or {})
        self._raises = dict(raises or {})

    def _hit(self, hook: str, kwargs: dict[str, Any]) -> Any:
        agent, invocation_id = _identity(kwargs)
        self.records.append(Rec(hook, agent, invocation_id, kwargs))
        if hook in self._raises:
            raise self._raises[hook]
        value = self._returns.get(hook)
        return value(**kwargs) if callable(value) else value

    def hooks(self, *, skip: Sequence[str] = ()) -> list[str]:
        """Hook names in call order, leaving out the hooks in ``skip``."""
        return [r.hook for r in self.records if r.hook not in skip]

    def of(self, hook: str) -> list[Rec]:
        """The records of one hook."""
        return [r for r in self.records if r.hook == hook]

    async def on_user_message_callback(self, **kw: Any) -> Any:
        return self._hit("on_user_message", kw)

    async def before_run_callback(self, **kw: Any) -> Any:
        return self._hit("before_run", kw)

    async def on_event_callback(self, **kw: Any) -> Any:
        return self._hit("on_event", kw)

    async def after_run_callback(self, **kw: Any) -> Any:
        return self._hit("after_run", kw)

    async def before_agent_callback(self, **kw: Any) -> Any:
        return self._hit("before_agent", kw)

    async def after_agent_callback(self, **kw: Any) -> Any:
        return self._hit("after_agent", kw)

    async def before_model_callback(self, **kw: Any) -> Any:
        return self._hit("before_model", kw)

    async def after_model_callback(self, **kw: Any) -> Any:
        return self._hit("after_model", kw)

    async def on_model_error_callback(self, **kw: Any) -> Any:
        return self._hit("on_model_error", kw)

    async def before_tool_callback(self, **kw: Any) -> Any:
        return self._hit("before_tool", kw)

    async def after_tool_callback(self, **kw: Any) -> Any:
        return self._hit("after_tool", kw)

    async def on_tool_error_callback(self, **kw: Any) -> Any:
        return self._hit("on_tool_error", kw)

    async def on_agent_error_callback(self, **kw: Any) -> Any:
        return self._hit("on_agent_error", kw)

    async def on_run_error_callback(self, **kw: Any) -> Any:
        return self._hit("on_run_error", kw)


def make_runner(root: BaseAgent, *plugins: BasePlugin) -> tuple[Runner, InMemorySessionService]:
    """A real Runner for ``root`` with ``plugins`` registered on its App."""
    service = InMemorySessionService()
    app = App(name="contract", root_agent=root, plugins=list(plugins))
    return Runner(app=app, session_service=service), service


def message(text: str) -> types.Content:
    """A user message."""
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(
    root: BaseAgent,
    *plugins: BasePlugin,
    text: str = "hi",
    run_config: RunConfig | None = None,
    on_runner: Callable[[Runner, InMemorySessionService], None] | None = None,
) -> list[Event]:
    """Run one turn on a fresh session and return every event the runner yielded."""
    runner, service = make_runner(root, *plugins)
    session = await service.create_session(app_name="contract", user_id="u")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=message(text), run_config=run_config
        )
    ]
    if on_runner is not None:
        on_runner(runner, service)
    return events


def event_texts(events: Sequence[Event]) -> list[str]:
    """Every text part of every event, in order."""
    return [p.text for e in events if e.content for p in e.content.parts or () if p.text]
