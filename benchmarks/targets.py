"""The performance targets, each judged on ratios measured in the same ``make bench`` run."""

from __future__ import annotations

from typing import Any


def _by_name(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["scenario"]: r for r in results if "error" not in r}


def _scan(r: dict[str, Any]) -> list[tuple[str, str, bool]]:
    rows = []
    throughput = r["throughput (us per text)"]
    worst = max(throughput, key=lambda k: throughput[k]["both_to_floor"])
    slowest = min(v["MB_per_s"] for v in throughput.values())
    rows.append(
        (
            "InjectionGuard + RedactPII scan benign prose and JSON (1 KB to 1 MB) at most 20x "
            "BLAKE2b of the same bytes",
            f"{throughput[worst]['both_to_floor']}x at worst ({worst}); {slowest} MB/s slowest",
            throughput[worst]["both_to_floor"] <= 20,
        )
    )
    hostile = r["hostile 100 KB against benign prose of 100 KB"]
    for guard in ("injection", "redact"):
        key = f"{guard}_to_benign"
        shape = max(hostile, key=lambda k: hostile[k][key])
        rows.append(
            (
                f"{'InjectionGuard' if guard == 'injection' else 'RedactPII'}: 100 KB hostile "
                "input at most 3x benign of the same size",
                f"{hostile[shape][key]}x at worst ({shape})",
                hostile[shape][key] <= 3,
            )
        )
    return rows


def targets(results: list[dict[str, Any]]) -> str:
    """A markdown table: each target, the figure this run measured, met or not."""
    got = _by_name(results)
    rows: list[tuple[str, str, bool]] = []
    if "scan" in got:
        rows += _scan(got["scan"])
    if all(k in got for k in ("per_turn_text", "per_turn_tool")):
        bundle = [got[k]["results"]["bundle"] for k in ("per_turn_text", "per_turn_tool")]
        turns = [b["ratio"] for b in bundle]
        cpu = [b.get("cpu_ratio") for b in bundle]
        rows.append(
            (
                "realistic bundle (with ToolGuard) adds at most 5% to a bare turn",
                f"{turns[0]}x text-only, {turns[1]}x tool turn (CPU time: {cpu[0]}x, {cpu[1]}x)",
                # Met only when both measures say so: a loaded machine disturbs either.
                max(turns + [c for c in cpu if c is not None]) <= 1.05,
            )
        )
    if "throughput" in got:
        bundle = got["throughput"]["results"]["bundle"]
        ratio = bundle["ratio"]
        rows.append(
            (
                "200 concurrent sessions with the bundle: at least 0.95x bare turns per second",
                f"{ratio}x (per CPU second: {bundle.get('cpu_ratio')}x)",
                min(ratio, bundle.get("cpu_ratio", ratio)) >= 0.95,
            )
        )
    if "stream" in got:
        s = got["stream"]["results"]
        worst = max(v["worst_chunks"] for v in s.values())
        median = max(v["median_chunks"] for v in s.values())
        rows.append(
            (
                "RedactPII streaming: text with no value held back at most one chunk",
                f"median up to {median} chunks, worst {worst} chunks",
                worst <= 1,
            )
        )
    out = ["| target | this run | met |", "|---|---|---|"]
    out += [f"| {t} | {figure} | {'met' if ok else '**not met**'} |" for t, figure, ok in rows]
    return "\n".join(out)
