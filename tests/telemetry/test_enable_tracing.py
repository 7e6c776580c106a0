"""enable_tracing(): providers, exporters, OTLP end to end against a loopback receiver."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _otlp_receiver import otlp_grpc_receiver, otlp_http_receiver
from _telemetry_support import PII, DenyRefunds, agent, lookup, parallel, refund, run
from opentelemetry import trace

from adk_lattice import Lattice
from adk_lattice.telemetry import Telemetry, TracingHandle, enable_tracing
from adk_lattice.telemetry._tracing import ADK_CONTENT_ENV
from adk_lattice.testing import ScriptedResponse

SRC = Path(__file__).resolve().parents[2] / "src"


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter (its global providers are still unset)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environ.pop(ADK_CONTENT_ENV, None)
    environ |= {"PYTHONPATH": str(SRC), **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


async def test_an_existing_sdk_provider_is_kept_and_gets_the_exporter(
    tracing: TracingHandle, exporter, metrics
) -> None:
    """With a provider already set, it stays global and receives this call's exporter too."""
    before = trace.get_tracer_provider()
    handle = enable_tracing("memory", metrics_exporter="none")
    try:
        assert trace.get_tracer_provider() is before
        assert not handle.owns_tracer_provider
        provider, _ = metrics
        await run(
            agent("root", ScriptedResponse.text("x")),
            Lattice(telemetry=[Telemetry(meter_provider=provider)]),
        )
        names = [s.name for s in handle.span_exporter.get_finished_spans()]  # type: ignore[union-attr]
        assert "invoke_agent root" in names
    finally:
        handle.shutdown()


async def test_shutdown_of_an_attached_exporter_leaves_the_provider_running(
    tracing: TracingHandle, exporter, metrics
) -> None:
    """Shutting down an attached handle stops only its exporter; the app keeps tracing."""
    handle = enable_tracing("memory", metrics_exporter="none")
    handle.shutdown()
    handle.shutdown()  # idempotent
    provider, _ = metrics
    await run(
        agent("root", ScriptedResponse.text("x")),
        Lattice(telemetry=[Telemetry(meter_provider=provider)]),
    )
    assert handle.span_exporter.get_finished_spans() == ()  # type: ignore[union-attr]
    assert [s for s in exporter.get_finished_spans() if s.name == "invoke_agent root"]


def test_adk_content_capture_is_turned_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """enable_tracing sets ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false when it is unset."""
    monkeypatch.delenv(ADK_CONTENT_ENV, raising=False)
    enable_tracing("none", metrics_exporter="none").shutdown()
    assert os.environ[ADK_CONTENT_ENV] == "false"


def test_an_explicit_adk_content_setting_is_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value the user set for ADK's content capture is left as it is."""
    monkeypatch.setenv(ADK_CONTENT_ENV, "true")
    enable_tracing("none", metrics_exporter="none").shutdown()
    assert os.environ[ADK_CONTENT_ENV] == "true"


