"""Concurrency soak: many sessions of many users at once through one Lattice and one cache.

Every session runs its turns concurrently with all the others on one Runner, one
``Lattice`` and one cache store (memory, or Redis with ``--redis``). The turns mix
parallel tool calls, SSE streaming, a transfer to a sub-agent and an ``AgentTool`` call,
and a seeded share of sessions gets a handler that raises on one hook in one tier. The
questions are the same for every user, and every answer and tool result names the user it
was made for, so an answer served from another user's cache entry shows up as a foreign
user id in a session's events.

Checked at the end (exit status 1 when one fails): every turn completed; no foreign user id
in any session; one audit record per invocation (nested AgentTool runs included); no span
left open; ``lattice.open_invocations == 0``.

    PYTHONPATH=src python benchmarks/soak.py                     # 500 sessions, 50 users, twice
    PYTHONPATH=src python benchmarks/soak.py --redis             # a private redis-server
    PYTHONPATH=src python benchmarks/soak.py --redis redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import json
import logging
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import ToolContext
from google.adk.tools.agent_tool import AgentTool
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from adk_lattice import Lattice, Outcome
from adk_lattice.cache import MemoryStore, ResponseCache, ToolResultCache
from adk_lattice.stores import Store
from adk_lattice.telemetry import AuditLog, Telemetry
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse

KINDS = ("text", "tools", "agenttool", "transfer")
TIERS = ("policy", "handlers", "telemetry")
FAULT_HOOKS = ("before_agent", "before_model", "after_model", "before_tool", "after_tool")
USER_ID = re.compile(r"usr\d{3}")

#: The session's user, for the model to name in its answers (a request holds no user id).
_USER: contextvars.ContextVar[str] = contextvars.ContextVar("soak_user")
#: The session's injected fault: (tier, hook), or None.
_FAULT: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "soak_fault", default=None
)


# -- the app -----------------------------------------------------------------------------------


class RoutedModel(FakeModel):  # type: ignore[misc]
    """A FakeModel answering by its role and the request, naming the session's user."""

    role: str = "front"

    async def generate_content_async(  # type: ignore[override]
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = _route(self.role, llm_request, _USER.get())
        async for response in FakeModel([turn]).generate_content_async(llm_request, stream):
            yield response


def _chunks(text: str) -> tuple[str, ...]:
    return tuple(text[i : i + 7] for i in range(0, len(text), 7))


def _route(role: str, request: LlmRequest, user: str) -> ScriptedResponse:
    last = request.contents[-1] if request.contents else None
    parts = last.parts or [] if last else []
    if role == "research":
        return ScriptedResponse(text_chunks=_chunks(f"Research notes for {user}."))
    if role == "billing":
        return ScriptedResponse(text_chunks=_chunks(f"Billing is settled for {user}."))
    if any(p.function_response for p in parts):
        return ScriptedResponse(text_chunks=_chunks(f"All done for {user}."))
    text = "".join(p.text or "" for p in parts)
    kind = text.rsplit(" ", 1)[-1]
    if kind == "tools":  # two calls in one response: ADK runs them in parallel
        calls = [FunctionCall("lookup_order", {"order_id": str(i)}) for i in (1, 2)]
        return ScriptedResponse(function_calls=calls)
    if kind == "agenttool":
        return ScriptedResponse.call("researcher", request="Summarise the account.")
    if kind == "transfer":
        return ScriptedResponse.call("transfer_to_agent", agent_name="billing")
    return ScriptedResponse(text_chunks=_chunks(f"Your balance, {user}, is 42 EUR."))


async def lookup_order(order_id: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look an order up."""
    await asyncio.sleep(0.001)
    return {"order_id": order_id, "owner": tool_context.user_id, "status": "shipped"}


def build_agent() -> LlmAgent:
    """The front agent: tools, an AgentTool researcher and a billing sub-agent."""
    researcher = LlmAgent(name="researcher", model=RoutedModel(role="research"))
    billing = LlmAgent(name="billing", model=RoutedModel(role="billing"))
    return LlmAgent(
        name="front",
        model=RoutedModel(role="front"),
        tools=[lookup_order, AgentTool(researcher)],
        sub_agents=[billing],
    )


# -- injected faults and counters ------------------------------------------------------------


def _maybe_raise(tier: str, hook: str) -> None:
    if _FAULT.get() == (tier, hook):
        raise RuntimeError(f"injected fault: {tier} {hook}")


class _Faulty:
    """A handler raising on the hook its session's plan names, in its tier."""

    def __init__(self, tier: str) -> None:
        self.name = f"faulty_{tier}"
        self.tier = tier

    def before_agent(self, **_: Any) -> None:
        _maybe_raise(self.tier, "before_agent")

    def before_model(self, **_: Any) -> None:
        _maybe_raise(self.tier, "before_model")

    def after_model(self, **_: Any) -> None:
        _maybe_raise(self.tier, "after_model")

    def before_tool(self, **_: Any) -> None:
        _maybe_raise(self.tier, "before_tool")

    def after_tool(self, **_: Any) -> None:
        _maybe_raise(self.tier, "after_tool")


class _FaultyObserver:
    """An observer raising on the hook its session's plan names."""

    name = "faulty_telemetry"

    def observe(self, outcome: Outcome) -> None:
        _maybe_raise("telemetry", outcome.hook)


class _Invocations:
    """Counts the invocations the lattice saw (nested AgentTool runs included)."""

    name = "invocations"

    def __init__(self) -> None:
        self.ids: set[str] = set()

    def observe(self, outcome: Outcome) -> None:
        if outcome.invocation_id:
            self.ids.add(outcome.invocation_id)


class OpenSpans(SpanProcessor):
    """Counts spans started and not yet ended."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}
        self.ended = 0
        self.active = True

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        if self.active:
            self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and self.open.pop(span.context.span_id, None):
            self.ended += 1


def track_spans() -> OpenSpans:
    """Attach a span tracker to the global SDK tracer provider (installed if none is)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        raise RuntimeError("the global tracer provider is not an OpenTelemetry SDK provider")
    tracker = OpenSpans()
    provider.add_span_processor(tracker)
    return tracker


def rss_mib() -> float:
    """This process's resident set size, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- the run -----------------------------------------------------------------------------------


@dataclass
class Report:
    """What a soak did, and the invariants it checks."""

    sessions: int
    users: int
    turns: int = 0
    completed: int = 0
    failed: list[str] = field(default_factory=list)
    cross_user: int = 0
    faulty_sessions: int = 0
    handler_errors: int = 0
    response_hits: int = 0
    tool_hits: int = 0
    audit_records: int = 0
    invocations: int = 0
    audit_duplicates: int = 0
    spans_ended: int = 0
    spans_open: int = 0
    open_invocations: int = 0
    rss_before: float = 0.0
    rss_after: float = 0.0
    seconds: float = 0.0
    store: str = "memory"

    def broken(self) -> list[str]:
        """The invariants that failed, in words (empty when all hold)."""
        checks = {
            "every turn completed": self.completed == self.turns,
            "no cross-user answer": self.cross_user == 0,
            "one audit record per invocation": self.audit_records == self.invocations
            and self.audit_duplicates == 0,
            "no span left open": self.spans_open == 0,
            "no per-call record left": self.open_invocations == 0,
        }
        return [name for name, ok in checks.items() if not ok]

    def table(self) -> str:
        """The report as a markdown table."""
        rows = [
            ("sessions / users / store", f"{self.sessions} / {self.users} / {self.store}"),
            ("turns completed / run", f"{self.completed} / {self.turns}"),
            ("sessions with an injected fault", self.faulty_sessions),
            ("handler errors counted by the lattice", self.handler_errors),
            ("cache hits (response / tool)", f"{self.response_hits} / {self.tool_hits}"),
            ("cross-user answers", self.cross_user),
            ("audit records / invocations", f"{self.audit_records} / {self.invocations}"),
            ("spans ended / left open", f"{self.spans_ended} / {self.spans_open}"),
            ("lattice.open_invocations", self.open_invocations),
            (
                "RSS before / after, sessions freed (MiB)",
                f"{self.rss_before:.1f} / {self.rss_after:.1f}",
            ),
            ("wall time (s)", f"{self.seconds:.1f}"),
        ]
        lines = ["| measure | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in rows]
        return "\n".join(lines)


def _foreign(events: list[Any], user: str) -> int:
    """How many events mention a user other than ``user`` (an answer made for someone else)."""
    count = 0
    for event in events:
        if event.content is None:
            continue
        text = json.dumps(event.content.model_dump(mode="json", exclude_none=True))
        if any(found != user for found in USER_ID.findall(text)):
            count += 1
    return count


async def soak(
    sessions: int = 500,
    users: int = 50,
    *,
    turns: int = 2,
    seed: int = 8,
    fault_share: float = 0.2,
    store: Store | None = None,
) -> Report:
    """Run the soak and return its report.

    Args:
        sessions: concurrent sessions.
        users: users the sessions are spread over.
        turns: turns per session, one after the other within it.
        seed: seeds the kinds of turn, streaming and injected faults.
        fault_share: share of sessions whose plan injects one handler fault.
        store: the cache store (default: a new MemoryStore).
    """
    rng = random.Random(seed)
    store = store if store is not None else MemoryStore(max_entries=100_000)
    report = Report(sessions=sessions, users=users, store=store.name)
    spans = track_spans()
    responses, tools = ResponseCache(store), ToolResultCache(store, tools=["lookup_order"])
    invocations = _Invocations()
    records: list[str] = []
    lattice = Lattice(
        policy=[_Faulty("policy")],
        cache=[responses, tools],
        handlers=[_Faulty("handlers")],
        telemetry=[
            invocations,
            _FaultyObserver(),
            Telemetry(),
            AuditLog(lambda record: records.append(record["invocation_id"])),
        ],
    )
    app = App(name="soak", root_agent=build_agent(), plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    plans = []
    for n in range(sessions):
        faulty = rng.random() < fault_share
        fault = (rng.choice(TIERS), rng.choice(FAULT_HOOKS)) if faulty else None
        kinds = [rng.choice(KINDS) for _ in range(turns)]
        plans.append((f"usr{n % users:03d}", kinds, rng.random() < 0.5, fault))
    report.faulty_sessions = sum(1 for p in plans if p[3] is not None)
    session_ids: list[tuple[str, str]] = []

    async def session(user: str, kinds: list[str], sse: bool, fault: Any) -> None:
        _USER.set(user)
        _FAULT.set(fault)
        created = await runner.session_service.create_session(app_name="soak", user_id=user)
        session_ids.append((user, created.id))
        mode = StreamingMode.SSE if sse else StreamingMode.NONE
        for kind in kinds:
            report.turns += 1
            message = types.Content(role="user", parts=[types.Part(text=f"Please do {kind}")])
            events: list[Any] = []
            try:
                async for event in runner.run_async(
                    user_id=user,
                    session_id=created.id,
                    new_message=message,
                    run_config=RunConfig(streaming_mode=mode),
                ):
                    events.append(event)
            except Exception as exc:
                report.failed.append(f"{user} {kind} {fault}: {type(exc).__name__}: {exc}")
                continue
            report.completed += 1
            report.cross_user += _foreign(events, user)

    gc.collect()
    report.rss_before = rss_mib()
    start = time.perf_counter()
    await asyncio.gather(*(session(*plan) for plan in plans))
    report.seconds = time.perf_counter() - start
    # Free the sessions (the app's data, not the lattice's), so RSS after shows what stays.
    for user, sid in session_ids:
        await runner.session_service.delete_session(app_name="soak", user_id=user, session_id=sid)
    await runner.close()
    spans.active = False
    gc.collect()
    report.rss_after = rss_mib()
    report.response_hits = responses.stats.get("hits", 0)
    report.tool_hits = tools.stats.get("hits", 0)
    report.handler_errors = sum(
        n for (event, _, _), n in lattice.stats.items() if event != "rejected"
    )
    report.audit_records = len(records)
    report.audit_duplicates = len(records) - len(set(records))
    report.invocations = len(invocations.ids)
    report.spans_ended, report.spans_open = spans.ended, len(spans.open)
    report.open_invocations = lattice.open_invocations
    return report


# -- the command line ------------------------------------------------------------------------


@contextmanager
def _redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("--redis without a URL needs redis-server on PATH")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _main(args: argparse.Namespace, redis_url: str | None) -> int:
    broken: list[str] = []
    rss: list[str] = []
    for _ in range(args.rounds):
        store: Store | None = None
        if redis_url is not None:
            from adk_lattice.cache import RedisStore

            store = RedisStore(redis_url, namespace=f"soak{time.time_ns()}")
        report = await soak(
            args.sessions, args.users, turns=args.turns, seed=args.seed, store=store
        )
        if store is not None:
            await store.close()
        print(report.table(), end="\n\n")
        for failure in report.failed[:10]:
            print("failed:", failure)
        broken += report.broken()
        rss.append(f"{report.rss_after:.1f}")
    print("RSS after each round (MiB):", " -> ".join(rss))
    print("invariants:", "all hold" if not broken else "BROKEN: " + "; ".join(broken))
    return 1 if broken else 0


def main() -> None:
    """Parse the command line, run the soak, print the table, exit 1 on a broken invariant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--turns", type=int, default=2, help="turns per session")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument(
        "--rounds", type=int, default=2, help="soaks in a row (RSS growth across them is retention)"
    )
    parser.add_argument(
        "--redis",
        nargs="?",
        const="",
        default=None,
        metavar="URL",
        help="use Redis as the cache store (no URL: start a private redis-server)",
    )
    args = parser.parse_args()
    # Injected faults are logged by the lattice, one traceback each: keep the table readable.
    logging.disable(logging.ERROR)
    if args.redis == "":
        with _redis_server() as url:
            sys.exit(asyncio.run(_main(args, url)))
    sys.exit(asyncio.run(_main(args, args.redis)))


if __name__ == "__main__":
    main()
