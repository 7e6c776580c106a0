"""Cost per KB of each InjectionGuard detector, on benign prose and on hostile input.

Run by ``scenarios.py detectors``. The classifier row uses a one-layer, 32-wide BERT built
from a config (no download): it measures the windowing, tokenising and thread hand-off, not
a production model. Set ``BENCH_CLASSIFIER`` to a local model directory to time a real one.
The judge row uses an instant scripted model: prompt building, the call and parsing only.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from adk_lattice.policy import ClassifierDetector, Detector, JudgeDetector, RulesDetector
from adk_lattice.testing import FakeModel, ScriptedResponse

BENIGN = (Path(__file__).parent.parent / "tests/policy/data/benign.txt").read_text("utf-8")
#: Inputs shaped to make patterns backtrack (the same shapes the tests feed).
HOSTILE = {
    "spaced": "a " * 50_000,
    "comments": "<!--" * 25_000,
    "phrase": "ignore previous " * 6_250,
    "spelled": "i g n o r e " * 8_400,
    "base64": "A" * 100_000 + "=",
    "hex": "aa " * 33_333 + "g",
    "emphasis": "ig**" * 25_000,
    "tag": "<b " + "x" * 100_000,
}


def _prose(size: int) -> str:
    return (BENIGN * (size // len(BENIGN) + 1))[:size]


class _Instant(FakeModel):  # type: ignore[misc]
    """A judge that always answers SAFE at once and keeps no requests."""

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        async for response in FakeModel([ScriptedResponse.text("SAFE")]).generate_content_async(
            llm_request, stream
        ):
            yield response


def _tiny_classifier() -> ClassifierDetector:
    import torch
    import transformers

    torch.set_num_threads(1)
    if os.environ.get("BENCH_CLASSIFIER"):
        return ClassifierDetector(os.environ["BENCH_CLASSIFIER"])
    path = Path(tempfile.mkdtemp())
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(BENIGN.lower().split()))]
    tokenizer = transformers.BertTokenizer(vocab={w: i for i, w in enumerate(vocab)})
    tokenizer.model_max_length = 128
    tokenizer.save_pretrained(path)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        id2label={0: "SAFE", 1: "INJECTION"},
        label2id={"SAFE": 0, "INJECTION": 1},
    )
    transformers.BertForSequenceClassification(config).save_pretrained(path)
    return ClassifierDetector(path, threshold=1.0)


async def _us_per_kb(detector: Detector, text: str, reps: int) -> float:
    """Median microseconds per 1,000 characters over ``reps`` calls (first call discarded)."""
    await detector.detect(text, "tool:bench")
    samples = []
    for _ in range(reps):
        if isinstance(detector, RulesDetector):
            detector._memo.clear()  # time the scan, not the memo
        start = time.perf_counter()
        await detector.detect(text, "tool:bench")
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1e6 / (len(text) / 1000), 1)


async def detectors() -> dict[str, Any]:
    """us per KB of each detector: benign 1 KB / 10 KB / 100 KB, and the worst hostile 100 KB."""
    chain: dict[str, Detector] = {
        "RulesDetector": RulesDetector(),
        "ClassifierDetector (tiny BERT)": _tiny_classifier(),
        "JudgeDetector (instant model)": JudgeDetector(_Instant()),
    }
    results: dict[str, dict[str, Any]] = {}
    for name, detector in chain.items():
        row: dict[str, Any] = {}
        for size in (1_000, 10_000, 100_000):
            reps = 20 if size < 100_000 else 5
            row[f"benign {size // 1000} KB"] = await _us_per_kb(detector, _prose(size), reps)
        hostile = {k: await _us_per_kb(detector, v, 3) for k, v in HOSTILE.items()}
        worst = max(hostile, key=lambda k: hostile[k])
        row["hostile 100 KB, worst"] = f"{hostile[worst]} ({worst})"
        results[name] = row
    return {"scenario": "detectors", "unit": "us per KB, median", "results": results}


if __name__ == "__main__":
    print(asyncio.run(detectors()))
