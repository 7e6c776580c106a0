"""Real Runners, apps and small handlers shared by the telemetry tests."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.genai import types
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from adk_lattice import Lattice
from adk_lattice.telemetry import note
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
PII = "jane.doe@example.com"


class OpenSpans(SpanProcessor):
    """Tracks every span started and ended, to prove none is left open."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        self.open.pop(span.context.span_id, None)


@dataclass
class Result:
    """What a run produced: events, the error it raised, and its runner."""

    events: list[Any] = field(default_factory=list)
    error: BaseException | None = None


async def run(
    root: LlmAgent,
    lattice: Lattice,
    text: str = "hello",
    *,
    user_id: str = "u1",
    run_config: RunConfig | None = None,
) -> Result:
    """Run one turn through a real Runner; an error the run raises is kept, not raised."""
    app = App(name="app", root_agent=root, plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id=user_id)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    result = Result()
    try:
        async for event in runner.run_async(
            user_id=user_id, session_id=session.id, new_message=message, run_config=run_config
        ):
            result.events.append(event)
    except Exception as exc:
        result.error = exc
    await runner.close()
    return result


async def run_cancelled(root: LlmAgent, lattice: Lattice, started: asyncio.Event) -> None:
    """Start a run, cancel it once ``started`` is set (tools in flight), and let it unwind."""
    app = App(name="app", root_agent=root, plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u1")
    message = types.Content(role="user", parts=[types.Part(text="go")])

    async def drive() -> None:
        async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
            pass

    task = asyncio.create_task(drive())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    for _ in range(5):  # the lattice closes a cancelled run in a task of its own
        await asyncio.sleep(0)
    await asyncio.sleep(0.01)
    await runner.close()


def lookup(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id, "amount": 12.5}


def refund(charge_id: str) -> dict[str, Any]:
    """Refund a charge."""
    return {"refunded": charge_id}


def broken(charge_id: str) -> dict[str, Any]:
    """A tool that always fails."""
    raise ValueError("ledger offline")


def agent(name: str, *turns: ScriptedResponse, **kwargs: Any) -> LlmAgent:
    """An LlmAgent on a FakeModel with the given script."""
    return LlmAgent(name=name, model=FakeModel(list(turns)), **kwargs)


def parallel(*names: str) -> ScriptedResponse:
    """A model turn asking for several tool calls at once."""
    return ScriptedResponse(
        function_calls=[FunctionCall(n, {"charge_id": f"c{i}"}) for i, n in enumerate(names)]
    )


def multi_agent_app() -> LlmAgent:
    """A coordinator: parallel tools, an AgentTool helper, then a transfer to a specialist."""
    helper = agent("helper", ScriptedResponse.text("helper says hi", input_tokens=3))
    refunds = agent("refunds", ScriptedResponse.text("Refund done.", input_tokens=7))
    return agent(
        "coordinator",
        parallel("lookup", "refund"),
        ScriptedResponse.call("helper", request="summarise"),
        ScriptedResponse.call("transfer_to_agent", agent_name="refunds"),
        tools=[lookup, refund, AgentTool(helper)],
        sub_agents=[refunds],
    )


class DenyRefunds:
    """A policy handler denying the refund tool, noting its reason."""

    name = "DenyRefunds"

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
        if tool.name != "refund":
            return None
        note(tool_context, "deny", handler=self.name, reason="role")
        return {"status": "denied", "reason": "refunds need a supervisor", "policy": self.name}


class BlockAgent:
    """A policy handler blocking one agent in before_agent."""

    name = "BlockAgent"

    def __init__(self, blocked: str) -> None:
        self.blocked = blocked

    def before_agent(self, *, agent: Any, callback_context: Any) -> Any:
        if agent.name != self.blocked:
            return None
        return types.Content(role="model", parts=[types.Part(text="Account inactive.")])


class Redact:
    """A stand-in output policy: redacts e-mail addresses in model text, in place."""

    name = "Redact"

    def after_model(self, *, callback_context: Any, llm_response: LlmResponse) -> None:
        parts = llm_response.content.parts if llm_response.content else None
        hit = False
        for part in parts or ():
            if part.text and EMAIL.search(part.text):
                part.text, hit = EMAIL.sub("[email]", part.text), True
        if hit:
            note(callback_context, "redact", handler=self.name, reason="email")


class ServeFromCache:
    """A cache stand-in: serves every model call of one agent, marking the hit."""

    name = "ServeFromCache"

    def __init__(self, agent_name: str) -> None:
        self.agent_name = agent_name

    def before_model(self, *, callback_context: Any, llm_request: Any) -> Any:
        if callback_context.agent_name != self.agent_name:
            return None
        part = types.Part(text="from the cache")
        meta = {"adk_lattice": {"cache": "hit"}}
        return LlmResponse(content=types.Content(role="model", parts=[part]), custom_metadata=meta)


class Raises:
    """A handler that fails on before_model."""

    name = "Raises"

    def before_model(self, *, callback_context: Any, llm_request: Any) -> Any:
        raise RuntimeError("bug in handler")


class KeepOutcomes:
    """An observer keeping every outcome it sees (and so every hook context)."""

    name = "KeepOutcomes"

    def __init__(self) -> None:
        self.outcomes: list[Any] = []

    def observe(self, outcome: Any) -> None:
        self.outcomes.append(outcome)


def meter() -> tuple[MeterProvider, InMemoryMetricReader]:
    """A private meter provider with an in-memory reader."""
    reader = InMemoryMetricReader()
    return MeterProvider(metric_readers=[reader]), reader


def points(reader: InMemoryMetricReader, name: str) -> list[tuple[dict[str, Any], Any]]:
    """(attributes, value) of every data point of one metric (sum, or histogram count)."""
    data = reader.get_metrics_data()
    found: list[tuple[dict[str, Any], Any]] = []
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == name:
                    for p in m.data.data_points:
                        found.append((dict(p.attributes or {}), getattr(p, "value", None) or p))
    return found


def all_strings(spans: Iterable[ReadableSpan]) -> str:
    """Every name, attribute and event value of the spans, joined (to search for leaks)."""
    out: list[str] = []

    def add(attrs: Mapping[str, Any] | None) -> None:
        for k, v in (attrs or {}).items():
            out.append(f"{k}={v}")

    for s in spans:
        out.append(s.name)
        add(s.attributes)
        for e in s.events:
            out.append(e.name)
            add(e.attributes)
    return "\n".join(out)