@pytest.mark.parametrize(("adk_content", "leaks"), [(False, False), (True, True)])
def test_raw_content_stays_off_adk_legacy_spans(adk_content: bool, leaks: bool) -> None:
    """With ADK's legacy span format, raw user text reaches spans only with adk_content=True."""
    done = _python(
        f"""
        import asyncio
        from google.adk.agents import LlmAgent
        from google.adk.apps import App
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types
        from adk_lattice import Lattice
        from adk_lattice.telemetry import enable_tracing
        from adk_lattice.testing import FakeModel, ScriptedResponse

        handle = enable_tracing("memory", metrics_exporter="none", adk_content={adk_content})

        async def main():
            root = LlmAgent(name="root", model=FakeModel([ScriptedResponse.text("ok")]))
            app = App(name="app", root_agent=root, plugins=[Lattice()])
            runner = Runner(app=app, session_service=InMemorySessionService())
            s = await runner.session_service.create_session(app_name="app", user_id="u")
            msg = types.Content(role="user", parts=[types.Part(text="{PII}")])
            async for _ in runner.run_async(user_id="u", session_id=s.id, new_message=msg):
                pass
            await runner.close()

        asyncio.run(main())
        print(any("{PII}" in str(s.to_json()) for s in handle.span_exporter.get_finished_spans()))
        """,
        ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(leaks)


def test_an_unknown_exporter_name_is_a_clear_error() -> None:
    """An exporter name outside the documented set raises ValueError naming the choices."""
    with pytest.raises(ValueError, match="otlp_grpc"):
        enable_tracing("zipkin")  # type: ignore[arg-type]


def test_console_is_the_default_in_a_fresh_process() -> None:
    """With no OTLP variables, enable_tracing() prints span trees to the console."""
    done = _python(
        """
        from opentelemetry import trace
        from adk_lattice.telemetry import SpanTreeExporter, enable_tracing
        handle = enable_tracing()
        assert handle.owns_tracer_provider
        assert isinstance(handle.span_exporter, SpanTreeExporter)
        assert trace.get_tracer_provider() is handle.tracer_provider
        assert handle.metric_reader is None  # no periodic metric JSON on a readable console
        with trace.get_tracer("t").start_as_current_span("hello-span"):
            pass
        handle.shutdown()
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hello-span  ")


def test_replace_installs_new_providers_over_existing_ones() -> None:
    """replace=True makes the new providers global even when others were set first."""
    done = _python(
        """
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
        from adk_lattice.telemetry import enable_tracing
        trace.set_tracer_provider(TracerProvider())
        metrics.set_meter_provider(MeterProvider())
        kept = enable_tracing("memory")
        assert not kept.owns_tracer_provider and not kept.owns_meter_provider
        handle = enable_tracing("memory", replace=True)
        assert trace.get_tracer_provider() is handle.tracer_provider
        assert metrics.get_meter_provider() is handle.meter_provider
        with trace.get_tracer("t").start_as_current_span("replaced"):
            pass
        assert [s.name for s in handle.span_exporter.get_finished_spans()] == ["replaced"]
        """
    )
    assert done.returncode == 0, done.stderr


async def test_otlp_http_exporter_delivers_enriched_spans(
    tracing: TracingHandle, exporter, metrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    """enable_tracing("otlp_http") sends ADK's spans with the lattice's events to a receiver."""
    provider, _ = metrics
    with otlp_http_receiver() as (url, inbox):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"{url}/v1/traces")
        handle = enable_tracing("otlp_http", metrics_exporter="none")
        root = agent(
            "root",
            parallel("lookup", "refund"),
            ScriptedResponse.text("ok"),
            tools=[lookup, refund],
        )
        await run(
            root, Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)])
        )
        assert handle.force_flush(10_000)
        handle.shutdown()
        spans = {s.name: s for s in inbox.spans()}
    assert {"invoke_workflow root", "invoke_agent root", "execute_tool refund"} <= set(spans)
    (event,) = [
        e for e in spans["execute_tool refund"].events if e.name == "adk_lattice.before_tool"
    ]
    attrs = {a.key: a.value for a in event.attributes}
    assert attrs["adk_lattice.handler"].string_value == "DenyRefunds"


def test_otlp_environment_variables_select_otlp_for_traces_and_metrics() -> None:
    """With OTEL_EXPORTER_OTLP_ENDPOINT set, enable_tracing() exports spans and metrics there."""
    with otlp_http_receiver() as (url, inbox):
        done = _python(
            """
            import asyncio
            from google.adk.agents import LlmAgent
            from google.adk.apps import App
            from google.adk.runners import Runner
            from google.adk.sessions import InMemorySessionService
            from google.genai import types
            from adk_lattice import Lattice
            from adk_lattice.telemetry import Telemetry, enable_tracing
            from adk_lattice.testing import FakeModel, ScriptedResponse

            handle = enable_tracing()


            class Allow:
                def before_model(self, **kwargs):
                    return None


            async def main():
                root = LlmAgent(name="root", model=FakeModel([ScriptedResponse.text("hi")]))
                lattice = Lattice(policy=[Allow()], telemetry=[Telemetry()])
                app = App(name="app", root_agent=root, plugins=[lattice])
                runner = Runner(app=app, session_service=InMemorySessionService())
                s = await runner.session_service.create_session(app_name="app", user_id="u")
                msg = types.Content(role="user", parts=[types.Part(text="x")])
                async for _ in runner.run_async(user_id="u", session_id=s.id, new_message=msg):
                    pass
                await runner.close()

            asyncio.run(main())
            handle.shutdown()
            """,
            OTEL_EXPORTER_OTLP_ENDPOINT=url,
        )
        assert done.returncode == 0, done.stderr
        assert "invoke_agent root" in {s.name for s in inbox.spans()}
        assert {"adk_lattice.hook.calls", "adk_lattice.policy.decisions"} <= inbox.metric_names()


def test_otlp_grpc_is_chosen_by_the_protocol_variable() -> None:
    """OTEL_EXPORTER_OTLP_PROTOCOL=grpc selects the gRPC exporter."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")
    done = _python(
        """
        from adk_lattice.telemetry import enable_tracing
        handle = enable_tracing(metrics_exporter="none")
        print(type(handle.span_exporter).__module__)
        handle.shutdown()
        """,
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
    )
    assert done.returncode == 0, done.stderr
    assert "otlp.proto.grpc" in done.stdout


async def test_otlp_grpc_exporter_delivers_enriched_spans(
    tracing: TracingHandle, exporter, metrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    """enable_tracing("otlp_grpc") sends ADK's spans with the lattice's events over gRPC."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")
    provider, _ = metrics
    with otlp_grpc_receiver() as (endpoint, inbox):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_INSECURE", "true")
        handle = enable_tracing("otlp_grpc", metrics_exporter="none")
        root = agent("root", parallel("refund"), ScriptedResponse.text("ok"), tools=[refund])
        lattice = Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)])
        await run(root, lattice)
        assert handle.force_flush(10_000)
        handle.shutdown()
        spans = {s.name: s for s in inbox.spans()}
    events = [e.name for e in spans["execute_tool refund"].events]
    assert "adk_lattice.before_tool" in events


async def test_any_span_exporter_is_used_as_given(
    tracing: TracingHandle, exporter, metrics
) -> None:
    """A SpanExporter instance passed in receives the run's spans."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    mine = InMemorySpanExporter()
    handle = enable_tracing(mine, metrics_exporter="none")
    provider, _ = metrics
    await run(
        agent("root", ScriptedResponse.text("x")),
        Lattice(telemetry=[Telemetry(meter_provider=provider)]),
    )
    handle.shutdown()
    assert handle.span_exporter is mine
    assert "invoke_workflow root" in [s.name for s in mine.get_finished_spans()]
