"""The mutation runner's sampling, scoring and module list (scripts/mutation.py)."""

from __future__ import annotations

import importlib.util
import signal
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Generator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mutation():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts/mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_script"] = module
    spec.loader.exec_module(module)
    return module


def test_sample_is_stable_and_grows_by_adding(mutation) -> None:  # type: ignore[no-untyped-def]
    """A sample is the same on every run, and a larger one keeps the smaller one's picks."""
    names = [f"adk_lattice.m.x_f__mutmut_{i}" for i in range(200)]
    small = mutation.sample(names, 20)
    assert small == mutation.sample(list(reversed(names)), 20)
    assert len(small) == 20
    assert set(small) <= set(mutation.sample(names, 60))
    assert mutation.sample(names, None) == sorted(names)


def test_wilson_bound_is_below_the_score_and_tightens(mutation) -> None:  # type: ignore[no-untyped-def]
    """The 95% lower bound sits below the observed score and rises with the sample's size."""
    assert mutation.wilson_low(1.0, 30) < 1.0
    assert mutation.wilson_low(1.0, 30) < mutation.wilson_low(1.0, 300)
    assert mutation.wilson_low(0.9, 100) == pytest.approx(0.826, abs=0.002)


def test_unreached_mutants_count_against_the_score(mutation) -> None:  # type: ignore[no-untyped-def]
    """A mutant no test reaches lowers the score; one not yet run does not."""
    m = mutation.Module("x", Counter({"killed": 9, "no tests": 1, "not checked": 50}))
    assert m.checked == 10
    assert m.score == pytest.approx(0.9)


def test_every_measured_file_is_listed(mutation) -> None:  # type: ignore[no-untyped-def]
    """The pass covers every mutated module the configuration names, and no excluded one."""
    assert {"_dispatch", "_handlers", "stores._redis", "policy.pii.redact"} <= set(mutation.MODULES)
    assert "policy._text.confusables" not in mutation.MODULES
    assert not any(m.endswith("__init__") for m in mutation.MODULES)


def test_only_the_classifier_pass_asks_its_ignored_tests_back(mutation) -> None:  # type: ignore[no-untyped-def]
    """The torch tests every pass ignores are asked back for the classifier module alone."""
    args = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    own = mutation.OWN_TESTS["policy.injection.classifier"]
    assert all(f"--ignore={path}" in args["pytest_add_cli_args"] for path in own)
    assert mutation.env("policy.injection.classifier")[mutation.OWN_TESTS_VAR] == own[0]
    assert mutation.OWN_TESTS_VAR not in mutation.env("policy.injection.guard")


