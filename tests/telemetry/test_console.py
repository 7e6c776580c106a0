"""``enable_tracing("console")``: one readable span tree per run; raw JSON behind an option."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from adk_lattice.telemetry import SpanTreeExporter

SRC = Path(__file__).resolve().parents[2] / "src"

TWO_TURNS = """
    import asyncio, sys
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types
    from adk_lattice import Lattice
    from adk_lattice.policy import CallLimits, RedactPII
    from adk_lattice.telemetry import enable_tracing
    from adk_lattice.testing import FakeModel, ScriptedResponse

    handle = enable_tracing(sys.argv[1])

    def lookup(charge_id: str) -> dict:
        "Look up a charge."
        return {"charge_id": charge_id}

    async def main():
        model = FakeModel([ScriptedResponse.call("lookup", charge_id="c1"),
                           ScriptedResponse.text("It is 12 EUR; ask jane@example.com."),
                           ScriptedResponse.text("Bye.")])
        agent = LlmAgent(name="billing", model=model, tools=[lookup])
        lattice = Lattice(policy=[CallLimits(max_tool_calls=0), RedactPII()])
        runner = Runner(app=App(name="shop", root_agent=agent, plugins=[lattice]),
                        session_service=InMemorySessionService())
        session = await runner.session_service.create_session(app_name="shop", user_id="u1")
        for text in ("What is c1?", "Thanks"):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(user_id="u1", session_id=session.id,
                                            new_message=message):
                pass
        await runner.close()

    asyncio.run(main())
    handle.shutdown()
"""


def _run(exporter: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(SRC)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TWO_TURNS), exporter],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_console_tracing_prints_one_tree_per_run_with_the_decisions() -> None:
    """Two turns print two short span trees, the tool denial under its span, no JSON."""
    out = _run("console")
    trees = [t for t in out.split("\n\n") if t.strip()]
    assert len(trees) == 2
    assert all(t.startswith("invoke_workflow billing") for t in trees)
    assert "· before_tool  CallLimits:deny  (tool_call_limit)" in trees[0]
    assert "{" not in out
    assert len(out.splitlines()) < 40


def test_console_tree_puts_the_model_answer_decision_under_its_model_call() -> None:
    """The console prints the redaction of a model answer under that call, allows left off."""
    lines = _run("console").split("\n\n")[0].splitlines()
    at = lines.index("      · after_model  RedactPII:redact  (email)")
    assert lines[at - 1].startswith("    generate_content fake-model")
    assert all(":allow" not in line for line in lines)


def test_raw_json_is_behind_console_json() -> None:
    """``enable_tracing("console_json")`` prints OpenTelemetry's raw JSON spans."""
    out = _run("console_json")
    assert '"trace_id"' in out
    assert len(out.splitlines()) > 200


def _spans(*names: str) -> tuple[TracerProvider, io.StringIO, SpanTreeExporter]:
    out = io.StringIO()
    exporter = SpanTreeExporter(out, durations=False, max_traces=1)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, out, exporter


def test_a_trace_is_printed_once_when_its_root_span_ends() -> None:
    """Children wait for their root; the tree prints when the root ends."""
    provider, out, _ = _spans()
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("root"):
        with tracer.start_as_current_span("child"):
            pass
        assert out.getvalue() == ""
    assert out.getvalue() == "root\n  child\n\n"


def test_traces_past_the_bound_are_printed_as_incomplete() -> None:
    """Past ``max_traces`` held traces, the oldest prints at once, marked incomplete."""
    from opentelemetry import trace

    provider, out, exporter = _spans()
    tracer = provider.get_tracer("t")
    roots = [tracer.start_span(f"root-{i}") for i in (1, 2)]
    for root in roots:  # a child ends under each root; the roots stay open
        tracer.start_span("child", context=trace.set_span_in_context(root)).end()
    assert out.getvalue() == "(incomplete: the run's root span has not ended)\nchild\n\n"
    exporter.shutdown()
    assert out.getvalue().count("(incomplete") == 2
