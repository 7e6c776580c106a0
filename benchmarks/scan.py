"""What the two text guards cost per byte, on benign and hostile text, and in a stream.

Run by ``scenarios.py scan`` and ``scenarios.py stream``.

- ``scan``: ``InjectionGuard`` (its rules) and ``RedactPII`` together on benign English prose
  and JSON tool output of 1 KB, 50 KB and 1 MB, against the floor of hashing the same bytes
  once with BLAKE2b; then each guard on 100 KB hostile shapes against benign prose of the
  same size.
- ``stream``: how far ``RedactPII`` holds streamed text back, in characters and chunks, on
  prose and on code output that hold no value to redact.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.policy import InjectionGuard, RedactPII
from adk_lattice.testing import callback_context

PROSE = (
    "The quarterly review covered the billing migration, which moved every customer to the "
    "new invoicing system without interrupting service. Support volume rose briefly in the "
    "first week, mostly questions about the changed layout of the monthly statement, and fell "
    "back once the help pages were updated. The team recommends sending a short notice before "
    "the next change, keeping the old statement available for one more cycle, and reviewing "
    "the refund workflow, which still takes three manual steps where one would do. Overall "
    "the project finished on schedule and under budget, and the remaining tasks are small.\n"
)
CODE = (
    "def settle(ledger, account):\n"
    '    """Close the open entries of one account and return the balance."""\n'
    "    balance = 0\n"
    "    for entry in ledger.open_entries(account):\n"
    "        balance += entry.amount if entry.kind == 'credit' else -entry.amount\n"
    "        entry.close(reason='settled')\n"
    "    return balance\n\n"
)


def _json(size: int) -> str:
    rows, out = [], ""
    i = 0
    while len(out) < size:
        rows.append(
            {
                "id": f"ch_{i:06d}",
                "amount": round(12.5 + i * 0.25, 2),
                "currency": "EUR",
                "status": "refunded" if i % 3 else "paid",
                "note": "refunded to the original card after review",
                "created": "2026-11-30T12:00:00Z",
            }
        )
        i += 1
        if i % 50 == 0:
            out = json.dumps(rows)
    return json.dumps(rows)[:size]


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


#: 100 KB shapes that make backtracking patterns stall (see tests/policy/test_linear_time.py).
HOSTILE_UNITS = {
    "newlines": "\n",
    "letter space": "a ",
    "one long word": "a",
    "override prefix": "ignore previous ",
    "spelled letters": "i g n o r e ",
    "leet words": "a1 ",
    "unclosed comments": "<!--",
    "unclosed tags": "<b ",
    "emphasis": "ig**",
    "base64 run": "A",
    "hex pairs": "aa ",
    "bounded gaps": "illegal " + "x" * 30 + " ",
    "look-alikes": "\u0456gn\u043er\u0435 ",
    "digits": "1",
    "digit groups": "1234 ",
    "at signs": "a@",
    "dots": "a.",
    "key prefixes": "sk-",
    "jwt prefixes": "eyJ",
    "base64 words": "AAAAAAAAAAAAAAAA ",
}


def _best(fn: Callable[[str], object], text: str, budget: float = 0.3) -> float:
    """Best seconds per call over repeated calls (about ``budget`` seconds in all)."""
    fn(text)
    best, spent = float("inf"), 0.0
    while spent < budget:
        start = time.perf_counter()
        fn(text)
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return best


def _guards() -> tuple[Callable[[str], object], Callable[[str], object]]:
    injection = InjectionGuard(max_chars=2_000_000)
    rules = injection._rules
    assert rules is not None
    redact = RedactPII(max_chars=2_000_000)

    def inject(text: str) -> object:
        rules._memo.clear()  # time the scan, not the memo of a repeated text
        return rules.scan(text, "tool:bench")

    return inject, redact.scrub


def scan() -> dict[str, Any]:
    """Throughput of both guards against BLAKE2b, and hostile against benign text."""
    inject, redact = _guards()
    throughput: dict[str, Any] = {}
    for kind, make in (("prose", lambda n: _fill(PROSE, n)), ("JSON", _json)):
        for size in (1_000, 50_000, 1_000_000):
            text = make(size)
            raw = text.encode()
            budget = 0.3 if size < 1_000_000 else 1.0
            floor = _best(lambda t: hashlib.blake2b(t.encode()).digest(), text, budget)
            i, r = _best(inject, text, budget), _best(redact, text, budget)
            label = f"{kind} {size // 1000:,} KB" if size < 1_000_000 else f"{kind} 1 MB"
            throughput[label] = {
                "blake2b_us": round(floor * 1e6, 1),
                "injection_us": round(i * 1e6, 1),
                "redact_us": round(r * 1e6, 1),
                "MB_per_s": round(len(raw) / (i + r) / 1e6, 2),
                "injection_to_floor": round(i / floor, 1),
                "both_to_floor": round((i + r) / floor, 1),
            }
    hostile: dict[str, Any] = {}
    benign = _fill(PROSE, 100_000)
    base = {"injection": _best(inject, benign), "redact": _best(redact, benign)}
    for shape, unit in HOSTILE_UNITS.items():
        text = _fill(unit, 100_000)
        hostile[shape] = {
            "injection_to_benign": round(_best(inject, text) / base["injection"], 2),
            "redact_to_benign": round(_best(redact, text) / base["redact"], 2),
        }
    return {
        "scenario": "scan",
        "throughput (us per text)": throughput,
        "hostile 100 KB against benign prose of 100 KB": hostile,
    }


def _delays(text: str, chunk: int) -> list[int]:
    """Characters held back after each streamed chunk (the final response not counted)."""
    redact = RedactPII()
    ctx = callback_context()
    received = released = 0
    delays = []
    for start in range(0, len(text), chunk):
        piece = text[start : start + chunk]
        response = LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=piece)]), partial=True
        )
        redact.after_model(callback_context=ctx, llm_response=response)
        assert response.content is not None
        received += len(piece)
        released += sum(len(p.text or "") for p in response.content.parts or ())
        delays.append(received - released)
    return delays


def stream() -> dict[str, Any]:
    """Median and worst hold-back of RedactPII on text without values, per chunk size."""
    results: dict[str, Any] = {}
    for kind, unit in (("prose", PROSE), ("code", CODE)):
        text = _fill(unit, 20_000)
        for chunk in (16, 64):
            delays = _delays(text, chunk)
            results[f"{kind}, {chunk}-char chunks"] = {
                "median_chars": statistics.median(delays),
                "worst_chars": max(delays),
                "median_chunks": round(statistics.median(delays) / chunk, 2),
                "worst_chunks": round(max(delays) / chunk, 2),
            }
    return {"scenario": "stream", "unit": "delay added by RedactPII", "results": results}
