"""pytest fixtures for apps built on adk-lattice, loaded through the ``pytest11`` entry point.

Every fixture is opt-in: the plugin defines no hooks, so nothing runs unless a test asks
for a fixture by name.

- ``fake_model``: a strict, empty :class:`FakeModel`; fill ``fake_model.script``. At the end
  of the test every scripted turn must have been used.
- ``lattice`` / ``lattice_agent``: the Lattice and root agent ``lattice_runner`` uses;
  override either in a ``conftest.py`` to test your own app.
- ``lattice_runner``: a :class:`LatticeRunner` (App + Runner on in-memory services).
- ``span_exporter`` / ``metric_reader``: OpenTelemetry SDK in-memory capture for the test.
- ``loopback_gemini``: a strict :class:`LoopbackGemini` on 127.0.0.1 with a dummy
  ``GOOGLE_API_KEY``; fill ``loopback_gemini.script`` and use ``loopback_gemini.model()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent

from .._plugin import Lattice
from ._loopback.gemini import LoopbackGemini
from ._model import FakeModel
from ._runner import LatticeRunner

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ._otel import MetricCapture

__all__ = [
    "fake_model",
    "lattice",
    "lattice_agent",
    "lattice_runner",
    "loopback_gemini",
    "metric_reader",
    "span_exporter",
]


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    """A strict FakeModel with an empty script; unused turns fail the test at teardown."""
    model = FakeModel(strict=True)
    yield model
    model.assert_consumed()


@pytest.fixture
def lattice() -> Lattice:
    """The Lattice ``lattice_runner`` registers (default: ``Lattice()``); override it."""
    return Lattice()


@pytest.fixture
def lattice_agent(fake_model: FakeModel) -> BaseAgent:
    """The root agent ``lattice_runner`` runs (default: an LlmAgent on ``fake_model``)."""
    return LlmAgent(name="agent", model=fake_model)


@pytest.fixture
def lattice_runner(lattice_agent: BaseAgent, lattice: Lattice) -> LatticeRunner:
    """A real Runner over an App carrying ``lattice`` and ``lattice_agent``."""
    return LatticeRunner(lattice_agent, lattice=lattice)


@pytest.fixture
def span_exporter() -> Iterator[InMemorySpanExporter]:
    """An ``InMemorySpanExporter`` receiving every span ended during the test."""
    from ._otel import capture_spans  # the SDK is an optional dependency

    with capture_spans() as exporter:
        yield exporter


@pytest.fixture
def metric_reader() -> Iterator[MetricCapture]:
    """A ``MetricCapture`` of the metrics measured during the test."""
    from ._otel import capture_metrics

    with capture_metrics() as capture:
        yield capture


@pytest.fixture
def loopback_gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackGemini]:
    """A strict LoopbackGemini with an empty script; unused turns fail the test at teardown.

    Sets a dummy ``GOOGLE_API_KEY`` and clears the variables that would send google-genai
    to Vertex AI, for the test only.
    """
    monkeypatch.setenv("GOOGLE_API_KEY", "loopback-key")
    for name in ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    with LoopbackGemini() as api:
        yield api
    api.assert_consumed()
