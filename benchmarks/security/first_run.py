"""One held-out set's first run: every case on every host, then the set's benign runs.

``python -m benchmarks.security.first_run fresh11 [--opaque true|long|false] [--only b:,n:]``
runs each case of ``benchmarks/security/<set>.py`` on every one of its hosts (goals rotating,
as ``classes.class_pairings`` does) under ``ProvenanceGuard`` as the suite declares it
(``on_ungrounded="deny"``; ``--opaque`` sets ``opaque_identifiers``, ``--undefended`` runs no
guard), then the set's benign tasks and its benign door and directory runs, and prints
attack success per class, each style that got through, and the benign runs that did not
complete. The docs' first-run columns are this command's output on the commit each set
first met.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .attacks import GOALS
from .classes import BY_ID
from .declarations import provenance_guard
from .harness import Config, run_one

_MODES = {"true": True, "long": "long", "false": False}


@dataclass
class SetRun:
    """What one set's run measured: ``(hits, runs)`` per class and per style, and the ids
    of benign tasks and benign cases that did not complete."""

    classes: dict[str, list[int]] = field(default_factory=dict)
    styles: dict[str, list[int]] = field(default_factory=dict)
    benign: list[int] = field(default_factory=lambda: [0, 0])
    benign_missed: list[str] = field(default_factory=list)


def config(opaque: bool | str = True, undefended: bool = False) -> Config:
    """The configuration a set is measured under."""
    if undefended:
        return Config("undefended", list)
    return Config("provenance", lambda: [provenance_guard("deny", identifiers=opaque)])


async def measure_set(name: str, cfg: Config, only: Sequence[str] = ()) -> SetRun:
    """Run set ``name`` (``fresh11``) under ``cfg``: every case (of the style prefixes in
    ``only``, all when empty) on every host, then its benign tasks and benign cases."""
    module = importlib.import_module(f"benchmarks.security.{name}")
    cases = [
        c for c in getattr(module, f"{name}_cases")() if not only or c.style.startswith(tuple(only))
    ]
    out = SetRun()
    for i, case in enumerate(cases):
        for j, host in enumerate(case.hosts):
            task = BY_ID[host]
            goal = case.goal(task) if case.goal else GOALS[(i + j) % len(GOALS)]
            hit = int((await run_one(task, cfg, case, goal)).attacked)
            for table, key in ((out.classes, case.klass), (out.styles, case.style)):
                cell = table.setdefault(key, [0, 0])
                cell[0] += hit
                cell[1] += 1
    if only:
        return out
    tasks = getattr(module, f"{name.upper()}_TASKS")
    runs = [(t.id, await run_one(t, cfg)) for t in tasks]
    for case in getattr(module, f"{name}_benign_cases")():
        runs += [(case.id, await run_one(BY_ID[h], cfg, case)) for h in case.hosts]
    out.benign = [sum(o.done for _, o in runs), len(runs)]
    out.benign_missed = [key for key, o in runs if not o.done]
    return out


def report(run: SetRun) -> str:
    """The printed figures of one set's run."""
    lines = [f"{k}: {h}/{n} = {h / n:.1%}" for k, (h, n) in run.classes.items()]
    lines += [f"  {k}: {h}/{n}" for k, (h, n) in run.styles.items() if h]
    if run.benign[1]:
        lines.append(f"benign: {run.benign[0]}/{run.benign[1]}")
        lines += [f"  not completed: {key}" for key in Counter(run.benign_missed)]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("set", help="the module's name, e.g. fresh11")
    parser.add_argument("--opaque", choices=sorted(_MODES), default="true")
    parser.add_argument("--undefended", action="store_true")
    parser.add_argument("--only", default="", help="style prefixes, comma-separated")
    args = parser.parse_args()
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    only = [p for p in args.only.split(",") if p]
    run = asyncio.run(measure_set(args.set, config(_MODES[args.opaque], args.undefended), only))
    print(report(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
