"""Mutation testing of the measured modules, with a per-module report.

Runs mutmut (configured under ``[tool.mutmut]`` in pyproject.toml) on the chosen modules,
then writes a report: per module the mutants killed, survived, timed out and otherwise
left, the score, the time its mutants took, and every survivor with its diff. Mutants
listed as equivalent under ``[tool.adk_lattice.mutation.equivalent]`` (with the reason) are
reported as such and left out of the score, as long as their diff is still the one recorded
there; a listed mutant whose diff changed (the code moved) counts as a survivor again.

mutmut keeps its results under ``mutants/``, so an interrupted pass resumes where it
stopped: only mutants without a result run (``--retest`` runs the survivors again, after
new tests). The chosen modules' mutants run in one mutmut run: each run first runs every
test that reaches the mutants once unchanged (a minute or two when the core is among them),
so one run for all of them pays that once, and mutmut runs the quickest mutants first.

Usage::

    python scripts/mutation.py                  # every module below, then the report
    python scripts/mutation.py _records cache._keys
    python scripts/mutation.py --retest _records # the survivors again, after new tests
    python scripts/mutation.py --report-only    # the report from the results so far
    python scripts/mutation.py --sample 60      # at most 60 mutants a module, the same each run
    python scripts/mutation.py --changed main   # only the modules changed since main

Test files the shared selection leaves out (the torch classifier's) are asked back for the
module they measure (``OWN_TESTS``): that module's pass collects them once, in the process
mutmut forks each mutant from.

A sampled pass picks each module's mutants by a hash of their names, so the same sample is
run again after new tests (and a larger ``--sample`` adds to it). Its report gives, beside
the score over the mutants checked, the Wilson 95% lower bound on the module's score.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import hashlib
import json
import math
import os
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "adk_lattice"
#: mutmut's own command (``python -m mutmut`` would import the package twice).
MUTMUT = str(Path(sys.executable).parent / "mutmut")


def _measured() -> tuple[str, ...]:
    """The modules measured, dotted under the package: the files ``[tool.mutmut]`` mutates
    (``only_mutate`` less ``do_not_mutate``), package ``__init__`` files left out."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    files = {p for pat in cfg["only_mutate"] for p in ROOT.glob(pat) if p.suffix == ".py"}
    skip = cfg.get("do_not_mutate", [])
    names = []
    for path in sorted(files):
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" or any(fnmatch.fnmatch(rel, pat) for pat in skip):
            continue
        names.append(rel.removeprefix(f"src/{PACKAGE}/").removesuffix(".py").replace("/", "."))
    return tuple(names)


#: The modules measured, in the order a pass runs them.
MODULES = _measured()

#: Test files ``[tool.mutmut]`` leaves out of every pass (``--ignore``: importing torch takes
#: longer than most modules' tests), asked back for the one module they measure. Its pass
#: collects them in mutmut's parent process, so torch is imported once there and every
#: mutant's fork starts with it loaded (see ``pytest_ignore_collect`` in tests/conftest.py).
OWN_TESTS = {"policy.injection.classifier": ("tests/policy/test_injection_classifier.py",)}
#: The variable that asks them back.
OWN_TESTS_VAR = "ADK_LATTICE_MUTATION_TESTS"

#: mutmut's exit codes, grouped as the report counts them.
STATUS = {1: "killed", 3: "killed", 0: "survived", 36: "timeout", 24: "timeout", -24: "timeout"}
STATUS |= {152: "timeout", 255: "timeout", None: "not checked", 5: "no tests", 33: "no tests"}


@dataclass
class Module:
    """The results of one module."""

    name: str
    counts: Counter[str] = field(default_factory=Counter)
    survivors: list[tuple[str, str]] = field(default_factory=list)
    equivalent: list[tuple[str, str]] = field(default_factory=list)
    #: Seconds its mutants took (each from its fork to its exit, two or more at once).
    seconds: float = 0.0

    @property
    def score(self) -> float | None:
        """Killed and timed-out mutants over every mutant checked, equivalents left out; a
        mutant no test reaches counts as a survivor."""
        checked = self.checked
        if not checked:
            return None
        return (self.counts["killed"] + self.counts["timeout"]) / checked

    @property
    def checked(self) -> int:
        """Mutants with a result, equivalents left out."""
        return sum(n for s, n in self.counts.items() if s != "not checked")

    @property
    def low(self) -> float | None:
        """The Wilson 95% lower bound on the score: what a sample says at worst."""
        n = self.checked
        if not n or self.score is None:
            return None
        return wilson_low(self.score, n)


