"""``make bench-cache``: the semantic cache's false hits and paraphrase hits, measured.

Builds the sets of ``semantic_sets.py``, embeds every text once with the offline default
backend (``WordLlamaEmbedder``), and decides each pair as ``SemanticResponseCache`` does:
a hit when the similarity reaches the threshold and no guard refuses. The threshold and
the content share are tuned on one half of the families (the most paraphrase hits with no
false hit), then reported on the held-out half; then the attack pairs, written after
tuning with near-miss classes the sets lack, are reported with the tuned settings.

Prints markdown tables and writes the figures as JSON (first argument, default
``semantic-results.json``).
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semantic_sets import ATTACKS, Pair, half, pairs  # this folder is sys.path[0]

from adk_lattice.cache import GUARDS, NearMissGuards, WordLlamaEmbedder
from adk_lattice.cache._embedding import embedding_text
from adk_lattice.cache._guards import content_change, content_replaced, parse

THRESHOLDS = [round(0.5 + 0.01 * i, 2) for i in range(50)]
SHARES = [0.0, 0.2, 0.25, 0.34, 0.4, 0.5, 0.6, 1.0]
MARGIN = 0.05
_ALL_BUT_CONTENT = NearMissGuards(max_content_change=1.0)


@dataclass
class Scored:
    pair: Pair
    similarity: float
    reasons: tuple[str, ...]  # every guard but content
    change: float  # content share
    replaced: bool  # a content word replaced by another

    def refused_by(self, share: float, off: str | None = None) -> tuple[str, ...]:
        found = [r for r in self.reasons if r != off]
        if off != "content" and (self.replaced or self.change > share):
            found.append("content")
        return tuple(found)

    def hit(self, threshold: float, share: float, off: str | None = None) -> bool:
        return self.similarity >= threshold and not self.refused_by(share, off)


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float:
    """The exact (Clopper-Pearson) one-sided upper bound of a rate seen k times in n."""
    if n == 0:
        return 1.0
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        cdf = sum(math.exp(_log_pmf(n, i, mid)) for i in range(k + 1))
        lo, hi = (mid, hi) if cdf > 1 - confidence else (lo, mid)
    return hi


def _log_pmf(n: int, i: int, p: float) -> float:
    log_comb = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
    return log_comb + i * math.log(p) + (n - i) * math.log1p(-p)


def score(all_pairs: list[Pair], embed: Any) -> list[Scored]:
    texts = sorted({t for p in all_pairs for t in (p.stored, p.asked)})
    vectors = dict(zip(texts, embed(texts), strict=True))
    out = []
    for p in all_pairs:
        sim = float(vectors[p.stored] @ vectors[p.asked])
        out.append(
            Scored(
                p,
                sim,
                _ALL_BUT_CONTENT.refusals(p.stored, p.asked)[:],
                content_change(parse(p.stored), parse(p.asked)),
                content_replaced(parse(p.stored), parse(p.asked)),
            )
        )
    for s in out:
        s.reasons = tuple(r for r in s.reasons if r != "content")
    return out


def summary(rows: list[Scored], threshold: float, share: float) -> dict[str, Any]:
    misses = [s for s in rows if not s.pair.same]
    paras = [s for s in rows if s.pair.same]
    false = [s for s in misses if s.hit(threshold, share)]
    hits = sum(s.hit(threshold, share) for s in paras)
    reworded = [s for s in paras if s.pair.kind == "paraphrase"]
    surface = [s for s in paras if s.pair.kind == "surface"]
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in misses:
        by_class[s.pair.kind][0] += 1
        by_class[s.pair.kind][1] += s.hit(threshold, share)
    return {
        "near_miss_pairs": len(misses),
        "false_hits": len(false),
        "false_hit_upper_95": round(upper_bound(len(false), len(misses)), 6),
        "paraphrase_pairs": len(paras),
        "paraphrase_hits": hits,
        "paraphrase_hit_rate": round(hits / len(paras), 4) if paras else 0.0,
        "reworded_hit_rate": _rate(reworded, threshold, share),
        "surface_hit_rate": _rate(surface, threshold, share),
        "near_misses_by_class": {
            k: {"pairs": v[0], "false_hits": v[1]} for k, v in sorted(by_class.items())
        },
        "false_hit_examples": [[s.pair.stored, s.pair.asked] for s in false[:5]],
    }


def _rate(rows: list[Scored], threshold: float, share: float) -> float:
    return round(sum(s.hit(threshold, share) for s in rows) / len(rows), 4) if rows else 0.0


def per_guard(rows: list[Scored], threshold: float, share: float) -> dict[str, Any]:
    """For each guard: near misses and paraphrases (above the threshold) it refused, and the
    false hits with that guard alone turned off."""
    above = [s for s in rows if s.similarity >= threshold]
    out: dict[str, Any] = {}
    for guard in GUARDS:
        refused_miss = sum(guard in s.refused_by(share) for s in above if not s.pair.same)
        refused_para = sum(guard in s.refused_by(share) for s in above if s.pair.same)
        only = sum(s.refused_by(share) == (guard,) for s in above if not s.pair.same)
        off = sum(s.hit(threshold, share, off=guard) for s in rows if not s.pair.same)
        out[guard] = {
            "near_misses_refused": refused_miss,
            "near_misses_only_it_refused": only,
            "paraphrases_refused": refused_para,
            "false_hits_without_it": off,
        }
    return out


def tune(rows: list[Scored], margin: float = MARGIN) -> tuple[float, float]:
    """The threshold and share with the most paraphrase hits, among those with no false hit
    even ``margin`` below that threshold and one share step above that share.

    The margin keeps the choice off the edge of the tuning half: the setting that is
    just clean there is the one most likely to let a held-out near miss through.
    """
    misses = [s for s in rows if not s.pair.same]
    best: tuple[int, float, float] | None = None
    for k, share in enumerate(SHARES):
        looser = SHARES[min(k + 1, len(SHARES) - 1)]
        for threshold in THRESHOLDS:
            if any(s.hit(threshold - margin, looser) for s in misses):
                continue
            hits = sum(s.hit(threshold, share) for s in rows if s.pair.same)
            if best is None or (hits, threshold, -share) > (best[0], best[1], -best[2]):
                best = (hits, threshold, share)
    assert best is not None, "no setting without false hits"
    return best[1], best[2]


def attacks(threshold: float, share: float, embed: Any) -> dict[str, Any]:
    guards = NearMissGuards(max_content_change=share)
    texts = [t.replace("{c}", "Acme") for pair in ATTACKS for t in pair[1:]]
    vectors = embed(texts)
    rows = []
    for i, (kind, _a, _b) in enumerate(ATTACKS):
        a, b = texts[2 * i], texts[2 * i + 1]
        sim = float(vectors[2 * i] @ vectors[2 * i + 1])
        reasons = guards.refusals(a, b)
        rows.append(
            {
                "class": kind,
                "stored": a,
                "asked": b,
                "similarity": round(sim, 4),
                "refused_by": list(reasons),
                "false_hit": sim >= threshold and not reasons,
            }
        )
    leaks = [r for r in rows if r["false_hit"]]
    return {"pairs": len(rows), "false_hits": len(leaks), "leaks": leaks, "rows": rows}


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("semantic-results.json")
    backend = WordLlamaEmbedder()
    model = backend._model

    def embed(texts: list[str]) -> Any:  # as the cache embeds them, in one batch
        return model.embed([embedding_text(t) for t in texts], norm=True)

    rows = score(list(pairs()), embed)
    tuned = [s for s in rows if half(s.pair.family) == "tune"]
    held = [s for s in rows if half(s.pair.family) == "held_out"]
    threshold, share = tune(tuned)
    report: dict[str, Any] = {
        "backend": backend.name,
        "threshold": threshold,
        "max_content_change": share,
        "tune": summary(tuned, threshold, share),
        "held_out": summary(held, threshold, share),
        "all": summary(rows, threshold, share),
        "per_guard_all": per_guard(rows, threshold, share),
        "attacks": attacks(threshold, share, embed),
    }
    # What the embedding alone would serve (a similarity threshold and no guard).
    misses = [s for s in rows if not s.pair.same]
    paras = [s for s in rows if s.pair.same]
    report["embedding_alone"] = {
        str(t): {
            "false_hits": sum(s.similarity >= t for s in misses),
            "near_miss_pairs": len(misses),
            "paraphrase_hit_rate": round(sum(s.similarity >= t for s in paras) / len(paras), 4),
        }
        for t in (0.8, 0.9, 0.95, threshold)
    }
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(_tables(report))
    print(f"\nJSON: {target}")
    return 0


def _tables(r: dict[str, Any]) -> str:
    out = [
        f"backend {r['backend']}, threshold {r['threshold']},"
        f" max_content_change {r['max_content_change']}",
        "",
    ]
    out.append(
        "| half | near-miss pairs | false hits | 95% upper bound | paraphrase pairs"
        " | paraphrase hits | reworded | surface |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for name in ("tune", "held_out", "all"):
        s = r[name]
        out.append(
            f"| {name} | {s['near_miss_pairs']} | {s['false_hits']} | "
            f"{s['false_hit_upper_95'] * 100:.3f}% | {s['paraphrase_pairs']} | "
            f"{s['paraphrase_hit_rate'] * 100:.1f}% | {s['reworded_hit_rate'] * 100:.1f}% | "
            f"{s['surface_hit_rate'] * 100:.1f}% |"
        )
    out += [
        "",
        "| guard | near misses refused | only it refused | paraphrases refused"
        " | false hits without it |",
        "|---|---|---|---|---|",
    ]
    for guard, g in r["per_guard_all"].items():
        out.append(
            f"| {guard} | {g['near_misses_refused']} | {g['near_misses_only_it_refused']} | "
            f"{g['paraphrases_refused']} | {g['false_hits_without_it']} |"
        )
    out += ["", "| near-miss class | pairs | false hits |", "|---|---|---|"]
    for kind, c in r["all"]["near_misses_by_class"].items():
        out.append(f"| {kind} | {c['pairs']} | {c['false_hits']} |")
    out += ["", "| embedding alone, threshold | false hits | paraphrase hits |", "|---|---|---|"]
    for t, e in r["embedding_alone"].items():
        out.append(
            f"| {t} | {e['false_hits']} of {e['near_miss_pairs']} |"
            f" {e['paraphrase_hit_rate'] * 100:.1f}% |"
        )
    a = r["attacks"]
    out += ["", f"attacks written after tuning: {a['false_hits']} false hits of {a['pairs']} pairs"]
    for leak in a["leaks"]:
        out.append(
            f"- {leak['class']}: {leak['stored']!r} -> {leak['asked']!r} ({leak['similarity']})"
        )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
