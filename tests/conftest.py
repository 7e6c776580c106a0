"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import Recorder

#: Test files a mutation pass asks back (``os.pathsep``-separated, relative to the working
#: directory): ``[tool.mutmut]`` leaves them out of every pass with ``--ignore`` and
#: ``scripts/mutation.py`` sets this only for the module they measure.
MUTATION_TESTS = "ADK_LATTICE_MUTATION_TESTS"


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Collect a test file that ``--ignore`` leaves out when a mutation pass asks it back."""
    wanted = [p for p in os.environ.get(MUTATION_TESTS, "").split(os.pathsep) if p]
    if any(collection_path == Path(p).absolute() for p in wanted):
        return False
    return None


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording observer."""
    return Recorder()