def wilson_low(p: float, n: int, z: float = 1.96) -> float:
    """The lower end of the Wilson score interval for a proportion ``p`` seen in ``n`` trials."""
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


def sample(names: list[str], size: int | None) -> list[str]:
    """At most ``size`` of ``names``, chosen by a hash of each name: the same on every run,
    and a larger size keeps the smaller one's picks."""
    if size is None or len(names) <= size:
        return sorted(names)
    ranked = sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    return sorted(ranked[:size])


def changed_modules(base: str, modules: tuple[str, ...]) -> tuple[str, ...]:
    """The measured modules whose source changed since the git revision ``base``."""
    out = subprocess.run(
        ["git", "diff", "--name-only", base, "--", f"src/{PACKAGE}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    paths = {p.removeprefix(f"src/{PACKAGE}/").removesuffix(".py").replace("/", ".") for p in out}
    return tuple(m for m in modules if m in paths)


def env(module: str) -> dict[str, str]:
    """The environment of a module's mutmut run: its own test files asked back, if any."""
    out = {k: v for k, v in os.environ.items() if k != OWN_TESTS_VAR}
    if module in OWN_TESTS:
        out[OWN_TESTS_VAR] = os.pathsep.join(OWN_TESTS[module])
    return out


def _meta(module: str) -> Path:
    return ROOT / "mutants" / "src" / PACKAGE / (module.replace(".", "/") + ".py.meta")


def _show(mutant: str, module: str) -> str:
    """``mutmut show``'s diff, read in this process (a ``mutmut show`` per survivor costs a
    second each, minutes for a full pass's report)."""
    try:
        from mutmut.mutation.diff_apply import get_diff_for_mutant
    except ImportError:  # another mutmut: ask its command
        return subprocess.run(
            [MUTMUT, "show", mutant], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout
    path = f"src/{PACKAGE}/{module.replace('.', '/')}.py"
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        return str(get_diff_for_mutant(mutant, path=path))
    finally:
        os.chdir(old)


def _diff(mutant: str, module: str) -> str:
    """The changed lines of a mutant, as ``mutmut show`` prints them."""
    out = _show(mutant, module)
    lines = [ln for ln in out.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    return "\n".join(ln.rstrip() for ln in lines)


def _codes(module: str) -> dict[str, int | None] | None:
    meta = _meta(module)
    if not meta.exists():
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return codes


def _durations(module: str) -> dict[str, float]:
    meta = _meta(module)
    if not meta.exists():
        return {}
    durations: dict[str, float] = json.loads(meta.read_text()).get("durations_by_key", {})
    return durations


def _generate(modules: tuple[str, ...]) -> None:
    """Have mutmut write the mutants (and trace the tests) without running any, when a chosen
    module has none yet: the names to run are then chosen here (equivalents left out)."""
    if all(_meta(m).exists() for m in modules):
        return
    subprocess.run(
        [MUTMUT, "run", f"{PACKAGE}.__none__"],
        cwd=ROOT,
        env=env(""),
        capture_output=True,
        check=False,
    )


def is_equivalent(mutant: str, module: str, equivalent: dict[str, dict[str, str]]) -> bool:
    """Whether a mutant is listed as equivalent with the diff it still has."""
    known = equivalent.get(mutant)
    if known is None:
        return False
    return known.get("diff", "").strip() == _diff(mutant, module).strip()


def targets(
    module: str,
    *,
    retest: bool,
    size: int | None = None,
    equivalent: dict[str, dict[str, str]] | None = None,
) -> list[str]:
    """The mutants of a module to run: all of them (or the sample of ``size``) the first
    time, then only those without a result (an interrupted pass, or code that changed),
    plus the survivors and the mutants no test reached with ``retest`` (a test traced since
    may reach them now). Mutants listed as equivalent with their current diff are not run:
    no test can kill them, and a survivor runs every test that reaches it.

    mutmut re-runs every mutant named on its command line, and with no name it runs every
    module, so the names are chosen here; a module whose every mutant is to run is named
    by a pattern (the command line stays short).
    """
    codes = _codes(module)
    if codes is None:
        return [f"{PACKAGE}.{module}.*"]
    wanted = {None, 0, 5, 33} if retest else {None}
    known = equivalent or {}
    picked = [
        name
        for name in sample(list(codes), size)
        if codes[name] in wanted and not (name in known and is_equivalent(name, module, known))
    ]
    if size is None and len(picked) == len(codes):
        return [f"{PACKAGE}.{module}.*"]
    return picked


def collect(module: str, equivalent: dict[str, dict[str, str]]) -> Module:
    """Read mutmut's results for one module."""
    result = Module(module)
    codes = _codes(module) or {}
    durations = _durations(module)
    result.seconds = sum(durations.get(m, 0.0) for m, code in codes.items() if code is not None)
    for mutant, code in sorted(codes.items()):
        status = STATUS.get(code, "suspicious")
        unkilled = status in ("survived", "no tests", "not checked")  # not run, or survived
        if unkilled and is_equivalent(mutant, module, equivalent):
            result.equivalent.append((mutant, equivalent[mutant]["reason"]))
            continue
        if status in ("survived", "no tests"):
            diff = _diff(mutant, module)
            note = " (no test reaches it)" if status == "no tests" else ""
            result.survivors.append((mutant + note, diff))
        result.counts[status] += 1
    return result


def report(results: list[Module]) -> str:
    """The report as Markdown."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# Mutation report ({when})",
        "",
        "| module | mutants | checked | killed | survived | timeout | equivalent | other "
        "| score | 95% low | mutant time |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        c = m.counts
        other = sum(n for s, n in c.items() if s not in ("killed", "survived", "timeout"))
        other -= c["not checked"]
        total = sum(c.values()) + len(m.equivalent)
        score = "-" if m.score is None else f"{m.score:.1%}"
        low = "-" if m.low is None else f"{m.low:.1%}"
        lines.append(
            f"| {m.name} | {total} | {m.checked + len(m.equivalent)} | {c['killed']} "
            f"| {c['survived']} | {c['timeout']} | {len(m.equivalent)} | {other} | {score} "
            f"| {low} | {m.seconds / 60:.1f} min |"
        )
    for m in results:
        if not m.survivors:
            continue
        lines += ["", f"## Survivors in {m.name}", ""]
        for mutant, diff in m.survivors:
            lines += [f"- `{mutant}`", "", "  ```diff", *(f"  {d}" for d in diff.splitlines())]
            lines += ["  ```", ""]
    return "\n".join(lines) + "\n"


def _run(names: list[str], max_children: int, environ: dict[str, str]) -> None:
    """One mutmut run over the named mutants (an interrupt ends it, the report still runs)."""
    cmd = [MUTMUT, "run", "--max-children", str(max_children)]
    with contextlib.suppress(KeyboardInterrupt):
        subprocess.run([*cmd, *names], cwd=ROOT, env=environ, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"dotted modules (default: {MODULES})")
    parser.add_argument("--report-only", action="store_true", help="only write the report")
    parser.add_argument("--retest", action="store_true", help="run the survivors again too")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run at once")
    parser.add_argument("--sample", type=int, help="at most this many mutants a module")
    parser.add_argument("--changed", metavar="REV", help="only modules changed since REV")
    parser.add_argument("--output", default="mutation-report.md", help="the report's path")
    args = parser.parse_args()
    modules = tuple(args.modules) or MODULES
    if args.changed:
        modules = changed_modules(args.changed, modules)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    equivalent = config["tool"]["adk_lattice"]["mutation"]["equivalent"]
    started = time.monotonic()
    if not args.report_only:
        _generate(modules)
        names: list[str] = []
        for module in modules:
            picked = targets(module, retest=args.retest, size=args.sample, equivalent=equivalent)
            print(f"mutation: {module}: {len(picked)} to run", flush=True)
            if picked and module in OWN_TESTS:  # its own tests: a run of its own
                _run(picked, args.max_children, env(module))
            else:
                names += picked
        if names:
            _run(names, args.max_children, env(""))
    results = [collect(m, equivalent) for m in modules]
    text = report(results)
    if not args.report_only:
        text += f"\nWall time of this run: {(time.monotonic() - started) / 60:.1f} min.\n"
    (ROOT / args.output).write_text(text)
    print(text.split("\n## ")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
