"""The policy package's public surface."""

from __future__ import annotations

import adk_lattice.policy as policy


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names every public class the package exports."""
    public = {
        n for n in dir(policy) if not n.startswith("_") and isinstance(getattr(policy, n), type)
    }
    assert policy.__all__ == sorted(policy.__all__)
    assert set(policy.__all__) == public
