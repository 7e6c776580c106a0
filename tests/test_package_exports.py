"""The top-level package exports exactly its public names, sorted."""

from __future__ import annotations

import types

import adk_lattice


def test_all_is_sorted() -> None:
    """__all__ is in isort order (constants, classes, functions), so additions are reviewable."""

    def key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return kind, name

    assert adk_lattice.__all__ == sorted(adk_lattice.__all__, key=key)


def test_all_lists_every_public_name() -> None:
    """Every name in __all__ exists, and every public non-module attribute is listed."""
    public = {
        name
        for name, value in vars(adk_lattice).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert set(adk_lattice.__all__) == public
