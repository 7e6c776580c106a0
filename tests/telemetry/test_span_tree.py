"""render_span_tree over the spans of a real run."""

from __future__ import annotations

from _telemetry_support import DenyRefunds, ServeFromCache, agent, lookup, parallel, refund, run

from adk_lattice import Lattice
from adk_lattice.telemetry import Telemetry, render_span_tree
from adk_lattice.testing import ScriptedResponse


async def test_tree_nests_spans_and_shows_decisions(exporter, metrics) -> None:
    """The tree indents children under parents and lists the lattice's events under spans."""
    provider, _ = metrics
    root = agent(
        "root", parallel("lookup", "refund"), ScriptedResponse.text("ok"), tools=[lookup, refund]
    )
    await run(root, Lattice(policy=[DenyRefunds()], telemetry=[Telemetry(meter_provider=provider)]))
    lines = render_span_tree(exporter.get_finished_spans(), durations=False).splitlines()
    assert lines[0] == "invoke_workflow root"
    assert "  invoke_agent root" in lines
    at = lines.index("    execute_tool refund")
    assert lines[at + 1] == "      · before_tool  DenyRefunds:deny  (role)"


async def test_tree_marks_a_response_served_from_before_model(exporter, metrics) -> None:
    """A short-circuited agent span says who served it and that the model was not called."""
    provider, _ = metrics
    lattice = Lattice(
        cache=[ServeFromCache("root")], telemetry=[Telemetry(meter_provider=provider)]
    )
    await run(agent("root", ScriptedResponse.text("x")), lattice)
    tree = render_span_tree(exporter.get_finished_spans(), durations=False)
    assert "invoke_agent root  [served by ServeFromCache, model not called]" in tree


async def test_tree_renders_only_the_asked_trace(exporter, metrics) -> None:
    """With trace_id only that trace's spans are rendered."""
    provider, _ = metrics
    lattice = Lattice(telemetry=[Telemetry(meter_provider=provider)])
    await run(agent("first", ScriptedResponse.text("x")), lattice)
    await run(agent("second", ScriptedResponse.text("y")), lattice)
    spans = exporter.get_finished_spans()
    (second,) = [s for s in spans if s.name == "invoke_workflow second"]
    tree = render_span_tree(spans, trace_id=second.context.trace_id)
    assert "second" in tree
    assert "first" not in tree


def test_no_span_renders_nothing() -> None:
    """An empty span list renders as an empty string."""
    assert render_span_tree([]) == ""
