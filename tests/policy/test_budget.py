"""``TokenBudget``: token and money caps per invocation, session and user, on shared stores."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import Budget, Price, TokenBudget
from adk_lattice.policy._common import DENIAL_STATE_KEY
from adk_lattice.policy.limits import budget as budget_module
from adk_lattice.stores import MemoryStore, RedisStore, Store
from adk_lattice.telemetry import AuditLog, notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests._redis import redis_server

__all__ = ["redis_server"]


def lookup(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id, "amount": 12}


def looping(n: int, *, tokens_in: int = 100, tokens_out: int = 50) -> FakeModel:
    """A model that calls a tool n times, then answers; every turn spends tokens."""
    call = ScriptedResponse(
        function_calls=[("lookup", {"charge_id": "c1"})],
        input_tokens=tokens_in,
        output_tokens=tokens_out,
    )
    done = ScriptedResponse.text("done", input_tokens=tokens_in, output_tokens=tokens_out)
    return FakeModel([*([call] * n), done])


class Replica:
    """One app replica: its own Runner and session service, a lattice with the budget."""

    def __init__(
        self,
        model: FakeModel,
        budget: TokenBudget,
        audit: list[Any] | None = None,
        app: str = "shop",
    ):
        telemetry = [AuditLog(audit.append)] if audit is not None else ()
        lattice = Lattice(policy=[budget], telemetry=telemetry)
        agent = LlmAgent(name="billing", model=model, tools=[lookup])
        self.app = app
        self.runner = Runner(
            app=App(name=app, root_agent=agent, plugins=[lattice]),
            session_service=InMemorySessionService(),
        )

    async def turn(
        self, user: str = "u1", session_id: str | None = None, **config: Any
    ) -> list[Any]:
        service = self.runner.session_service
        if (
            session_id is None
            or await service.get_session(app_name=self.app, user_id=user, session_id=session_id)
            is None
        ):
            session = await service.create_session(
                app_name=self.app, user_id=user, session_id=session_id
            )
            session_id = session.id
        message = types.Content(role="user", parts=[types.Part(text="hi")])
        return [
            e
            async for e in self.runner.run_async(
                user_id=user,
                session_id=session_id,
                new_message=message,
                run_config=RunConfig(**config),
            )
        ]


def refusals(events: list[Any]) -> list[Mapping[str, Any]]:
    return [
        e.custom_metadata["adk_lattice"]
        for e in events
        if e.custom_metadata and "adk_lattice" in e.custom_metadata
    ]


async def test_an_invocation_stops_once_its_output_tokens_are_spent() -> None:
    """A per-invocation output cap refuses the model call after the one that crossed it."""
    model = looping(5, tokens_out=50)
    budget = TokenBudget([Budget("invocation", output_tokens=120)])
    events = await Replica(model, budget).turn()
    assert model.calls == 3  # 50, 100, 150: the fourth call is refused
    (meta,) = refusals(events)
    assert meta == {"denied_by": "TokenBudget", "reason": "invocation_output_tokens_budget"}
    assert events[-1].content.parts[0].text == budget.message


async def test_a_session_budget_carries_over_to_the_next_turn() -> None:
    """A per-session input cap spent in one turn refuses the next turn's first call."""
    model = FakeModel([ScriptedResponse.text("one", input_tokens=300, output_tokens=5)] * 3)
    replica = Replica(model, TokenBudget([Budget("session", input_tokens=250)]))
    assert refusals(await replica.turn(session_id="s1")) == []
    second = await replica.turn(session_id="s1")
    assert refusals(second)[0]["reason"] == "session_input_tokens_budget"
    assert refusals(await replica.turn(session_id="s2")) == []  # a new session starts afresh
    assert model.calls == 2


async def test_a_user_money_budget_is_priced_per_model() -> None:
    """Costs come from the price table: 1M output tokens at 2.50 spends a 2.00 budget."""
    model = FakeModel([ScriptedResponse.text("x", input_tokens=0, output_tokens=1_000_000)] * 3)
    budget = TokenBudget(
        [Budget("user", cost=2.00, window_seconds=3600)],
        prices={"fake-model": Price(input=0.30, output=2.50)},
    )
    replica = Replica(model, budget)
    assert refusals(await replica.turn("alice")) == []
    assert refusals(await replica.turn("alice"))[0]["reason"] == "user_cost_budget"
    assert refusals(await replica.turn("bob")) == []  # each user has a budget of their own


