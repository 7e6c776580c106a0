"""The billing demo's live path runs through ADK's real Gemini client against LoopbackGemini."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path

import pytest

from adk_lattice.testing import LoopbackGemini
from tests.examples.test_billing import _load


@pytest.fixture(scope="module")
def live_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[str, list[dict[str, object]], LoopbackGemini]:
    """Run the demo once with --model and --base-url on the loopback API, the script in order."""
    demo = _load()
    script = [answer for turn in demo.TURNS for answer in (*turn["coordinator"], *turn["refunds"])]
    audit = tmp_path_factory.mktemp("billing-live") / "audit.jsonl"
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as env, LoopbackGemini(script) as api:
        env.setenv("GOOGLE_API_KEY", "loopback-key")
        argv = ["--model", "gemini-2.5-flash", "--base-url", api.url, "--audit", str(audit)]
        with contextlib.redirect_stdout(out):
            code = asyncio.run(demo.main(argv))
    assert code == 0
    lines = [json.loads(line) for line in Path(audit).read_text().splitlines()]
    return out.getvalue(), lines, api


def test_live_demo_answers_from_the_api(
    live_run: tuple[str, list[dict[str, object]], LoopbackGemini],
) -> None:
    """Every scripted answer was requested over HTTP and reached the user."""
    output, _, api = live_run
    api.assert_consumed()
    assert {r.path for r in api.requests} == {"/v1beta/models/gemini-2.5-flash:generateContent"}
    assert "reply -> refunds: Refunded EUR 1500.46 on ch_1." in output


def test_live_demo_audits_the_api_token_usage(
    live_run: tuple[str, list[dict[str, object]], LoopbackGemini],
) -> None:
    """Audit records carry the token usage the API reported, for every call that reached it."""
    _, lines, api = live_run
    reached = []
    for line in lines:
        calls: dict[str, int] = line["model_calls"]  # type: ignore[assignment]
        # Calls a policy answered (an injection refused) or a cache served are not counted.
        reached.append(calls["count"])
        if reached[-1]:
            assert calls["input_tokens"] > 0 and calls["output_tokens"] > 0
    assert sum(reached) == len(api.requests)


def test_base_url_without_model_is_refused() -> None:
    """--base-url alone is a usage error (exit 2), not a silent offline run."""
    assert asyncio.run(_load().main(["--base-url", "http://127.0.0.1:9"])) == 2
