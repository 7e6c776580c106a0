"""SumLimit: many small calls cannot add up past a cap that one large call would hit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice, Outcome, on
from adk_lattice.policy import SumLimit, ToolGuard, ToolRule
from adk_lattice.policy.limits import sums
from adk_lattice.state import StateKey
from adk_lattice.stores import MemoryStore, SQLiteStore
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import Recorder

from .conftest import Run, run_app, user


def _agent(done: list[float], calls: list[dict[str, Any]]) -> LlmAgent:
    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    script = [ScriptedResponse.call("issue_refund", **c) for c in calls]
    model = FakeModel([*script, ScriptedResponse.text("done"), ScriptedResponse.text("done")])
    return LlmAgent(name="billing", model=model, tools=[issue_refund])


def _refunds(n: int, amount: float = 100.0) -> list[dict[str, Any]]:
    return [{"charge_id": f"c{i}", "amount": amount} for i in range(n)]


async def test_fifteen_small_refunds_stop_at_the_cap() -> None:
    """Fifteen refunds of 100 against a cap of 1,000: ten run, five are denied."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400)
    run = await run_app(_agent(done, _refunds(15)), [Lattice(policy=[limit])], "refund")
    assert sum(done) == 1000
    codes = [r.get("code") for r in run.responses("issue_refund")]
    assert codes.count("sum_limit") == 5


async def test_the_sum_is_kept_across_requests() -> None:
    """A second request of the same user sees the total the first one spent."""
    done: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=900.0),
            ScriptedResponse.text("one"),
            ScriptedResponse.call("issue_refund", charge_id="c2", amount=200.0),
            ScriptedResponse.text("two"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=MemoryStore())
    run = await run_app(agent, [Lattice(policy=[limit])], "refund c1")
    second = await run.send(user("refund c2"))
    assert done == [900.0]
    assert second.responses("issue_refund")[0]["code"] == "sum_limit"


