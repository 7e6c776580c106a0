"""Mutation testing, one module at a time, with a per-module report.

Runs mutmut (configured under ``[tool.mutmut]`` in pyproject.toml) on each module in turn,
then writes a report: per module the mutants killed, survived, timed out and otherwise
left, the score, and every survivor with its diff. Mutants listed as equivalent under
``[tool.adk_lattice.mutation.equivalent]`` (with the reason) are reported as such and left
out of the score, as long as their diff is still the one recorded there; a listed mutant
whose diff changed (the code moved) counts as a survivor again.

mutmut keeps its results under ``mutants/``, so an interrupted pass resumes where it
stopped: only mutants without a result run (``--retest`` runs the survivors again, after
new tests).

Usage::

    python scripts/mutation.py                  # every module below, then the report
    python scripts/mutation.py _records cache._keys
    python scripts/mutation.py --retest _records # the survivors again, after new tests
    python scripts/mutation.py --report-only    # the report from the results so far
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "adk_lattice"
#: mutmut's own command (``python -m mutmut`` would import the package twice).
MUTMUT = str(Path(sys.executable).parent / "mutmut")

#: The modules measured, in the order a pass runs them (dotted, under the package).
MODULES = (
    "_records",
    "_dispatch",
    "_chain",
    "_handlers",
    "policy.arguments",
    "policy.tool_guard",
    "policy.approval",
    "policy.redact",
    "cache._keys",
    "cache._response",
    "cache._tool",
    "stores._base",
    "stores._memory",
    "stores._sqlite",
)

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

    @property
    def score(self) -> float | None:
        """Killed and timed-out mutants over every mutant checked, equivalents left out."""
        checked = sum(n for s, n in self.counts.items() if s not in ("not checked", "no tests"))
        if not checked:
            return None
        return (self.counts["killed"] + self.counts["timeout"]) / checked


def _meta(module: str) -> Path:
    return ROOT / "mutants" / "src" / PACKAGE / (module.replace(".", "/") + ".py.meta")


def _diff(mutant: str) -> str:
    """The changed lines of a mutant, as ``mutmut show`` prints them."""
    out = subprocess.run(
        [MUTMUT, "show", mutant],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    lines = [ln for ln in out.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    return "\n".join(ln.rstrip() for ln in lines)


def _codes(module: str) -> dict[str, int | None] | None:
    meta = _meta(module)
    if not meta.exists():
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return codes


def targets(module: str, *, retest: bool) -> list[str]:
    """The mutants of a module to run: all of them the first time, then only those without
    a result (an interrupted pass, or code that changed), plus the survivors with ``retest``.

    mutmut re-runs every mutant named on its command line, and with no name it runs every
    module, so the names are chosen here.
    """
    codes = _codes(module)
    if codes is None:
        return [f"{PACKAGE}.{module}.*"]
    wanted = {None, 0} if retest else {None}
    return sorted(name for name, code in codes.items() if code in wanted)


def collect(module: str, equivalent: dict[str, dict[str, str]]) -> Module:
    """Read mutmut's results for one module."""
    result = Module(module)
    codes = _codes(module) or {}
    for mutant, code in sorted(codes.items()):
        status = STATUS.get(code, "suspicious")
        if status == "survived":
            diff = _diff(mutant)
            known = equivalent.get(mutant)
            if known is not None and known.get("diff", "").strip() == diff.strip():
                result.equivalent.append((mutant, known["reason"]))
                continue
            result.survivors.append((mutant, diff))
        result.counts[status] += 1
    return result


def report(results: list[Module]) -> str:
    """The report as Markdown."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# Mutation report ({when})",
        "",
        "| module | mutants | killed | survived | timeout | equivalent | other | score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        c = m.counts
        other = sum(n for s, n in c.items() if s not in ("killed", "survived", "timeout"))
        total = sum(c.values()) + len(m.equivalent)
        score = "-" if m.score is None else f"{m.score:.1%}"
        lines.append(
            f"| {m.name} | {total} | {c['killed']} | {c['survived']} | {c['timeout']} "
            f"| {len(m.equivalent)} | {other} | {score} |"
        )
    for m in results:
        if not m.survivors:
            continue
        lines += ["", f"## Survivors in {m.name}", ""]
        for mutant, diff in m.survivors:
            lines += [f"- `{mutant}`", "", "  ```diff", *(f"  {d}" for d in diff.splitlines())]
            lines += ["  ```", ""]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"dotted modules (default: {MODULES})")
    parser.add_argument("--report-only", action="store_true", help="only write the report")
    parser.add_argument("--retest", action="store_true", help="run the survivors again too")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run at once")
    parser.add_argument("--output", default="mutation-report.md", help="the report's path")
    args = parser.parse_args()
    modules = tuple(args.modules) or MODULES
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    equivalent = config["tool"]["adk_lattice"]["mutation"]["equivalent"]
    if not args.report_only:
        for module in modules:
            names = targets(module, retest=args.retest)
            print(f"mutation: {module}: {len(names)} to run", flush=True)
            if names:
                cmd = [MUTMUT, "run", "--max-children", str(args.max_children)]
                subprocess.run([*cmd, *names], cwd=ROOT, check=False)
    results = [collect(m, equivalent) for m in modules]
    text = report(results)
    (ROOT / args.output).write_text(text)
    print(text.split("\n## ")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
