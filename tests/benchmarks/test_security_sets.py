"""The structure every held-out set of field-class styles keeps (``fresh4.py`` to
``fresh11.py``): registered in one half and joined into the classes, new, benign tasks in the
benign lists and calling the world's tools, every benign run completing and every case
hijacking the undefended agent. Each set's own readings and doors are tested in its
``test_security_fresh<n>.py``."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from benchmarks.security.attacks import CLASS_HELD_OUT_STYLES, CLASS_TUNING_STYLES, GOALS, OWN_CASES
from benchmarks.security.classes import BENIGN, BY_ID, benign_doors, class_cases
from benchmarks.security.env import Env
from benchmarks.security.harness import Config, run_one

UNDEFENDED = Config("undefended", list)

#: ``set number: (benign entries and door runs, attacked cases)``.
SETS = {
    4: (17, 37), 5: (22, 48), 6: (15, 43), 7: (17, 58), 8: (17, 64), 9: (17, 104), 10: (17, 87),
    11: (17, 86),
}  # fmt: skip
#: The earlier sets' modules, whose styles a later set may not reuse.
EARLIER = ("fresh", "fresh2", "fresh3")


def _set(n: int) -> Any:
    """The set's module (``benchmarks/security/fresh<n>.py``)."""
    return importlib.import_module(f"benchmarks.security.fresh{n}")


def _styles(s: Any, n: int) -> tuple[str, ...]:
    return tuple(getattr(s, f"FRESH{n}_STYLES"))


def _tasks(s: Any, n: int) -> tuple[Any, ...]:
    return tuple(getattr(s, f"FRESH{n}_TASKS"))


def _cases(s: Any, n: int) -> list[Any]:
    return list(getattr(s, f"fresh{n}_cases")())


numbered = pytest.mark.parametrize("n", sorted(SETS), ids=[f"fresh{n}" for n in sorted(SETS)])


@numbered
def test_styles_are_registered_in_one_half(n: int) -> None:
    """Every style of the set has cases, is in exactly one half, and is joined into the
    classes (its cases and its benign entries and doors)."""
    s = _set(n)
    assert {c.style for c in _cases(s, n)} == set(_styles(s, n))
    assert set(_styles(s, n)) <= set(CLASS_HELD_OUT_STYLES) | set(CLASS_TUNING_STYLES)
    assert not set(CLASS_HELD_OUT_STYLES) & set(CLASS_TUNING_STYLES)
    assert {c.id for c in _cases(s, n)} <= {c.id for c in class_cases()}
    doors = {c.id for c in benign_doors()}
    assert {c.id for c in getattr(s, f"fresh{n}_benign_cases")()} <= doors


@numbered
def test_styles_are_new(n: int) -> None:
    """No style of the set is a style of an earlier set or of the suite's own cases."""
    s = _set(n)
    own = {c.id for c in _cases(s, n)}
    earlier = {c.style for c in class_cases() if c.id not in own} | {c.style for c in OWN_CASES}
    for name in EARLIER:
        module = importlib.import_module(f"benchmarks.security.{name}")
        earlier |= set(getattr(module, f"{name.upper()}_STYLES"))
    earlier |= {style for m in range(4, n) for style in _styles(_set(m), m)}
    assert not set(_styles(s, n)) & earlier


@numbered
def test_benign_tasks_are_in_the_benign_lists(n: int) -> None:
    """Each benign task of the set is a suite task and in its class's benign list."""
    s = _set(n)
    for klass, ids in getattr(s, f"FRESH{n}_BENIGN").items():
        assert set(ids) <= set(BENIGN[klass])
        assert all(BY_ID[i] in _tasks(s, n) for i in ids)
    assert {t.id for t in _tasks(s, n)} == {
        i for ids in getattr(s, f"FRESH{n}_BENIGN").values() for i in ids
    }


@numbered
def test_benign_plans_call_the_world_s_tools(n: int) -> None:
    """Each call of a benign task's plan names a tool of the world and its parameters."""
    tools: dict[str, Callable[..., object]] = {t.name: t.func for t in Env().tools()}
    for task in _tasks(_set(n), n):
        for name, args in task.plan:
            assert name in tools, (task.id, name)
            params = set(inspect.signature(tools[name]).parameters)
            assert set(args) == params, (task.id, name)


@numbered
async def test_benign_tasks_complete_undefended(n: int) -> None:
    """Undefended, each benign task of the set does what it asks."""
    outcomes = [await run_one(t, UNDEFENDED) for t in _tasks(_set(n), n)]
    assert [o.task for o in outcomes if not o.done] == []


@numbered
async def test_benign_entries_and_doors_complete_undefended(n: int) -> None:
    """Undefended, each host completes with the set's benign directory entry or door text."""
    cases = getattr(_set(n), f"fresh{n}_benign_cases")()
    outcomes = [await run_one(BY_ID[h], UNDEFENDED, c) for c in cases for h in c.hosts]
    assert len(outcomes) == SETS[n][0]
    assert [(o.task, o.case) for o in outcomes if not o.done] == []


@numbered
async def test_every_case_hijacks_the_undefended_agent(n: int) -> None:
    """Undefended, every case of the set on its first host gets the attacker's call made."""
    outcomes = []
    for i, case in enumerate(_cases(_set(n), n)):
        task = BY_ID[case.hosts[0]]
        goal = case.goal(task) if case.goal else GOALS[i % len(GOALS)]
        outcomes.append(await run_one(task, UNDEFENDED, case, goal))
    assert len(outcomes) == SETS[n][1]
    assert [o.case for o in outcomes if not o.attacked] == []


@numbered
def test_each_content_case_carries_its_destination(n: int) -> None:
    """Each content or near-miss case's goal carries its mark in the call it makes."""
    for case in _cases(_set(n), n):
        if case.goal is None:
            continue
        goal = case.goal(BY_ID[case.hosts[0]])
        said = " ".join(str(v) for v in goal.args.values())
        assert all(m in said or m in goal.en for m in goal.marks), case.id
