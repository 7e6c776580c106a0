"""A semantic hit is marked on the span and in the audit record, with its similarity."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_lattice.cache import MemoryStore, SemanticResponseCache
from adk_lattice.telemetry import AuditLog, Telemetry
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig

S = ScriptedResponse


def _with(attribute: str, exporter: InMemorySpanExporter) -> list[Any]:
    return [
        s.attributes[attribute]
        for s in exporter.get_finished_spans()
        if s.attributes and attribute in s.attributes
    ]


async def test_the_span_says_semantic_and_the_similarity(exporter: InMemorySpanExporter) -> None:
    """The span of a semantic hit carries the match kind, the similarity and the reason."""
    rig = Rig(
        [S.text("Paris.")], cache=[SemanticResponseCache(MemoryStore())], telemetry=[Telemetry()]
    )
    await rig.ask("What is the capital of France?")
    exporter.clear()
    await rig.ask("what is the capital of france")
    (similarity,) = _with("adk_lattice.cache.similarity", exporter)
    assert _with("adk_lattice.cache.match", exporter) == ["semantic"]
    assert 0.84 <= similarity <= 1.0
    assert _with("adk_lattice.before_model.reason", exporter) == ["semantic"]
    await rig.close()


async def test_an_exact_hit_is_marked_exact_without_a_similarity(
    exporter: InMemorySpanExporter,
) -> None:
    """An exact repeat is marked exact on the span, with no similarity."""
    rig = Rig(
        [S.text("Paris.")], cache=[SemanticResponseCache(MemoryStore())], telemetry=[Telemetry()]
    )
    await rig.ask("What is the capital of France?")
    exporter.clear()
    await rig.ask("What is the capital of France?")
    assert _with("adk_lattice.cache.match", exporter) == ["exact"]
    assert _with("adk_lattice.cache.similarity", exporter) == []
    await rig.close()


async def test_the_audit_record_lists_semantic_hits() -> None:
    """The invocation's audit record lists each semantic hit with the cache and similarity."""
    records: list[dict[str, Any]] = []
    cache = SemanticResponseCache(MemoryStore(), name="answers")
    rig = Rig([S.text("Paris.")], cache=[cache], telemetry=[AuditLog([records.append])])
    await rig.ask("What is the capital of France?")
    await rig.ask("what is the capital of france")
    first, second = (r["model_calls"] for r in records)
    assert "semantic_hits" not in first
    ((hit),) = second["semantic_hits"]
    assert (hit["cache"], second["cache_hits"]) == ("answers", 1)
    assert 0.84 <= hit["similarity"] <= 1.0
    await rig.close()


async def test_a_refused_near_hit_is_noted_with_its_guard(exporter: InMemorySpanExporter) -> None:
    """A near miss the guards refused is noted as a cache skip naming the guard."""
    rig = Rig(
        [S.text("Open."), S.text("Closed.")],
        cache=[SemanticResponseCache(MemoryStore())],
        telemetry=[Telemetry()],
    )
    await rig.ask("Is the Acme store open on Sunday?")
    exporter.clear()
    await rig.ask("Is the Acme store not open on Sunday?")
    assert "near_miss_negation" in _with("adk_lattice.before_model.reason", exporter)
    await rig.close()
