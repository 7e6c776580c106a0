"""Named-entity engines for ``RedactPII(engine=...)``: names, places and organisations.

Patterns cannot find a person's name or a street; a named-entity model can. An engine is
any object with ``analyze(text) -> iterable of (start, end, kind)``; ``RedactPII`` merges
its spans with the built-in detectors' and redacts them like any other kind.
:class:`PresidioEngine` runs Microsoft Presidio's analyzer (the ``ner`` extra) on a spaCy
pipeline that is already on the machine: a package or a folder. Nothing is downloaded at
run time; spaCy's trained pipelines are installed with ``python -m spacy download
en_core_web_sm`` (they are not on the package index), or any pipeline folder is given by
path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

#: Presidio's entity names for what patterns cannot find, and the kinds they redact as.
DEFAULT_ENTITIES: Final = {
    "PERSON": "PERSON",
    "LOCATION": "LOCATION",
    "ORGANIZATION": "ORGANIZATION",
}


@runtime_checkable
class Engine(Protocol):
    """What ``RedactPII(engine=...)`` accepts."""

    def analyze(self, text: str) -> Iterable[tuple[int, int, str]]:
        """Every ``(start, end, kind)`` span of a sensitive value in ``text``."""
        ...


class PresidioEngine:
    """Names, locations and organisations found by Presidio's analyzer, offline.

    ::

        RedactPII(engine=PresidioEngine(model="en_core_web_sm"))

    Args:
        model: a spaCy pipeline: an installed package name or a folder path.
        analyzer: a ready ``presidio_analyzer.AnalyzerEngine`` instead of ``model``.
        entities: Presidio entity names and the kind each redacts as.
        language: the language code the pipeline is for.
        score_threshold: the lowest score that counts.

    Raises:
        ValueError: Presidio or spaCy is not installed (the message names the extra), or
            the model cannot be loaded from this machine.
    """

    def __init__(
        self,
        *,
        model: str = "en_core_web_sm",
        analyzer: Any = None,
        entities: Mapping[str, str] | None = None,
        language: str = "en",
        score_threshold: float = 0.5,
    ) -> None:
        self.entities = dict(DEFAULT_ENTITIES if entities is None else entities)
        self.language = language
        self.score_threshold = score_threshold
        self._analyzer = analyzer if analyzer is not None else _load(model, language)

    def analyze(self, text: str) -> list[tuple[int, int, str]]:
        """Spans of the configured entities in ``text``, with their kinds."""
        results = self._analyzer.analyze(
            text=text,
            language=self.language,
            entities=list(self.entities),
            score_threshold=self.score_threshold,
        )
        return [(r.start, r.end, self.entities[r.entity_type]) for r in results]


def _load(model: str, language: str) -> Any:
    try:
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import NlpEngineProvider
    except ImportError as exc:
        raise ValueError(
            "PresidioEngine needs Presidio and spaCy: pip install 'adk-lattice[ner]'"
        ) from exc
    config = {"nlp_engine_name": "spacy", "models": [{"lang_code": language, "model_name": model}]}
    try:
        nlp_engine = NlpEngineProvider(nlp_configuration=config).create_engine()
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"cannot load the spaCy pipeline {model!r} from this machine: install it "
            "(python -m spacy download en_core_web_sm) or pass a pipeline folder's path"
        ) from exc
    registry = RecognizerRegistry(supported_languages=[language])
    registry.load_predefined_recognizers(nlp_engine=nlp_engine, languages=[language])
    return AnalyzerEngine(nlp_engine=nlp_engine, registry=registry, supported_languages=[language])


def engine_spans(engine: Engine, text: str) -> Sequence[tuple[int, int, str]]:
    """The engine's spans that lie inside ``text`` (a bad span is dropped, not trusted)."""
    return [
        (s, e, str(k))
        for s, e, k in engine.analyze(text)
        if isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(text)
    ]