async def test_calls_denied_by_a_later_policy_are_not_counted() -> None:
    """A refund another policy denies gives its reservation back."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=300, window=86400)

    def no_test_charges(args: Any) -> str | None:
        return "test charges cannot be refunded" if args["charge_id"] == "test" else None

    guard = ToolGuard({"issue_refund": ToolRule(checks=[no_test_charges])})
    calls = [{"charge_id": "test", "amount": 300.0}, {"charge_id": "c1", "amount": 300.0}]
    await run_app(_agent(done, calls), [Lattice(policy=[limit, guard])], "refund")
    assert done == [300.0]
    assert limit.counts["released"] == 1


@pytest.mark.parametrize("amount", [-500.0, float("nan"), float("inf"), "100", None])
async def test_an_unreadable_amount_is_denied(amount: Any) -> None:
    """A negative, NaN, infinite, string or missing amount is denied, never subtracted."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400)
    call = {"charge_id": "c1", "amount": amount} if amount is not None else {"charge_id": "c1"}
    run = await run_app(_agent(done, [call]), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "sum_limit_input"


async def test_a_failing_store_denies_by_default(tmp_path: Path) -> None:
    """When the store cannot add, the refund is denied (fail closed)."""
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not an sqlite database" * 100)
    store = SQLiteStore(path)
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=store)
    run = await run_app(_agent(done, _refunds(1)), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "sum_limit_unavailable"
    await store.close()


async def test_crossing_the_cap_can_ask_a_person() -> None:
    """With on_exceed="confirm", the call over the cap waits and runs once approved."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=100, window=86400, on_exceed="confirm")
    run = await run_app(_agent(done, _refunds(1, 150.0)), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["status"] == "pending_approval"
    await run.send(run.confirmation(True))
    assert done == [150.0]


def test_an_approver_without_confirm_is_refused() -> None:
    """approver= with on_exceed="deny" fails at construction, naming the fix."""
    with pytest.raises(ValueError, match="on_exceed='confirm'"):
        SumLimit("t", "f", limit=1, window=1, approver=lambda ctx, c: True)


def _hint(run: Run) -> str:
    (fc,) = [
        c
        for e in run.events
        for c in e.get_function_calls()
        if c.name == "adk_request_confirmation"
    ]
    return str((fc.args or {})["toolConfirmation"]["hint"])


async def test_the_person_is_asked_about_the_total() -> None:
    """The approval request names the tool and the cap it would pass, coded sum_limit."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=100, window=86400, on_exceed="confirm")
    run = await run_app(_agent(done, _refunds(1, 150.0)), [Lattice(policy=[limit])], "refund")
    assert run.responses("issue_refund")[0]["code"] == "sum_limit"
    assert _hint(run) == "This issue_refund call takes the total past 100. Approve it?"


async def test_an_approver_decides_whose_yes_counts() -> None:
    """With approver=, a person's yes that the approver does not accept is denied."""
    done: list[float] = []
    limit = SumLimit(
        "issue_refund",
        "amount",
        limit=100,
        window=86400,
        on_exceed="confirm",
        approver=lambda ctx, confirmation: False,
    )
    run = await run_app(_agent(done, _refunds(1, 150.0)), [Lattice(policy=[limit])], "refund")
    resumed = await run.send(run.confirmation(True))
    assert done == []
    assert resumed.responses("issue_refund")[-1]["code"] == "approver_not_authorised"


async def test_a_zero_cap_denies_every_amount() -> None:
    """limit=0 is a valid cap: even the first refund is denied."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=0, window=86400)
    run = await run_app(_agent(done, _refunds(1, 0.01)), [Lattice(policy=[limit])], "refund")
    assert done == []
    assert run.responses("issue_refund")[0]["code"] == "sum_limit"


async def test_denials_are_counted_and_noted() -> None:
    """Each denial is counted and noted for telemetry as deny/sum_limit."""
    done: list[float] = []
    recorder = Recorder()
    limit = SumLimit("issue_refund", "amount", limit=100, window=86400)
    lattice = Lattice(policy=[limit], telemetry=[recorder])
    await run_app(_agent(done, _refunds(3)), [lattice], "refund")
    assert limit.counts["denied"] == 2
    notes = [(n.decision, n.reason) for o in recorder.outcomes for n in notes_of(o)]
    assert notes == [("deny", "sum_limit")] * 2


async def test_each_user_has_a_total_of_their_own() -> None:
    """Two users sharing a store each get the whole cap."""
    done: list[float] = []
    store = MemoryStore()
    for who in ("alice", "bob"):
        limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=store)
        await run_app(_agent(done, _refunds(1, 900.0)), [Lattice(policy=[limit])], "r", user_id=who)
    assert done == [900.0, 900.0]


async def test_a_new_window_starts_a_new_total(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call in the next fixed window is counted afresh, even a second after the last."""
    done: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    clock = [86_399.5]
    monkeypatch.setattr(sums, "time", SimpleNamespace(time=lambda: clock[0]))
    turn = [ScriptedResponse.call("issue_refund", charge_id="c", amount=900.0)]
    model = FakeModel([*turn, ScriptedResponse.text("one"), *turn, ScriptedResponse.text("two")])
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    limit = SumLimit("issue_refund", "amount", limit=1000, window=86400, store=MemoryStore())
    run = await run_app(agent, [Lattice(policy=[limit])], "refund")
    clock[0] = 86_400.5
    await run.send(user("again"))
    assert done == [900.0, 900.0]


async def test_an_amount_below_one_unit_counts_a_whole_unit() -> None:
    """A tenth of a cent is rounded up to a cent, so many tiny calls still add up."""
    done: list[float] = []
    limit = SumLimit("issue_refund", "amount", limit=0.01, window=86400)
    run = await run_app(_agent(done, _refunds(2, 0.001)), [Lattice(policy=[limit])], "refund")
    assert done == [0.001]
    assert run.responses("issue_refund")[1]["code"] == "sum_limit"


async def test_a_failed_call_gives_its_reservation_back() -> None:
    """A refund whose tool raised moved nothing: the next one may use the whole cap."""
    done: list[float] = []
    attempts: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        attempts.append(amount)
        if len(attempts) == 1:
            raise RuntimeError("payment provider down")
        done.append(amount)
        return {"status": "refunded"}

    @on("on_tool_error")
    def recover(*, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> dict[str, Any]:
        return {"status": "failed"}

    script = [ScriptedResponse.call("issue_refund", **c) for c in _refunds(2, 100.0)]
    model = FakeModel([*script, ScriptedResponse.text("done")])
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    limit = SumLimit("issue_refund", "amount", limit=100, window=86400)
    await run_app(agent, [Lattice(policy=[limit], handlers=[recover])], "refund")
    assert done == [100.0]
    assert limit.counts["released"] == 1


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"limit": True}, ValueError, "^limit must be a non-negative number$"),
        ({"limit": "5"}, ValueError, "^limit must be a non-negative number$"),
        ({"limit": -1}, ValueError, "^limit must be a non-negative number$"),
        ({"window": True}, ValueError, "^window must be a positive number of seconds$"),
        ({"window": "60"}, ValueError, "^window must be a positive number of seconds$"),
        ({"window": 0}, ValueError, "^window must be a positive number of seconds$"),
        ({"scale": True}, ValueError, r"^scale must be a positive int \(units per 1, e\.g\. 100 "),
        ({"scale": 1.5}, ValueError, r"^scale must be a positive int \(units per 1, e\.g\. 100 "),
        ({"scale": 0}, ValueError, r"^scale must be a positive int \(units per 1, e\.g\. 100 "),
        ({"per": "session"}, ValueError, "^SumLimit per: no state key 'session' is declared"),
        (
            {"on_exceed": "block"},
            ValueError,
            "^on_exceed is 'deny' or 'confirm'; on_store_error 'deny' or 'allow'$",
        ),
        (
            {"on_store_error": "open"},
            ValueError,
            "^on_exceed is 'deny' or 'confirm'; on_store_error 'deny' or 'allow'$",
        ),
        (
            {"approver": lambda ctx, c: True},
            ValueError,
            "^approver= checks a person's confirmation: pass on_exceed='confirm'$",
        ),
        ({"store": "redis://"}, TypeError, "^store must be an adk_lattice Store, got str$"),
    ],
)
def test_a_bad_setting_fails_saying_what_is_wrong(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each setting mistake fails at construction with a message naming the fix."""
    settings: dict[str, Any] = {"limit": 100, "window": 60, **options}
    with pytest.raises(error, match=message):
        SumLimit("issue_refund", "amount", **settings)


def test_the_smallest_settings_are_valid() -> None:
    """A cap of 0, a window under a second and a scale of 1 (whole units) are accepted."""
    limit = SumLimit("issue_refund", "amount", limit=0, window=0.5, scale=1)
    assert (limit.limit, limit.window, limit.scale) == (0, 0.5, 1)


def test_a_per_tenant_limit_protects_its_key() -> None:
    """The StateKey a total is kept per is among the handler's state keys (protected)."""
    limit = SumLimit("issue_refund", "amount", limit=1, window=60, per=TENANT)
    assert limit.state_keys == (TENANT,)


TENANT = StateKey("user:tenant", str, "", "The tenant the user belongs to.")


async def _call(limit: SumLimit, ctx: Any, **args: Any) -> Any:
    c = await ctx({}, function_call_id="fc-1")
    return await limit.before_tool(tool=None, tool_args=args, tool_context=c)


async def test_totals_are_counted_in_hundredths_by_default(ctx: Any) -> None:
    """Two halves fill a limit of 1 exactly (cents by default); one cent more is denied."""
    limit = SumLimit("issue_refund", "amount", limit=1, window=60)
    assert await _call(limit, ctx, amount=0.5) is None
    assert await _call(limit, ctx, amount=0.5) is None
    assert (await _call(limit, ctx, amount=0.01))["code"] == "sum_limit"
    assert limit.counts["allowed"] == 2


async def test_an_amount_of_zero_is_allowed(ctx: Any) -> None:
    """A call moving nothing (amount 0) is allowed even at a full cap."""
    limit = SumLimit("issue_refund", "amount", limit=0, window=60)
    assert await _call(limit, ctx, amount=0) is None


async def test_a_denied_call_does_not_use_up_the_cap(ctx: Any) -> None:
    """An amount refused for passing the cap is not kept: a smaller one still fits."""
    limit = SumLimit("issue_refund", "amount", limit=100, window=60)
    assert (await _call(limit, ctx, amount=150))["code"] == "sum_limit"
    assert await _call(limit, ctx, amount=100) is None


async def test_a_denial_says_the_cap_and_names_the_tool_and_policy(ctx: Any) -> None:
    """Past the cap, the denial gives the cap and window, the tool and the handler."""
    limit = SumLimit("issue_refund", "amount", limit=100, window=60)
    assert await _call(limit, ctx, amount=150) == {
        "status": "denied",
        "reason": "issue_refund may total at most 100 per 60 s",
        "code": "sum_limit",
        "policy": "SumLimit",
        "tool": "issue_refund",
    }


@pytest.mark.parametrize(
    ("amount", "reason"),
    [
        (-1, "amount must be a non-negative number"),
        (float("inf"), "amount must be a finite number"),
    ],
)
async def test_an_unreadable_amount_is_denied_saying_why(
    ctx: Any, amount: Any, reason: str
) -> None:
    """A negative or non-finite amount is denied with a reason naming the field."""
    c = await ctx({}, function_call_id="fc-1")
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, name="refunds")
    out = await limit.before_tool(tool=None, tool_args={"amount": amount}, tool_context=c)
    assert (out["reason"], out["code"], out["policy"]) == (reason, "sum_limit_input", "refunds")
    assert noted_by(c) == [("refunds", "deny", "sum_limit_input")]


