"""Embedding backends for the semantic cache: any callable, and an offline default.

A backend is a callable from one text to one vector (a sequence of floats or a numpy
array), sync or async. :class:`WordLlamaEmbedder` is the default: wordllama's 256-dimension
static model, whose weights and tokenizer ship inside its wheel, loaded once per process
with downloads turned off (``pip install 'adk-lattice[semantic]'``).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np

#: A backend: one text in, one vector out (or an awaitable of one).
Embedder: TypeAlias = Callable[[str], "Sequence[float] | np.ndarray | Awaitable[Any]"]

_EXTRA = "pip install 'adk-lattice[semantic]'"


def import_numpy() -> Any:
    """numpy, or an ImportError naming the extra that installs it."""
    try:
        import numpy
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"the semantic cache needs numpy; install it with: {_EXTRA}") from exc
    return numpy


@functools.cache
def _wordllama(dim: int) -> Any:
    """The model, loaded once per process and dimension."""
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as exc:
        raise ImportError(f"WordLlamaEmbedder needs wordllama; install it with: {_EXTRA}") from exc
    # The wheel ships the weights under wordllama/weights and the tokenizer under
    # wordllama/tokenizers; its default lookup expects the tokenizer elsewhere and would
    # download it. The package folder as the cache folder finds both, and downloads are off.
    home = Path(wordllama.__file__).parent
    return WordLlama.load(dim=dim, cache_dir=home, disable_download=True)


class WordLlamaEmbedder:
    """wordllama's static embedding (``l2_supercat``, 256 dimensions), offline.

    The model is loaded when the first instance is made (about a second) and shared by
    every instance of the process; nothing is downloaded. An embedding is a token-weighted
    average, so it ignores word order and scores a question and its negation alike: the
    semantic cache's guards are what tell them apart.

    Args:
        dim: the model's dimension; the wheel ships 256 (others would need a download,
            which is refused).

    Raises:
        ImportError: when wordllama is not installed. FileNotFoundError: when the wheel
            lacks the weights of that dimension.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"wordllama-l2_supercat-{dim}"
        self._model = _wordllama(dim)

    def __call__(self, text: str) -> np.ndarray:
        """The unit-length vector of ``text``."""
        return self._model.embed([text], norm=True)[0]  # type: ignore[no-any-return]


def embedding_text(text: str) -> str:
    """What is embedded for a question: folded (NFKC, no format characters, one kind of
    apostrophe, single spaces) and case-folded, so "PARIS?" and "paris?" embed alike."""
    from ._guards import fold

    return fold(text).casefold()


def check_embedder(backend: Any) -> Embedder:
    """Validate a backend.

    Raises:
        TypeError: when ``backend`` is not callable (or is a class, not an instance).
    """
    if inspect.isclass(backend):
        raise TypeError(f"pass an embedding backend instance, e.g. {backend.__name__}()")
    if not callable(backend):
        kind = type(backend).__name__
        raise TypeError(f"the embedding backend must be a callable (text -> vector), got {kind}")
    return backend  # type: ignore[no-any-return]


def to_vector(value: Any, dim: int | None) -> np.ndarray:
    """A backend's output as a unit float32 vector of ``dim`` values.

    Raises:
        ValueError: on a vector that is not one-dimensional, has another dimension, holds
            NaN or infinity, or is all zeros. TypeError: on something that is not numbers.
    """
    np = import_numpy()
    try:
        vector = np.asarray(value, dtype="<f4")
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"an embedding is a sequence of numbers, got {type(value).__name__}"
        ) from exc
    if vector.ndim != 1 or vector.size == 0:
        raise ValueError(f"an embedding is one non-empty row of numbers, got shape {vector.shape}")
    if dim is not None and vector.size != dim:
        raise ValueError(f"the backend returned {vector.size} dimensions, expected {dim}")
    if not np.isfinite(vector).all():
        raise ValueError("the embedding holds NaN or infinity")
    norm = float(np.linalg.norm(vector))
    if not norm > 0 or not math.isfinite(norm):
        raise ValueError("the embedding is all zeros")
    return vector / np.float32(norm)  # type: ignore[no-any-return]