def test_an_ignored_file_is_collected_when_a_pass_asks_it_back(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    """``--ignore`` still leaves the file out unless the variable names it."""
    from tests.conftest import MUTATION_TESTS, pytest_ignore_collect

    monkeypatch.chdir(ROOT)
    path = ROOT / "tests/policy/test_injection_classifier.py"
    monkeypatch.delenv(MUTATION_TESTS, raising=False)
    assert pytest_ignore_collect(path, pytestconfig) is None
    monkeypatch.setenv(MUTATION_TESTS, "tests/policy/test_injection_classifier.py")
    assert pytest_ignore_collect(path, pytestconfig) is False
    assert pytest_ignore_collect(ROOT / "tests/policy/test_injection.py", pytestconfig) is None


def test_listed_equivalents_are_not_run_while_their_diff_holds(
    mutation,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutant listed as equivalent is left out of a run; once its diff changes it runs."""
    codes = {f"adk_lattice.m.x_f__mutmut_{i}": None for i in (1, 2, 3)}
    diffs = {name: f"-a\n+b{name[-1]}" for name in codes}
    monkeypatch.setattr(mutation, "_codes", lambda module: codes)
    monkeypatch.setattr(mutation, "_diff", lambda mutant, module: diffs[mutant])
    listed = {"adk_lattice.m.x_f__mutmut_2": {"reason": "r", "diff": "-a\n+b2"}}
    picked = mutation.targets("m", retest=False, equivalent=listed)
    assert picked == ["adk_lattice.m.x_f__mutmut_1", "adk_lattice.m.x_f__mutmut_3"]
    diffs["adk_lattice.m.x_f__mutmut_2"] = "-a\n+moved"
    assert mutation.targets("m", retest=False, equivalent=listed) == ["adk_lattice.m.*"]


def test_an_unrun_equivalent_is_reported_as_equivalent(
    mutation,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An equivalent left out of the run counts as equivalent, not as unchecked."""
    codes = {"adk_lattice.m.x_f__mutmut_1": 1, "adk_lattice.m.x_f__mutmut_2": None}
    monkeypatch.setattr(mutation, "_codes", lambda module: codes)
    monkeypatch.setattr(mutation, "_durations", lambda module: {})
    monkeypatch.setattr(mutation, "_diff", lambda mutant, module: "-a\n+b")
    listed = {"adk_lattice.m.x_f__mutmut_2": {"reason": "same", "diff": "-a\n+b"}}
    result = mutation.collect("m", listed)
    assert result.equivalent == [("adk_lattice.m.x_f__mutmut_2", "same")]
    assert (result.counts["killed"], result.counts["not checked"], result.score) == (1, 0, 1.0)


def test_a_mutants_own_test_files_run_first_quickest_first() -> None:
    """In a pass, a mutant's module's test files come first, then the rest, quickest first."""
    from tests.conftest import mutation_order, own_test_stem

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid, self.path = nodeid, Path(nodeid.split("::")[0])

    ids = [
        "tests/test_chain.py::test_a",
        "tests/test_dispatch.py::test_slow",
        "tests/test_dispatch.py::test_quick",
        "tests/test_records.py::test_b",
        "tests/test_chain.py::test_c",
    ]
    items = [Item(i) for i in ids]
    durations = dict(zip(ids, [0.3, 2.0, 0.1, 0.1, 0.0], strict=True))
    mutant = "adk_lattice._dispatch.xǁDispatchǁrun__mutmut_4"
    assert own_test_stem(mutant) == "test_dispatch"
    mutation_order(items, mutant, durations)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/test_dispatch.py::test_quick",
        "tests/test_dispatch.py::test_slow",
        "tests/test_records.py::test_b",
        "tests/test_chain.py::test_c",
        "tests/test_chain.py::test_a",
    ]


def test_tests_keep_their_order_outside_a_mutation_pass() -> None:
    """Only a mutant's run is reordered: names that are not a mutant's give no module."""
    from tests.conftest import own_test_stem

    assert own_test_stem("") is None
    assert own_test_stem("fail") is None
    assert own_test_stem("adk_lattice.stores._sqlite.x_f__mutmut_1") == "test_sqlite"


def test_a_mutants_test_may_run_ten_times_its_clean_time_and_at_least_two_seconds() -> None:
    """A test's budget in a mutant's run scales with its clean duration, with a floor."""
    from tests.conftest import mutant_test_budget

    durations = {"tests/a.py::test_slow": 0.5, "tests/a.py::test_quick": 0.01}
    assert mutant_test_budget("tests/a.py::test_slow", durations) == 5.0
    assert mutant_test_budget("tests/a.py::test_quick", durations) == 2.0
    assert mutant_test_budget("tests/a.py::test_new", durations) == 2.0


def _call_hook(nodeid: str) -> Generator[None, object, object]:
    from tests.conftest import pytest_runtest_call

    class Item:
        def __init__(self) -> None:
            self.nodeid = nodeid

    return pytest_runtest_call(Item())  # type: ignore[arg-type]


def _spin(started: float, seconds: float) -> None:
    """Busy-loop as a mutant's endless loop would."""
    while time.monotonic() - started < seconds:
        pass


def test_a_mutants_test_past_its_budget_fails_and_the_timer_is_cleared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutant's test that loops past its budget fails; the alarm and handler are restored."""
    import tests.conftest as conftest

    monkeypatch.setenv("MUTANT_UNDER_TEST", "adk_lattice._chain.x_run_chain__mutmut_1")
    monkeypatch.setattr(conftest, "MUTANT_TEST_FLOOR", 0.05)
    before = signal.getsignal(signal.SIGALRM)
    hook = _call_hook("tests/test_chain.py::test_never_recorded")
    next(hook)
    started = time.monotonic()
    with pytest.raises(conftest.MutantTestTimeout) as stopped:
        _spin(started, 5.0)
    with pytest.raises(conftest.MutantTestTimeout):
        hook.throw(stopped.value)
    assert time.monotonic() - started < 1
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == before


def test_no_alarm_is_set_outside_a_mutants_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a mutation pass (or in mutmut's clean run) tests run without a budget."""
    for value in ("", "fail"):
        monkeypatch.setenv("MUTANT_UNDER_TEST", value)
        hook = _call_hook("tests/test_chain.py::test_a")
        next(hook)
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        with pytest.raises(StopIteration):
            hook.send(None)
