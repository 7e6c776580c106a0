"""The mutation runner's sampling, scoring and module list (scripts/mutation.py)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from collections import Counter
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
    assert {"_dispatch", "_handlers", "stores._redis", "policy.redact"} <= set(mutation.MODULES)
    assert "policy._confusables" not in mutation.MODULES
    assert not any(m.endswith("__init__") for m in mutation.MODULES)


def test_only_the_classifier_pass_asks_its_ignored_tests_back(mutation) -> None:  # type: ignore[no-untyped-def]
    """The torch tests every pass ignores are asked back for the classifier module alone."""
    args = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    own = mutation.OWN_TESTS["policy.injection_classifier"]
    assert all(f"--ignore={path}" in args["pytest_add_cli_args"] for path in own)
    assert mutation.env("policy.injection_classifier")[mutation.OWN_TESTS_VAR] == own[0]
    assert mutation.OWN_TESTS_VAR not in mutation.env("policy.injection")


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
