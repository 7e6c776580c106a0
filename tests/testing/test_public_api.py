"""adk_lattice.testing exports a sorted, complete public API."""

from __future__ import annotations

import adk_lattice.testing as testing


def isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions, each alphabetical (ruff's RUF022 order)."""
    kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return kind, name


def test_all_is_sorted() -> None:
    """__all__ is sorted (constants, classes, functions), so additions are easy to review."""
    assert testing.__all__ == sorted(testing.__all__, key=isort_key)


def test_all_names_exist_and_cover_public_names() -> None:
    """Every name in __all__ exists, and every public non-module attribute is listed."""
    public = {
        name
        for name, value in vars(testing).items()
        if not name.startswith("_") and type(value).__name__ != "module"
    }
    assert set(testing.__all__) == public
