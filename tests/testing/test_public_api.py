"""adk_lattice.testing exports a sorted, complete public API."""

from __future__ import annotations

import adk_lattice.testing as testing


def test_all_is_sorted() -> None:
    """__all__ is sorted, so additions are easy to review."""
    assert testing.__all__ == sorted(testing.__all__)


def test_all_names_exist_and_cover_public_names() -> None:
    """Every name in __all__ exists, and every public non-module attribute is listed."""
    public = {
        name
        for name, value in vars(testing).items()
        if not name.startswith("_") and type(value).__name__ != "module"
    }
    assert set(testing.__all__) == public
