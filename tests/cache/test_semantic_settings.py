"""SemanticResponseCache and its parts refuse bad settings at construction, legibly."""

from __future__ import annotations

from typing import Any

import pytest

from adk_lattice.cache import MemoryStore, NearMissGuards, SemanticResponseCache
from adk_lattice.cache._embedding import to_vector
from adk_lattice.stores import Store


def unit(text: str) -> list[float]:
    """A two-dimension backend for settings tests."""
    return [1.0, 0.0]


@pytest.mark.parametrize("threshold", [0, -0.1, 1.01, 2, float("nan"), True, "0.9"])
def test_a_threshold_out_of_range_is_refused(threshold: Any) -> None:
    """The threshold must be above 0 and at most 1."""
    with pytest.raises(ValueError, match="threshold must be"):
        SemanticResponseCache(MemoryStore(), embedder=unit, threshold=threshold)


def test_a_backend_that_is_not_callable_is_refused() -> None:
    """An embedder must be a callable from text to vector."""
    with pytest.raises(TypeError, match="must be a callable"):
        SemanticResponseCache(MemoryStore(), embedder="wordllama")  # type: ignore[arg-type]


def test_a_backend_class_is_refused_with_the_fix() -> None:
    """Passing a class instead of an instance says to pass an instance."""

    class Backend:
        def __call__(self, text: str) -> list[float]:
            return [1.0]

    with pytest.raises(TypeError, match=r"pass an embedding backend instance, e.g. Backend\(\)"):
        SemanticResponseCache(MemoryStore(), embedder=Backend)  # type: ignore[arg-type]


def test_a_vector_of_the_wrong_dimension_is_refused() -> None:
    """A sync backend is probed once: another dimension than dim= fails at construction."""
    with pytest.raises(ValueError, match="returned 2 dimensions, expected 3"):
        SemanticResponseCache(MemoryStore(), embedder=unit, dim=3)


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        ([0.0, 0.0], "all zeros"),
        ([1.0, float("nan")], "NaN or infinity"),
        ([[1.0, 0.0]], "one non-empty row"),
        ([], "one non-empty row"),
    ],
)
def test_an_unusable_vector_is_refused(vector: Any, message: str) -> None:
    """Zero, NaN, nested or empty vectors are refused with what is wrong."""
    with pytest.raises(ValueError, match=message):
        to_vector(vector, None)


def test_a_vector_of_words_is_a_type_error() -> None:
    """A backend returning text instead of numbers is a TypeError."""
    with pytest.raises(TypeError, match="sequence of numbers"):
        to_vector(["a", "b"], None)


def test_a_store_without_vectors_is_refused() -> None:
    """A store that keeps no vector spaces cannot serve a semantic cache."""

    class KeyValueOnly(Store):
        async def _get(self, key: str) -> bytes | None:
            return None

        async def _set(self, key: str, value: bytes, ttl: float | None) -> bool:
            return True

        async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
            return None

        async def _delete(self, key: str) -> None:
            return None

        async def _delete_prefix(self, prefix: str) -> int:
            return 0

        async def _close(self) -> None:
            return None

    with pytest.raises(TypeError, match="KeyValueOnly keeps no vectors"):
        SemanticResponseCache(KeyValueOnly(name="kv"), embedder=unit)


@pytest.mark.parametrize("name", ["max_per_scope", "max_candidates", "max_chars"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_a_bound_under_one_is_refused(name: str, value: Any) -> None:
    """The per-scope, candidate and length bounds are ints of at least 1."""
    with pytest.raises(ValueError, match=f"{name} must be an int of at least 1"):
        SemanticResponseCache(MemoryStore(), embedder=unit, **{name: value})


def test_guards_of_another_type_are_refused() -> None:
    """guards= takes a NearMissGuards."""
    with pytest.raises(TypeError, match="guards must be NearMissGuards"):
        SemanticResponseCache(MemoryStore(), embedder=unit, guards={"negation": True})  # type: ignore[arg-type]


@pytest.mark.parametrize("share", [-0.1, 1.5, True, "all"])
def test_a_content_share_out_of_range_is_refused(share: Any) -> None:
    """max_content_change is a share from 0 to 1."""
    with pytest.raises(ValueError, match="max_content_change must be between 0 and 1"):
        NearMissGuards(max_content_change=share)


def test_the_default_backend_dimension_is_read_from_it() -> None:
    """With the default backend the cache knows its 256 dimensions without being told."""
    assert SemanticResponseCache(MemoryStore()).dim == 256
