"""Run every benchmark scenario, each in its own process, and print one table.

``make bench`` runs this; the JSON of all results goes to ``bench-results.json`` (or the
path given as the first argument).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from targets import targets  # this folder is sys.path[0]

HERE = Path(__file__).resolve().parent
ORDER = (
    "dispatch",
    "per_turn_text",
    "per_turn_tool",
    "cache",
    "semantic_cache",
    "throughput",
    "memory",
    "detectors",
    "redact",
    "scan",
    "stream",
)
LABELS = {
    "bare": "bare ADK",
    "noop": "ADK + no-op BasePlugin",
    "empty": "empty Lattice",
    "telemetry": "Lattice, telemetry only",
    "bundle": "Lattice, realistic bundle",
    "bundle_shadow": "the bundle, InjectionGuard and RedactPII in shadow mode",
    "openinference": "openinference-instrumentation-google-adk",
}


def _machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }


def run(name: str) -> dict[str, Any]:
    """Run one scenario in a fresh process and parse its JSON line."""
    proc = subprocess.run(
        [sys.executable, str(HERE / "scenarios.py"), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return {"scenario": name, "error": proc.stderr.strip().splitlines()[-1:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def table(results: list[dict[str, Any]]) -> str:
    """Markdown tables of every scenario."""
    out: list[str] = []
    for r in results:
        out.append(f"\n### {r['scenario']}" + (f" ({r['unit']})" if "unit" in r else ""))
        if "error" in r:
            out.append(f"failed: {r['error']}")
            continue
        for title, rows in _sections(r):
            if title:
                out.append(f"\n{title}")
            keys = list(next(iter(rows.values())).keys())
            out.append("| configuration | " + " | ".join(keys) + " |")
            out.append("|---" * (len(keys) + 1) + "|")
            for name, row in rows.items():
                cells = " | ".join(str(row[k]) for k in keys)
                out.append(f"| {LABELS.get(name, name)} | {cells} |")
    return "\n".join(out)


def _sections(r: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if "results" in r:
        return [("", r["results"])]
    return [(k, v) for k, v in r.items() if isinstance(v, dict) and v]


def main() -> int:
    """Run all scenarios in order, print the table, write the JSON."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bench-results.json")
    only = os.environ.get("BENCH_ONLY", "").split(",")
    selected = [s for s in ORDER if only == [""] or s in only]
    results = []
    for name in selected:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results.append(run(name))
    report = {"machine": _machine(), "results": results}
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"machine: {json.dumps(report['machine'])}")
    print(table(results))
    print("\n### targets\n")
    print(targets(results))
    print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
