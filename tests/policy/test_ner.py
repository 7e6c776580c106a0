"""Named-entity engines: Presidio on a spaCy pipeline loaded from disk, merged with the
built-in detectors, through a real Runner too."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import spacy
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import PresidioEngine, RedactPII
from adk_lattice.policy.pii.ner import engine_spans
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import run_app

TEXT = "Ada Lovelace of Acme Corp moved to Berlin; write to ada@example.com."


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny spaCy pipeline (rules for three entities), saved as a folder like any model."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(  # type: ignore[attr-defined]
        [
            {"label": "PERSON", "pattern": [{"TEXT": "Ada"}, {"TEXT": "Lovelace"}]},
            {"label": "ORG", "pattern": "Acme Corp"},
            {"label": "GPE", "pattern": "Berlin"},
        ]
    )
    path = tmp_path_factory.mktemp("pipeline")
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def engine(pipeline: Path) -> PresidioEngine:
    """Presidio loading the pipeline folder, as it would an installed model."""
    return PresidioEngine(model=str(pipeline))


def test_names_places_and_organisations_are_redacted(engine: PresidioEngine) -> None:
    """The engine's entities are redacted with their kinds, next to the built-in ones."""
    out, _ = RedactPII(engine=engine).scrub(TEXT)
    assert out == (
        "[REDACTED:PERSON] of [REDACTED:ORGANIZATION] moved to [REDACTED:LOCATION]; "
        "write to [REDACTED:EMAIL]."
    )


def test_a_strategy_applies_to_an_engine_kind(engine: PresidioEngine) -> None:
    """A strategy named for an engine kind applies to it like to a built-in kind."""
    _, blocked = RedactPII(engine=engine, strategies={"PERSON": "block"}).scrub(TEXT)
    assert blocked


async def test_a_name_in_a_tool_result_is_redacted_through_a_runner(
    engine: PresidioEngine,
) -> None:
    """Through a Runner, a name in a tool result never reaches the model."""

    def lookup() -> dict[str, Any]:
        """Look up the account owner."""
        return {"owner": "Ada Lovelace"}

    model = FakeModel([ScriptedResponse.call("lookup"), ScriptedResponse.text("ok")])
    agent = LlmAgent(name="assistant", model=model, tools=[lookup])
    run = await run_app(agent, [Lattice(policy=[RedactPII(engine=engine)])], "who?")
    assert run.responses("lookup") == [{"owner": "[REDACTED:PERSON]"}]


def test_a_missing_model_fails_at_construction_with_the_fix(tmp_path: Path) -> None:
    """A pipeline that is not on the machine raises ValueError saying how to install one."""
    with pytest.raises(ValueError, match="spacy download"):
        PresidioEngine(model=str(tmp_path / "absent"))


def test_without_presidio_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Presidio installed, construction raises ValueError naming the ner extra."""
    monkeypatch.setitem(sys.modules, "presidio_analyzer", None)
    with pytest.raises(ValueError, match=r"adk-lattice\[ner\]"):
        PresidioEngine(model="en_core_web_sm")


def test_any_object_with_analyze_is_an_engine() -> None:
    """A custom engine's spans are used; spans outside the text are dropped, not trusted."""

    class Names:
        def analyze(self, text: str) -> list[tuple[int, int, str]]:
            return [(0, 3, "PERSON"), (5, 999, "PERSON"), (-1, 2, "PERSON")]

    assert RedactPII(engine=Names(), kinds=[]).scrub("Ada, hi")[0] == "[REDACTED:PERSON], hi"


def test_a_non_engine_is_refused_at_construction() -> None:
    """An engine without analyze() raises TypeError when the policy is built."""
    with pytest.raises(TypeError, match="analyze"):
        RedactPII(engine=object())  # type: ignore[arg-type]


