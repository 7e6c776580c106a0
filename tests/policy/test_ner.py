"""Named-entity engines: Presidio on a spaCy pipeline loaded from disk, merged with the
built-in detectors, through a real Runner too."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import spacy
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import PresidioEngine, RedactPII
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