def noted_by(c: Any) -> list[tuple[str, str, str | None]]:
    outcome = Outcome(hook="before_tool", args={"tool_context": c})
    return [(n.handler, n.decision, n.reason) for n in notes_of(outcome)]


async def test_arguments_that_are_not_a_mapping_are_denied(ctx: Any) -> None:
    """Arguments given as a list (no named amount) are denied as unreadable."""
    c = await ctx({}, function_call_id="fc-1")
    limit = SumLimit("issue_refund", "amount", limit=100, window=60)
    out = await limit.before_tool(tool=None, tool_args=[5], tool_context=c)
    assert out["code"] == "sum_limit_input"


class _DownStore(MemoryStore):
    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        raise ConnectionError("store is down")


async def test_a_store_outage_is_denied_counted_and_noted(ctx: Any) -> None:
    """With the store down, the call is denied saying so, counted and noted."""
    c = await ctx({}, function_call_id="fc-1")
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, store=_DownStore())
    out = await limit.before_tool(tool=None, tool_args={"amount": 1}, tool_context=c)
    assert out["reason"] == "the running total could not be checked (store unavailable)"
    assert limit.counts["store_errors"] == 1
    assert noted_by(c) == [("SumLimit", "deny", "sum_limit_unavailable")]


async def test_a_store_outage_can_let_the_call_through(ctx: Any) -> None:
    """With on_store_error="allow", the call goes ahead while the store is down."""
    limit = SumLimit(
        "issue_refund", "amount", limit=100, window=60, store=_DownStore(), on_store_error="allow"
    )
    assert await _call(limit, ctx, amount=1) is None