async def test_a_model_without_a_price_is_refused_under_a_money_budget() -> None:
    """A cost budget meeting a model missing from the price table denies, never guesses."""
    model = FakeModel([ScriptedResponse.text("x", output_tokens=10)])
    budget = TokenBudget(
        [Budget("user", cost=1.0, window_seconds=60)], prices={"other": Price(1, 1)}
    )
    events = await Replica(model, budget).turn()
    assert refusals(events)[0]["reason"] == "unpriced_model"
    assert model.calls == 0


async def test_streamed_chunks_are_not_counted_twice() -> None:
    """Under SSE only the final response's usage counts."""
    store = MemoryStore()
    model = FakeModel([ScriptedResponse(text_chunks=("a", "b", "c"), output_tokens=40)])
    budget = TokenBudget([Budget("session", output_tokens=1000)], store=store)
    await Replica(model, budget).turn(session_id="s1", streaming_mode=StreamingMode.SSE)
    assert budget.counts["recorded"] == 1


class DownStore(MemoryStore):
    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        raise ConnectionError("store is down")


async def test_a_failing_store_fails_closed_by_default() -> None:
    """When the counters cannot be read the call is refused with ``budget_unavailable``."""
    model = FakeModel([ScriptedResponse.text("x", output_tokens=1)])
    budget = TokenBudget([Budget("session", output_tokens=10)], store=DownStore())
    events = await Replica(model, budget).turn()
    assert refusals(events)[0]["reason"] == "budget_unavailable"
    assert model.calls == 0


async def test_a_failing_store_can_fail_open() -> None:
    """With ``on_store_error="allow"`` the call goes on while the store is down."""
    model = FakeModel([ScriptedResponse.text("x", output_tokens=1)])
    budget = TokenBudget(
        [Budget("session", output_tokens=10)], store=DownStore(), on_store_error="allow"
    )
    events = await Replica(model, budget).turn()
    assert refusals(events) == []
    assert model.calls == 1
    assert budget.counts["store_errors"] >= 1


async def test_the_audit_record_names_the_spent_budget() -> None:
    """A refusal is reported as a ``deny`` with the content-free budget code."""
    audit: list[Any] = []
    model = looping(3, tokens_out=100)
    await Replica(model, TokenBudget([Budget("invocation", output_tokens=100)]), audit).turn()
    (action,) = audit[0]["policy_actions"]
    assert (action["hook"], action["decision"], action["reason"]) == (
        "before_model",
        "deny",
        "invocation_output_tokens_budget",
    )
    assert audit[0]["outcome"] == "blocked"


@pytest.mark.redis
async def test_replicas_on_one_redis_share_a_users_budget(redis_server: Any) -> None:
    """What a user spends on one replica counts on the other (two Runners, one Redis)."""
    stores: list[Store] = [RedisStore(redis_server.url, namespace="budget2") for _ in range(2)]
    try:
        replicas = [
            Replica(
                FakeModel([ScriptedResponse.text("x", input_tokens=600, output_tokens=1)] * 2),
                TokenBudget([Budget("user", input_tokens=1000, window_seconds=3600)], store=s),
            )
            for s in stores
        ]
        assert refusals(await replicas[0].turn("carol")) == []
        assert refusals(await replicas[1].turn("carol")) == []  # 600 used: still under 1000
        third = await replicas[0].turn("carol")  # 1200 used across both replicas
        assert refusals(third)[0]["reason"] == "user_input_tokens_budget"
        assert refusals(await replicas[1].turn("dave")) == []
    finally:
        for s in stores:
            await s.close()


def test_a_user_budget_without_a_window_is_refused() -> None:
    """A per-user budget must say its window: the mistake fails at construction."""
    with pytest.raises(ValueError, match="window_seconds"):
        Budget("user", cost=1.0)


def test_budgets_can_be_given_as_tables() -> None:
    """Budgets and prices written as mappings (a config file's form) are accepted."""
    budget = TokenBudget(
        [{"scope": "session", "output_tokens": 10}], prices={"*": {"input": 1, "output": 2}}
    )
    assert budget.budgets == (Budget("session", output_tokens=10),)
    assert budget.prices["*"] == Price(1, 2)


