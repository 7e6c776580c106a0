"""Measure the suite and turn the outcomes into rates and a table."""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .attacks import HELD_OUT_STYLES, TUNING_STYLES, Case, split_of
from .harness import Config, Outcome, pairings, run_one
from .tasks import TASKS, Task

LABELS = {
    "undefended": "undefended",
    "injection_guard": "InjectionGuard",
    "provenance": "ProvenanceGuard",
    "both": "both",
    "provenance_confirm": "needs a person",
}


def _rate(hits: int, n: int) -> dict[str, Any]:
    return {"n": n, "hits": hits, "rate": hits / n if n else None}


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


async def measure(
    configs: Sequence[Config],
    cases: Sequence[Case],
    per_case: int,
    tasks: Sequence[Task] = TASKS,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Run every benign task and every (task, case, goal) pairing under every configuration."""
    pairs = pairings(cases, per_case, tasks)
    result: dict[str, Any] = {
        "measured_on": {
            "tasks": len(tasks),
            "cases": len(cases),
            "per_case": per_case,
            "attacked_runs_per_config": len(pairs),
            "google-adk": _version("google-adk"),
            "agent-injection-bench": _version("agent-injection-bench"),
            "python": platform.python_version(),
        },
        "split": {"tuning": list(TUNING_STYLES), "held_out": list(HELD_OUT_STYLES)},
        "configs": [c.name for c in configs],
        "asr": {},
        "utility": {},
        "utility_under_attack": {},
        "runs": {},
    }
    for config in configs:
        progress(config.name)
        benign = [await run_one(t, config) for t in tasks]
        attacked = [await run_one(t, config, c, g) for t, c, g in pairs]
        result["asr"][config.name] = _asr(attacked)
        result["utility"][config.name] = _utility(benign, tasks)
        done = sum(o.done for o in attacked)
        result["utility_under_attack"][config.name] = _rate(done, len(attacked))
        result["runs"][config.name] = [asdict(o) for o in benign + attacked]
    return result


def _asr(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        assert o.style is not None
        for key in (f"style:{o.style}", f"goal:{o.goal}", split_of(o.style), "overall"):
            groups.setdefault(key, []).append(o)
    return {k: _rate(sum(o.attacked for o in v), len(v)) for k, v in groups.items()}


def _utility(outcomes: Sequence[Outcome], tasks: Sequence[Task]) -> dict[str, Any]:
    source = {t.id: t.source for t in tasks}
    out: dict[str, Any] = {}
    for key in ("user", "trusted", "untrusted", "all"):
        picked = [o for o in outcomes if key == "all" or source[o.task] == key]
        out[key] = _rate(sum(o.done for o in picked), len(picked))
        out[f"{key}:asked_a_person"] = _rate(sum(o.asked > 0 for o in picked), len(picked))
    return out


def _pct(cell: dict[str, Any] | None) -> str:
    if not cell or cell["rate"] is None:
        return "-"
    return f"{cell['rate']:.1%} ({cell['hits']}/{cell['n']})"


def table(result: dict[str, Any]) -> str:
    """The attack-success and utility tables, as Markdown."""
    names = result["configs"]
    head = "| | " + " | ".join(LABELS.get(n, n) for n in names) + " |"
    rule = "|---" * (len(names) + 1) + "|"
    lines = ["Attack success rate (lower is better)", "", head, rule]
    asr = result["asr"]
    for half, styles in (("held_out", HELD_OUT_STYLES), ("tuning", TUNING_STYLES)):
        for style in styles:
            cells = [_pct(asr[n].get(f"style:{style}")) for n in names]
            lines.append(f"| {style} ({half.replace('_', '-')}) | " + " | ".join(cells) + " |")
    for key, label in (("held_out", "held-out styles"), ("tuning", "tuning styles")):
        lines.append(f"| **{label}** | " + " | ".join(_pct(asr[n].get(key)) for n in names) + " |")
    lines.append("| **all styles** | " + " | ".join(_pct(asr[n]["overall"]) for n in names) + " |")
    lines += ["", "Benign utility: tasks whose consequential calls all completed", "", head, rule]
    rows = (
        ("user", "arguments from the user's request"),
        ("trusted", "arguments from a trusted tool or field"),
        ("untrusted", "arguments from untrusted content"),
        ("all", "all benign tasks"),
        ("all:asked_a_person", "benign tasks that asked a person"),
    )
    for key, label in rows:
        lines.append(f"| {label} | " + " | ".join(_pct(result["utility"][n][key]) for n in names))
        lines[-1] += " |"
    under = result["utility_under_attack"]
    lines.append("| task done while attacked | " + " | ".join(_pct(under[n]) for n in names) + " |")
    return "\n".join(lines)
