"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Generator
from functools import cache
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


#: mutmut's record of each test's duration, in the directory a mutant's tests run from.
MUTATION_STATS = "mutmut-stats.json"


@cache
def _test_durations() -> dict[str, float]:
    """Each test's duration from mutmut's clean run (empty outside a mutation pass)."""
    try:
        durations: dict[str, float] = json.loads(Path(MUTATION_STATS).read_text())[
            "duration_by_test"
        ]
    except (OSError, ValueError, KeyError):
        return {}
    return durations


def own_test_stem(mutant: str) -> str | None:
    """The test-file name prefix of the module a mutant is in: ``test_dispatch`` for
    ``adk_lattice._dispatch.x_f__mutmut_1``, ``test_sqlite`` for ``stores._sqlite``."""
    parts = mutant.split(".")
    if len(parts) < 3 or "__mutmut_" not in parts[-1]:
        return None
    return "test_" + parts[-2].lstrip("_")


def mutation_order(items: list[pytest.Item], mutant: str, durations: dict[str, float]) -> None:
    """Put a mutant's likeliest killers first: its module's own test files, then the rest,
    each file's tests together (its module fixtures set up once), quickest files and tests
    first. mutmut stops at the first failure, so a killed mutant costs its first failing
    test, not every test that reaches it; a survivor still runs them all."""
    stem = own_test_stem(mutant)
    files: dict[Path, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.path, []).append(item)

    def cost(item: pytest.Item) -> float:
        return durations.get(item.nodeid, 0.0)

    def file_key(path: Path) -> tuple[bool, float]:
        own = stem is not None and path.stem.startswith(stem)
        return (not own, sum(cost(i) for i in files[path]))

    items[:] = [i for path in sorted(files, key=file_key) for i in sorted(files[path], key=cost)]


#: In a mutant's run, a test may take this many times its clean run's duration ...
MUTANT_TEST_FACTOR = 10.0
#: ... and at least this many seconds.
MUTANT_TEST_FLOOR = 2.0


class MutantTestTimeout(Exception):
    """A test of a mutant ran far past its clean run's time (the mutant loops or stalls)."""


def mutant_test_budget(nodeid: str, durations: dict[str, float]) -> float:
    """How long a test may run against a mutant: ``MUTANT_TEST_FACTOR`` times its duration
    in mutmut's clean run, never under ``MUTANT_TEST_FLOOR`` seconds."""
    return max(MUTANT_TEST_FLOOR, MUTANT_TEST_FACTOR * durations.get(nodeid, 0.0))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """In a mutant's run, fail a test that runs far past its clean time.

    mutmut stops a mutant only at several times the summed time of every test reaching its
    function, so a mutant that loops in one quick test cost about forty seconds; failing
    that test at its own budget counts the mutant killed, as mutmut's timeout would, in a
    second or two. A loop inside C code (a regex engine) is still stopped by mutmut.
    """
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", "") or not hasattr(
        signal, "setitimer"
    ):
        return (yield)
    budget = mutant_test_budget(item.nodeid, _test_durations())

    def expire(signum: int, frame: object) -> None:
        raise MutantTestTimeout(f"ran past {budget:.1f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a mutation pass, run a mutant's tests in the order most likely to fail soonest."""
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if "__mutmut_" in mutant:
        mutation_order(items, mutant, _test_durations())


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording observer."""
    return Recorder()
