"""``make bench-cache`` runs and its figures hold: no false hit, the shipped defaults tuned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adk_lattice.cache import DEFAULT_THRESHOLD, NearMissGuards

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON the benchmark writes, from one run in a child process."""
    target = tmp_path_factory.mktemp("bench") / "semantic-results.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "semantic_eval.py"), str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(target.read_text()))


def test_the_shipped_defaults_are_the_tuned_settings(figures: dict[str, Any]) -> None:
    """DEFAULT_THRESHOLD is the tuning half's choice or one step under it; the share is its."""
    # The seeded sets are the same on every install, the embedding's last digits are not:
    # the tuning chooses 0.84 or 0.87 (docs/cache.md); a looser choice than that fails.
    assert DEFAULT_THRESHOLD <= figures["threshold"] <= DEFAULT_THRESHOLD + 0.03 + 1e-9
    assert figures["max_content_change"] == NearMissGuards().max_content_change


def test_the_held_out_half_has_no_false_hit(figures: dict[str, Any]) -> None:
    """On families never seen while tuning, no near miss is served."""
    held = figures["held_out"]
    assert (held["false_hits"], held["near_miss_pairs"] >= 2000) == (0, True)
    assert held["false_hit_upper_95"] <= 0.0015


def test_at_least_half_the_paraphrases_hit(figures: dict[str, Any]) -> None:
    """Both halves serve at least half of their paraphrases."""
    assert figures["tune"]["paraphrase_hit_rate"] >= 0.5
    assert figures["held_out"]["paraphrase_hit_rate"] >= 0.5


def test_the_tuning_and_held_out_families_are_apart() -> None:
    """No family is in both halves, and each half has families."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from semantic_sets import FAMILIES, half
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    halves = {f.name: half(f.name) for f in FAMILIES}
    assert set(halves.values()) == {"tune", "held_out"}
    assert len(halves) == len(FAMILIES)