async def test_a_zero_cap_refuses_every_call() -> None:
    """A cap of 0 is allowed and refuses even the first call (a switched-off budget)."""
    model = looping(1)
    events = await Replica(model, TokenBudget([Budget("invocation", output_tokens=0)])).turn()
    assert model.calls == 0
    assert refusals(events)[0]["reason"] == "invocation_output_tokens_budget"


async def test_the_default_refusal_tells_the_user_to_try_later() -> None:
    """A spent budget answers with the default message as written."""
    events = await Replica(looping(1), TokenBudget([Budget("invocation", output_tokens=0)])).turn()
    assert events[-1].content.parts[0].text == (
        "This conversation has used up its budget for now. Please try again later."
    )


async def test_the_refusal_is_the_message_given() -> None:
    """A custom message is what the user reads when the budget is spent."""
    budget = TokenBudget([Budget("invocation", output_tokens=0)], message="Out of credit.")
    events = await Replica(looping(1), budget).turn()
    assert events[-1].content.parts[0].text == "Out of credit."


async def test_a_response_without_prompt_tokens_adds_no_input_tokens() -> None:
    """A response reporting no prompt tokens spends nothing of an input-token cap."""
    model = FakeModel([ScriptedResponse.text("one", input_tokens=0, output_tokens=5)] * 2)
    budget = TokenBudget([Budget("session", input_tokens=1)])
    replica = Replica(model, budget)
    await replica.turn(session_id="s1")
    assert refusals(await replica.turn(session_id="s1")) == []
    assert budget.counts["allowed"] == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"output_tokens": -1}, "^Budget output_tokens must be a non-negative integer"),
        ({"input_tokens": 1.5}, "^Budget input_tokens must be a non-negative integer"),
        ({"cost": float("nan")}, "^cost must be a finite, non-negative amount$"),
        ({"cost": 1, "window_seconds": 0}, "^window_seconds must be positive$"),
    ],
    ids=["negative", "fractional", "nan-cost", "zero-window"],
)
def test_a_malformed_budget_fails_saying_what_is_wrong(
    fields: dict[str, Any], message: str
) -> None:
    """A malformed cap or window fails at construction with a message naming the field."""
    with pytest.raises(ValueError, match=message):
        Budget("session", **fields)


@pytest.mark.parametrize(
    ("prices", "error", "message"),
    [
        ((True, 1.0), TypeError, "^prices are numbers \\(currency units per million tokens\\)$"),
        ((1.0, "2"), TypeError, "^prices are numbers \\(currency units per million tokens\\)$"),
        ((1.0, -0.5), ValueError, "^prices must be finite and non-negative$"),
        ((float("inf"), 1.0), ValueError, "^prices must be finite and non-negative$"),
    ],
    ids=["bool-input", "text-output", "negative-output", "infinite-input"],
)
def test_a_malformed_price_fails_saying_what_is_wrong(
    prices: tuple[Any, Any], error: type[Exception], message: str
) -> None:
    """A price that is not a finite, non-negative number fails at construction."""
    with pytest.raises(error, match=message):
        Price(*prices)


def test_a_free_model_is_priced_at_zero() -> None:
    """A price of zero is accepted, and a call on it costs nothing."""
    assert Price(0, 0).micros(1_000, 1_000) == 0


def test_a_call_costs_its_tokens_at_the_price_per_million() -> None:
    """A call's cost in millionths is each token count times its price, rounded up."""
    assert Price(0.30, 2.50).micros(1_000, 101) == 553  # 300 + 252.5, rounded up


class _Thinking(FakeModel):
    """A scripted model whose final responses also report 30 thinking tokens."""

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        async for response in super().generate_content_async(llm_request, stream):
            if response.usage_metadata is not None:
                response.usage_metadata.thoughts_token_count = 30
            yield response


async def test_thinking_tokens_count_as_output_tokens() -> None:
    """20 output and 30 thinking tokens a call spend 50 of an output cap of 101 each time."""
    call = ScriptedResponse(function_calls=[("lookup", {"charge_id": "c1"})], output_tokens=20)
    model = _Thinking([call] * 5 + [ScriptedResponse.text("done", output_tokens=20)])
    await Replica(model, TokenBudget([Budget("invocation", output_tokens=101)])).turn()
    assert model.calls == 3  # 50, 100, 150: the fourth call is refused


async def test_an_output_cap_is_reached_exactly_at_its_tokens() -> None:
    """Calls spending 50 output tokens each reach an output cap of 101 on the third call."""
    model = looping(5, tokens_out=50)
    await Replica(model, TokenBudget([Budget("invocation", output_tokens=101)])).turn()
    assert model.calls == 3