def test_without_presidio_the_whole_message_gives_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The missing-extra error reads exactly what to install."""
    monkeypatch.setitem(sys.modules, "presidio_analyzer", None)
    message = "PresidioEngine needs Presidio and spaCy: pip install 'adk-lattice[ner]'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        PresidioEngine(model="en_core_web_sm")


def test_the_default_pipeline_is_en_core_web_sm() -> None:
    """Without model=, the engine loads en_core_web_sm, and says how to install it if absent."""
    if importlib.util.find_spec("en_core_web_sm") is not None:
        pytest.skip("en_core_web_sm is installed here")
    message = (
        "cannot load the spaCy pipeline 'en_core_web_sm' from this machine: install it "
        "(python -m spacy download en_core_web_sm) or pass a pipeline folder's path"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        PresidioEngine()


def test_a_ready_analyzer_is_used_as_given(pipeline: Path) -> None:
    """analyzer= is used instead of loading a model, in English by default."""
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    config = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": str(pipeline)}],
    }
    analyzer = AnalyzerEngine(
        nlp_engine=NlpEngineProvider(nlp_configuration=config).create_engine()
    )
    spans = PresidioEngine(analyzer=analyzer).analyze(TEXT)
    assert sorted(spans) == [(0, 12, "PERSON"), (16, 25, "ORGANIZATION"), (35, 41, "LOCATION")]


def test_a_pipeline_in_another_language_is_loaded(tmp_path: Path) -> None:
    """language= loads a pipeline and recognizers for that language (here German)."""
    nlp = spacy.blank("de")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PER", "pattern": [{"TEXT": "Ada"}, {"TEXT": "Lovelace"}]}])  # type: ignore[attr-defined]
    nlp.to_disk(tmp_path)
    engine = PresidioEngine(model=str(tmp_path), language="de")
    assert engine.analyze("Ada Lovelace wohnt in Berlin.") == [(0, 12, "PERSON")]


def test_every_entity_the_pipeline_tags_can_be_asked_for(tmp_path: Path) -> None:
    """entities= may name any entity the pipeline tags (an age here), not only the defaults."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "AGE", "pattern": "42 years old"}])  # type: ignore[attr-defined]
    nlp.to_disk(tmp_path)
    engine = PresidioEngine(model=str(tmp_path), entities={"AGE": "AGE"})
    assert engine.analyze("She is 42 years old.") == [(7, 19, "AGE")]


def test_presidio_recognizers_of_the_pipelines_language_are_used(tmp_path: Path) -> None:
    """Presidio's own recognizers for the chosen language run too (a Spanish NIF here)."""
    spacy.blank("es").to_disk(tmp_path)
    engine = PresidioEngine(model=str(tmp_path), language="es", entities={"ES_NIF": "NIF"})
    assert engine.analyze("Mi NIF es 12345678Z.") == [(10, 19, "NIF")]


def test_results_under_the_score_threshold_are_left_out(pipeline: Path) -> None:
    """A finding scored under score_threshold (default 0.5) is not a span; a lower bar keeps it."""
    from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    config = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": str(pipeline)}],
    }
    analyzer = AnalyzerEngine(
        nlp_engine=NlpEngineProvider(nlp_configuration=config).create_engine()
    )
    weak = Pattern("account", r"\bACC-\d{4}\b", 0.3)
    analyzer.registry.add_recognizer(PatternRecognizer("ACCOUNT", patterns=[weak]))
    text = "account ACC-1234"
    assert PresidioEngine(analyzer=analyzer, entities={"ACCOUNT": "ACCOUNT"}).analyze(text) == []
    lenient = PresidioEngine(
        analyzer=analyzer, entities={"ACCOUNT": "ACCOUNT"}, score_threshold=0.2
    )
    assert lenient.analyze(text) == [(8, 16, "ACCOUNT")]


def test_an_empty_engine_span_is_dropped() -> None:
    """engine_spans drops an empty span along with spans outside the text."""

    class Spans:
        def analyze(self, text: str) -> list[tuple[int, int, str]]:
            return [(2, 2, "PERSON"), (0, 3, "PERSON")]

    assert engine_spans(Spans(), "Ada, hi") == [(0, 3, "PERSON")]
