"""CapToolResult: announced truncation, stripped fields, size cap, offload, denials skipped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.function_tool import FunctionTool

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import CapToolResult, ToolGuard, ToolRule
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import noted, run_app


async def cap(policy: CapToolResult, result: Any, ctx: Any, **kw: Any) -> Any:
    c = await ctx({}, function_call_id="fc-1", **kw)
    return await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)


async def test_small_results_pass_untouched(ctx: Any) -> None:
    """A result within every cap is left alone (None)."""
    assert await cap(CapToolResult(max_items=5), {"rows": [1, 2]}, ctx) is None


async def test_long_list_is_cut_and_announced(ctx: Any) -> None:
    """A list over max_items is cut to the first items and the cut is announced."""
    out = await cap(CapToolResult(max_items=3), {"rows": list(range(10))}, ctx)
    assert out == {"rows": [0, 1, 2], "truncated": True, "total_available": 10, "returned": 3}


async def test_long_string_is_cut_and_announced(ctx: Any) -> None:
    """A string over max_chars is cut, and the cut is listed with its full length."""
    out = await cap(CapToolResult(max_chars=5), {"note": "abcdefghij"}, ctx)
    assert out["note"] == "abcde…"
    assert out["truncations"] == [{"path": "note", "total_chars": 10, "returned_chars": 5}]


async def test_named_fields_are_stripped_everywhere(ctx: Any) -> None:
    """Stripped fields vanish at any depth and are named in the result."""
    result = {"user": {"name": "a", "password_hash": "x"}, "rows": [{"password_hash": "y"}]}
    out = await cap(CapToolResult(strip={"password_hash"}), result, ctx)
    assert out["user"] == {"name": "a"}
    assert out["rows"] == [{}]
    assert out["stripped_fields"] == ["rows[0].password_hash", "user.password_hash"]


async def test_total_size_is_capped_by_halving_lists(ctx: Any) -> None:
    """A result over max_bytes has its lists halved until it fits."""
    result = {"rows": [{"text": "x" * 100} for _ in range(100)]}
    out = await cap(CapToolResult(max_items=None, max_bytes=1_000), result, ctx)
    assert out["truncated"] is True
    assert out["returned"] < 10
    assert out["total_available"] == 100


async def test_a_lone_surrogate_is_measured_not_a_crash(ctx: Any) -> None:
    """Text UTF-8 cannot encode (a lone surrogate) is sized and capped without raising."""
    result = {"rows": ["\ud800" * 50 for _ in range(10)]}
    out = await cap(CapToolResult(max_items=None, max_bytes=256), result, ctx)
    assert out["truncated"] is True


async def test_denials_are_skipped(ctx: Any) -> None:
    """A denial result is not reshaped."""
    denial = {"status": "denied", "reason": "no", "rows": list(range(100))}
    policy = CapToolResult(max_items=3)
    assert await cap(policy, denial, ctx) is None
    assert policy.counts["skipped_denial"] == 1


async def test_non_dict_results_pass(ctx: Any) -> None:
    """A result that is neither dict nor list is left alone."""
    assert await cap(CapToolResult(max_items=1), "plain", ctx) is None


async def test_oversized_payload_is_offloaded_to_an_artifact(ctx: Any) -> None:
    """Past offload_over, the payload is saved as an artifact and referenced."""
    result = {"rows": list(range(1000))}
    c = await ctx({}, function_call_id="fc-7", artifacts=True)
    policy = CapToolResult(max_items=5, offload_over=100)
    out = await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    assert out["artifact"]["version"] == 0
    saved = await c.load_artifact(out["artifact"]["filename"])
    assert saved.inline_data.data.startswith(b'{"rows": [0, 1, 2')


async def test_offload_without_artifact_service_keeps_the_preview(ctx: Any) -> None:
    """Without an artifact service, the capped preview is returned and nothing raises."""
    out = await cap(CapToolResult(max_items=2, offload_over=10), {"rows": [1, 2, 3]}, ctx)
    assert out == {"rows": [1, 2], "truncated": True, "total_available": 3, "returned": 2}


def test_bad_limits_are_refused() -> None:
    """Negative caps or a tiny max_bytes raise ValueError."""
    with pytest.raises(ValueError, match="max_items"):
        CapToolResult(max_items=-1)
    with pytest.raises(ValueError, match="max_bytes"):
        CapToolResult(max_bytes=10)


def list_orders(customer_id: str) -> dict[str, Any]:
    """List a customer's orders."""
    return {"orders": [{"id": i} for i in range(40)]}