async def test_a_call_without_output_tokens_spends_none() -> None:
    """A response reporting no output tokens leaves an output cap of one untouched."""
    model = looping(3, tokens_out=0)
    await Replica(model, TokenBudget([Budget("invocation", output_tokens=1)])).turn()
    assert model.calls == 4


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"scope": "team", "output_tokens": 1}, r"^scope must be invocation, session or user, "),
        ({"scope": "session"}, "^a budget caps at least one of input_tokens, output_tokens, cost$"),
        (
            {"scope": "user", "cost": 1.0},
            r"^a per-user budget needs window_seconds \(e\.g\. 86400 ",
        ),
        ({"scope": "session", "cost": True}, "^cost must be a finite, non-negative amount$"),
        ({"scope": "session", "cost": "1"}, "^cost must be a finite, non-negative amount$"),
        ({"scope": "session", "cost": -0.5}, "^cost must be a finite, non-negative amount$"),
    ],
    ids=["scope", "no-cap", "user-window", "bool-cost", "text-cost", "negative-cost"],
)
def test_a_malformed_budget_says_how_to_fix_it(fields: dict[str, Any], message: str) -> None:
    """Each malformed budget fails at construction with a message naming the fix."""
    with pytest.raises(ValueError, match=message):
        Budget(**fields)