async def test_a_person_asked_about_the_total_is_counted(ctx: Any) -> None:
    """Crossing the cap with on_exceed="confirm" is counted and asked in the handler's name."""
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, on_exceed="confirm")
    out = await _call(limit, ctx, amount=150)
    assert (out["status"], out["policy"], out["tool"]) == (
        "pending_approval",
        "SumLimit",
        "issue_refund",
    )
    assert limit.counts["pending_approval"] == 1


async def test_other_tools_are_not_checked() -> None:
    """Only the named tool's calls are summed: another tool without the field runs."""

    def lookup(charge_id: str) -> dict[str, Any]:
        """Look up a charge."""
        return {"charge_id": charge_id}

    model = FakeModel(
        [ScriptedResponse.call("lookup", charge_id="c1"), ScriptedResponse.text("ok")]
    )

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund a charge."""
        return {"refunded": amount}

    agent = LlmAgent(name="billing", model=model, tools=[lookup, issue_refund])
    limit = SumLimit("issue_refund", "amount", limit=100, window=60)
    run = await run_app(agent, [Lattice(policy=[limit])], "look")
    assert run.responses("lookup") == [{"charge_id": "c1"}]


async def test_two_limits_on_one_store_keep_their_own_totals(ctx: Any) -> None:
    """Two differently named limits sharing a store each keep a total of their own."""
    store = MemoryStore()
    first = SumLimit("issue_refund", "amount", limit=100, window=60, store=store, name="a")
    second = SumLimit("issue_refund", "amount", limit=100, window=60, store=store, name="b")
    assert await _call(first, ctx, amount=100) is None
    assert await _call(second, ctx, amount=100) is None


async def test_each_tenant_has_a_total_of_their_own(ctx: Any) -> None:
    """Per a tenant StateKey, two tenants each get the whole cap."""
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, per=TENANT)
    for tenant in ("acme", "globex"):
        c = await ctx({"user:tenant": tenant}, function_call_id="fc-1")
        assert await limit.before_tool(tool=None, tool_args={"amount": 100}, tool_context=c) is None


async def test_two_apps_on_one_store_keep_their_own_totals() -> None:
    """The same limit in two apps sharing a store keeps a total per app."""
    from .conftest import make_context

    store = MemoryStore()
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, store=store)
    for app in ("shop", "desk"):
        c = await make_context({}, function_call_id="fc-1")
        c.session.app_name = app
        assert await limit.before_tool(tool=None, tool_args={"amount": 100}, tool_context=c) is None


async def test_float_noise_past_six_decimals_is_not_an_extra_unit(ctx: Any) -> None:
    """0.100000004 is ten cents, not eleven: noise below a millionth of a unit is ignored."""
    limit = SumLimit("issue_refund", "amount", limit=0.1, window=60)
    assert await _call(limit, ctx, amount=0.100000004) is None


MANAGER = StateKey("user:refund_manager", bool, False, "May refund past the cap.")


async def test_a_role_holder_goes_past_the_cap_without_being_asked(ctx: Any) -> None:
    """A user holding the role key passes the cap, and nobody is asked."""
    limit = SumLimit("issue_refund", "amount", limit=100, window=60, role=MANAGER)
    c = await ctx({"user:refund_manager": True}, function_call_id="fc-1")
    assert await limit.before_tool(tool=None, tool_args={"amount": 150}, tool_context=c) is None


def test_the_default_store_is_named_after_the_limit() -> None:
    """Without a store, the totals live in a memory store named after the handler."""
    limit = SumLimit("issue_refund", "amount", limit=1, window=60, name="refunds")
    assert limit.store.name == "refunds"
