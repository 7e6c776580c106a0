"""Fixtures shared by the whole suite."""

from __future__ import annotations

import pytest

from tests.support import Recorder


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording observer."""
    return Recorder()