async def test_runner_model_reads_the_announced_truncation() -> None:
    """Through a Runner, the function response the model reads is capped and announced."""
    model = FakeModel(
        [ScriptedResponse.call("list_orders", customer_id="c1"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[list_orders])
    await run_app(agent, [Lattice(policy=[CapToolResult(max_items=5)])], "orders?")
    seen = model.requests[1].contents[-1].parts[0].function_response.response
    assert seen["truncated"] is True
    assert (seen["total_available"], seen["returned"], len(seen["orders"])) == (40, 5, 5)


async def test_runner_skips_a_policy_denial() -> None:
    """Through a Runner, a ToolGuard denial reaches the model unchanged (current_call().denied)."""
    model = FakeModel(
        [ScriptedResponse.call("list_orders", customer_id="c1"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[list_orders])
    capper = CapToolResult(max_items=5, strip={"policy"})
    guard = ToolGuard({"list_orders": ToolRule(agents={"someone_else"})})
    run = await run_app(agent, [Lattice(policy=[guard, capper])], "orders?")
    assert run.responses("list_orders")[0]["policy"] == "ToolGuard"
    assert capper.counts["skipped_denial"] == 1


async def _noted_cap(policy: CapToolResult, result: Any, ctx: Any) -> list[Any]:
    c = await ctx({}, function_call_id="fc-1")
    await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    return noted(c, "after_tool")


@pytest.mark.parametrize(
    ("policy", "result", "code"),
    [
        (CapToolResult(max_items=2), {"rows": [1, 2, 3]}, "truncated"),
        (CapToolResult(strip={"secret"}), {"secret": "x", "ok": 1}, "stripped"),
        (
            CapToolResult(max_items=2, strip={"secret"}),
            {"secret": "x", "rows": [1, 2, 3]},
            "truncated,stripped",
        ),
    ],
)
async def test_a_changed_result_is_noted_with_what_was_done(
    policy: CapToolResult, result: Any, code: str, ctx: Any
) -> None:
    """A capped result is noted as rewrite with truncated, stripped, or both."""
    assert await _noted_cap(policy, result, ctx) == [("rewrite", code)]


async def test_an_offloaded_result_is_noted(ctx: Any) -> None:
    """A result saved as an artifact is noted as rewrite offloaded."""
    c = await ctx({}, function_call_id="fc-8", artifacts=True)
    policy = CapToolResult(max_items=None, offload_over=10)
    await policy.after_tool(tool=None, tool_args={}, tool_context=c, result={"rows": [1, 2, 3]})
    assert noted(c, "after_tool") == [("rewrite", "offloaded")]


async def test_an_untouched_result_is_not_noted(ctx: Any) -> None:
    """A result within every cap leaves no note."""
    assert await _noted_cap(CapToolResult(max_items=5), {"rows": [1, 2]}, ctx) == []


async def test_strings_are_cut_at_4000_characters_by_default(ctx: Any) -> None:
    """Without max_chars, a string is kept up to 4,000 characters and cut past that."""
    out = await cap(CapToolResult(), {"note": "a" * 4_001}, ctx)
    assert out["note"] == "a" * 4_000 + "…"
    assert await cap(CapToolResult(), {"note": "a" * 4_000}, ctx) is None


async def test_a_pending_approval_is_skipped(ctx: Any) -> None:
    """A call waiting for a person keeps its pending_approval result as it is."""
    pending = {"status": "pending_approval", "reason": "wait", "rows": list(range(100))}
    policy = CapToolResult(max_items=3)
    assert await cap(policy, pending, ctx) is None
    assert policy.counts["skipped_denial"] == 1


async def test_a_stripped_top_level_field_is_named_as_written(ctx: Any) -> None:
    """A stripped field at the top is named exactly (an X- header name keeps its X)."""
    out = await cap(CapToolResult(strip={"X-Api-Key"}), {"X-Api-Key": "k", "ok": 1}, ctx)
    assert out == {"ok": 1, "stripped_fields": ["X-Api-Key"]}


async def test_the_offloaded_file_is_named_after_the_tool_and_call(ctx: Any) -> None:
    """An offloaded payload is saved as <tool>-<call id>.json and counted."""
    c = await ctx({}, function_call_id="fc-9", artifacts=True)
    policy = CapToolResult(max_items=5, offload_over=100)
    out = await policy.after_tool(
        tool=FunctionTool(list_orders), tool_args={}, tool_context=c, result={"rows": [0] * 200}
    )
    assert out["artifact"]["filename"] == "list_orders-fc-9.json"
    assert await c.load_artifact("list_orders-fc-9.json") is not None
    assert policy.counts["offloaded"] == 1


async def test_a_lone_surrogate_is_offloaded_as_its_escape(ctx: Any) -> None:
    """Text UTF-8 cannot encode is saved escaped in a valid UTF-8 file, not a crash."""
    c = await ctx({}, function_call_id="fc-3", artifacts=True)
    policy = CapToolResult(max_items=None, offload_over=10)
    result = {"note": "a\ud800b" * 10}
    out = await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    saved = await c.load_artifact(out["artifact"]["filename"])
    assert saved.inline_data.data.decode("utf-8").startswith('{"note": "a\\ud800b')


async def test_a_result_of_exactly_offload_over_bytes_stays_inline(ctx: Any) -> None:
    """offload_over is a strict bound: a result of exactly that many bytes is not offloaded."""
    result = {"rows": [1, 2, 3]}
    size = len(json.dumps(result).encode())
    c = await ctx({}, function_call_id="fc-4", artifacts=True)
    policy = CapToolResult(max_items=None, offload_over=size)
    assert await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result) is None
    policy = CapToolResult(max_items=None, offload_over=size - 1)
    out = await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    assert out["artifact"]["bytes"] == size


async def test_two_lists_cut_are_both_listed(ctx: Any) -> None:
    """With two lists cut, truncations names each with its path."""
    out = await cap(CapToolResult(max_items=1), {"a": [1, 2], "b": [3, 4, 5]}, ctx)
    assert out["truncations"] == [
        {"path": "a", "total_available": 2, "returned": 1},
        {"path": "b", "total_available": 3, "returned": 1},
    ]


async def test_at_most_fifty_cuts_are_listed(ctx: Any) -> None:
    """truncations lists the first 50 cuts, however many were made."""
    out = await cap(CapToolResult(max_chars=1), {f"k{i}": "ab" for i in range(60)}, ctx)
    assert len(out["truncations"]) == 50


async def test_the_size_cap_halves_from_max_items(ctx: Any) -> None:
    """Over max_bytes, lists are halved starting from max_items (5, then 2), not from more."""
    result = {"rows": ["x" * 200 for _ in range(40)]}
    out = await cap(CapToolResult(max_items=5, max_bytes=1_000), result, ctx)
    assert (out["returned"], len(out["rows"])) == (2, 2)


def test_bad_limits_name_the_setting_at_fault() -> None:
    """A negative max_chars or a tiny max_bytes fails with a message naming it."""
    with pytest.raises(ValueError, match=r"^max_items must be >= 0$"):
        CapToolResult(max_items=-1)
    with pytest.raises(ValueError, match=r"^max_chars must be >= 0$"):
        CapToolResult(max_chars=-1)
    with pytest.raises(ValueError, match=r"^max_bytes must be at least 256$"):
        CapToolResult(max_bytes=255)


async def test_zero_caps_and_the_smallest_size_are_accepted(ctx: Any) -> None:
    """max_items=0, max_chars=0 and max_bytes=256 are valid: lists and strings empty out."""
    policy = CapToolResult(max_items=0, max_chars=0, max_bytes=256)
    out = await cap(policy, {"rows": [1, 2], "note": "ab"}, ctx)
    assert (out["rows"], out["note"], out["returned"]) == ([], "…", 0)


async def test_lists_are_cut_at_fifty_items_by_default(ctx: Any) -> None:
    """Without max_items, a list keeps up to 50 items and is cut past that."""
    assert await cap(CapToolResult(), {"rows": list(range(50))}, ctx) is None
    out = await cap(CapToolResult(), {"rows": list(range(51))}, ctx)
    assert (out["total_available"], out["returned"]) == (51, 50)


async def test_results_are_capped_at_64000_bytes_by_default(ctx: Any) -> None:
    """Without max_bytes, a result of 64,000 bytes is kept whole and a larger one is cut."""
    policy = CapToolResult(max_items=None, max_chars=None)
    fits: dict[str, Any] = {"rows": ["x" * 98] * 600, "pad": ""}
    fits["pad"] = "y" * (64_000 - len(json.dumps(fits)))
    assert await cap(policy, fits, ctx) is None
    fits["pad"] += "y"
    out = await cap(policy, fits, ctx)
    assert out["truncated"] is True and out["total_available"] == 600


async def test_a_result_within_max_bytes_keeps_every_item_of_an_uncapped_list(ctx: Any) -> None:
    """With max_items=None, a list is not cut unless the size cap needs it."""
    result = {"rows": list(range(100))}
    assert await cap(CapToolResult(max_items=None), result, ctx) is None


async def test_a_list_of_exactly_max_items_is_kept(ctx: Any) -> None:
    """max_items is the longest list kept: a list of exactly that length is untouched."""
    assert await cap(CapToolResult(max_items=3), {"rows": [1, 2, 3]}, ctx) is None


async def test_a_capped_top_level_list_is_wrapped_as_result(ctx: Any) -> None:
    """A tool returning a bare list gets it back under "result", with the cut announced."""
    out = await cap(CapToolResult(max_items=2), [1, 2, 3], ctx)
    assert out == {"result": [1, 2], "truncated": True, "total_available": 3, "returned": 2}


async def test_a_nested_field_is_cut_under_its_dotted_path(ctx: Any) -> None:
    """A cut inside nested dicts is listed under its dotted path."""
    out = await cap(CapToolResult(max_chars=2), {"X-Meta": {"b": "abcd"}}, ctx)
    assert out["truncations"] == [{"path": "X-Meta.b", "total_chars": 4, "returned_chars": 2}]


async def test_the_size_cap_halves_down_to_a_single_item(ctx: Any) -> None:
    """Over max_bytes, halving goes on down to one item per list (and to none if needed)."""
    result = {"rows": ["x" * 150 for _ in range(8)]}
    out = await cap(CapToolResult(max_items=None, max_bytes=256), result, ctx)
    assert (out["returned"], len(out["rows"])) == (1, 1)
    big = {"rows": ["x" * 300 for _ in range(8)]}
    out = await cap(CapToolResult(max_items=None, max_bytes=256), big, ctx)
    assert (out["returned"], out["rows"]) == (0, [])


async def test_capping_and_stripping_are_counted(ctx: Any) -> None:
    """counts["capped"] and counts["stripped"] count the results cut and stripped."""
    policy = CapToolResult(max_items=1, strip={"secret"})
    await cap(policy, {"rows": [1, 2]}, ctx)
    await cap(policy, {"secret": 1, "ok": 2}, ctx)
    assert (policy.counts["capped"], policy.counts["stripped"]) == (1, 1)


async def test_at_most_fifty_stripped_fields_are_named(ctx: Any) -> None:
    """stripped_fields names the first 50 stripped paths, however many were stripped."""
    result = {"rows": [{"secret": i} for i in range(60)]}
    out = await cap(CapToolResult(max_items=None, strip={"secret"}), result, ctx)
    assert len(out["stripped_fields"]) == 50


async def _notes(policy: CapToolResult, result: Any, ctx: Any) -> list[Any]:
    c = await ctx({}, function_call_id="fc-1")
    await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    outcome = Outcome(hook="after_tool", args={"tool_context": c})
    return notes_of(outcome)


async def test_a_rewrite_is_noted_under_the_handler_name(ctx: Any) -> None:
    """The rewrite note names the handler: CapToolResult by default, or the name given."""
    [default] = await _notes(CapToolResult(max_items=1), {"rows": [1, 2]}, ctx)
    [named] = await _notes(CapToolResult(max_items=1, name="caps"), {"rows": [1, 2]}, ctx)
    assert (default.handler, named.handler) == ("CapToolResult", "caps")


async def test_an_offloaded_file_without_a_call_id_is_named_call(ctx: Any) -> None:
    """Outside a tool call (no function call id), the artifact is named <tool>-call.json."""
    c = await ctx({}, artifacts=True)
    policy = CapToolResult(max_items=None, offload_over=10)
    out = await policy.after_tool(
        tool=FunctionTool(list_orders), tool_args={}, tool_context=c, result={"rows": [1, 2, 3]}
    )
    assert out["artifact"]["filename"] == "list_orders-call.json"


async def test_an_offloaded_file_is_json_in_utf8(ctx: Any) -> None:
    """The artifact is application/json, non-ASCII text kept as UTF-8, odd values as text."""
    c = await ctx({}, function_call_id="fc-5", artifacts=True)
    policy = CapToolResult(max_items=None, offload_over=10)
    result = {"note": "café", "when": frozenset(), "n": 1}
    out = await policy.after_tool(tool=None, tool_args={}, tool_context=c, result=result)
    saved = await c.load_artifact(out["artifact"]["filename"])
    assert saved.inline_data.mime_type == "application/json"
    saved_text = saved.inline_data.data.decode("utf-8")
    assert saved_text == '{"note": "café", "when": "frozenset()", "n": 1}'


class _Refuses:
    """A policy of the application's own that refuses every tool call with its own dict."""

    name = "Refuses"

    async def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
        return {"refused": "not today", "rows": list(range(10))}


async def test_any_policy_denial_is_skipped_whatever_its_shape() -> None:
    """A denial by another policy reaches the model whole, even without a status field."""
    model = FakeModel(
        [ScriptedResponse.call("list_orders", customer_id="c1"), ScriptedResponse.text("ok")]
    )
    agent = LlmAgent(name="assistant", model=model, tools=[list_orders])
    capper = CapToolResult(max_items=3)
    run = await run_app(agent, [Lattice(policy=[_Refuses(), capper])], "orders?")
    assert run.responses("list_orders")[0] == {"refused": "not today", "rows": list(range(10))}
    assert capper.counts["skipped_denial"] == 1


async def test_a_result_no_list_cut_can_fit_ends_with_its_lists_empty(ctx: Any) -> None:
    """Over max_bytes even with every list empty, the halving stops at zero items."""
    result = {"rows": [1, 2, 3], "note": "x" * 2_000}
    out = await cap(CapToolResult(max_items=None, max_chars=None, max_bytes=256), result, ctx)
    assert (out["rows"], out["returned"], out["note"]) == ([], 0, "x" * 2_000)