def test_small_positive_amounts_are_valid_budgets() -> None:
    """A cost under one unit and a window under one second are accepted."""
    budget = Budget("user", cost=0.5, window_seconds=0.5)
    assert budget.caps() == {"cost": 500_000}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"budgets": []}, TypeError, "^budgets takes a non-empty list of Budget$"),
        (
            {"budgets": Budget("session", output_tokens=1)},
            TypeError,
            "^budgets takes a non-empty list of Budget$",
        ),
        (
            {"budgets": [Budget("session", output_tokens=1)], "on_store_error": "open"},
            ValueError,
            "^on_store_error must be 'deny' or 'allow'$",
        ),
        (
            {"budgets": [Budget("session", output_tokens=1)], "store": "redis://"},
            TypeError,
            "^store must be an adk_lattice Store, got str$",
        ),
    ],
    ids=["empty", "single", "store-error-mode", "store-type"],
)
def test_a_misconfigured_token_budget_says_how_to_fix_it(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each setting mistake fails at construction with the fix in the message."""
    with pytest.raises(error, match=message):
        TokenBudget(**kwargs)


def test_the_default_store_is_named_after_the_budget() -> None:
    """Without a store, the counters live in a memory store named after the handler."""
    assert TokenBudget([Budget("session", output_tokens=1)], name="spend").store.name == "spend"


async def test_a_wildcard_price_prices_every_other_model() -> None:
    """A "*" price covers a model missing from the table: its calls are priced, not refused."""
    model = FakeModel([ScriptedResponse.text("x", output_tokens=1_000_000)] * 3)
    budget = TokenBudget(
        [Budget("user", cost=2.00, window_seconds=3600)], prices={"*": Price(0, 2.50)}
    )
    replica = Replica(model, budget)
    assert refusals(await replica.turn()) == []
    assert refusals(await replica.turn())[0]["reason"] == "user_cost_budget"


async def test_a_money_budget_is_spent_at_exactly_its_amount() -> None:
    """Spending exactly the budget's amount refuses the next call."""
    model = FakeModel([ScriptedResponse.text("x", output_tokens=1_000_000)] * 3)
    budget = TokenBudget(
        [Budget("user", cost=1.00, window_seconds=3600)], prices={"fake-model": Price(0, 1.0)}
    )
    replica = Replica(model, budget)
    assert refusals(await replica.turn()) == []
    assert refusals(await replica.turn())[0]["reason"] == "user_cost_budget"


async def test_a_refusal_is_counted_recorded_and_noted_by_name(ctx: Any) -> None:
    """A refused call counts as denied, is left in temp state and noted by the handler."""
    budget = TokenBudget([Budget("invocation", output_tokens=0)], name="spend")
    c = await ctx()
    await budget.before_model(callback_context=c, llm_request=LlmRequest(model="m"))
    assert budget.counts["denied"] == 1
    assert c.state[DENIAL_STATE_KEY] == {
        "policy": "spend",
        "reason": "invocation_output_tokens_budget",
    }
    outcome = Outcome(hook="before_model", args={"callback_context": c})
    assert [(n.handler, n.decision) for n in notes_of(outcome)] == [("spend", "deny")]


class RaisingStore(MemoryStore):
    """A store of one's own whose incr raises instead of answering None."""

    async def incr(self, key: str, window: float, amount: int = 1) -> int | None:
        raise ConnectionError("store is down")


@pytest.mark.parametrize("down", [DownStore, RaisingStore], ids=["none", "raises"])
async def test_failing_open_still_tries_each_counter(down: type[MemoryStore]) -> None:
    """With the store down (answering None, or raising) and on_store_error="allow", every
    capped counter is tried and counted as a store error."""
    model = FakeModel([ScriptedResponse.text("x")])
    budget = TokenBudget(
        [Budget("session", input_tokens=10, output_tokens=10)],
        store=down(),
        on_store_error="allow",
    )
    await Replica(model, budget).turn()
    assert budget.counts["store_errors"] == 2 + 2  # both read before the call, both added after


async def test_two_apps_on_one_store_keep_separate_budgets() -> None:
    """A user who spent a budget in one app still has the other app's budget on that store."""
    store = MemoryStore()
    spent = FakeModel([ScriptedResponse.text("x", output_tokens=10)] * 2)
    fresh = FakeModel([ScriptedResponse.text("x", output_tokens=10)])

    def budget() -> TokenBudget:
        return TokenBudget([Budget("user", output_tokens=10, window_seconds=3600)], store=store)

    shop = Replica(spent, budget(), app="shop")
    await shop.turn("alice")
    assert refusals(await shop.turn("alice"))[0]["reason"] == "user_output_tokens_budget"
    assert refusals(await Replica(fresh, budget(), app="desk").turn("alice")) == []


def test_a_zero_cost_cap_is_valid() -> None:
    """A cost cap of zero (only free models may run) is accepted."""
    assert Budget("user", cost=0, window_seconds=60).caps() == {"cost": 0}


async def test_a_user_budget_is_whole_again_in_the_next_fixed_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user's spent budget starts afresh in the next fixed window, even a second later."""
    clock = [3_599.5]
    monkeypatch.setattr(budget_module, "time", SimpleNamespace(time=lambda: clock[0]))
    model = FakeModel([ScriptedResponse.text("x", output_tokens=10)] * 2)
    budget = TokenBudget([Budget("user", output_tokens=10, window_seconds=3600)])
    replica = Replica(model, budget)
    await replica.turn("alice")
    clock[0] = 3_600.5
    assert refusals(await replica.turn("alice")) == []


def _delegating(helper_model: FakeModel, budget: TokenBudget) -> Replica:
    """A coordinator asking a helper (an AgentTool) four times in one request."""
    helper = LlmAgent(name="helper", model=helper_model)
    ask = ScriptedResponse(function_calls=[("helper", {"request": "go"})], output_tokens=1)
    root_model = FakeModel([ask] * 4 + [ScriptedResponse.text("done", output_tokens=1)])
    replica = Replica(root_model, budget)
    agent = LlmAgent(name="billing", model=root_model, tools=[AgentTool(helper)])
    replica.runner = Runner(
        app=App(name="shop", root_agent=agent, plugins=[Lattice(policy=[budget])]),
        session_service=InMemorySessionService(),
    )
    return replica


@pytest.mark.parametrize("scope", ["invocation", "session", "user"])
async def test_agent_tool_runs_count_against_the_users_request(scope: str) -> None:
    """A nested AgentTool run spends the request's budget instead of starting from zero."""
    helper_model = FakeModel([ScriptedResponse.text("ok", output_tokens=60)] * 4)
    window = 3600 if scope == "user" else None
    budget = TokenBudget([Budget(scope, output_tokens=100, window_seconds=window)])  # type: ignore[arg-type]
    await _delegating(helper_model, budget).turn()
    assert helper_model.calls == 2  # 1 + 60 + 1 + 60 = 122: the next call is refused


def test_a_price_with_a_misspelt_field_is_refused_naming_the_model() -> None:
    """``{"input": 1, "outptu": 2}`` fails at construction, naming the model and the field."""
    with pytest.raises(TypeError, match=r"price of model 'm'.*unknown \['outptu'\]"):
        TokenBudget([Budget("session", output_tokens=10)], prices={"m": {"input": 1, "outptu": 2}})
