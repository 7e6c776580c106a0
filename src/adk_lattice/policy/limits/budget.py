"""``TokenBudget``: caps on input and output tokens and on money, per invocation, session or user.

Spending is counted from each final response's ``usage_metadata`` (``after_model``, never
a streamed partial chunk) on a shared :class:`~adk_lattice.stores.Store` with
``incr(key, window, amount)``, so every replica on one Redis counts one user's budget
together. A model call is refused in ``before_model`` once a budget is spent.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

from google.adk.models.llm_response import LlmResponse

from ...stores import MemoryStore, Store
from .._common import Counts, Keyed, record_denial, refusal, report
from .calls import Roots

logger = logging.getLogger("adk_lattice.policy")

Scope = Literal["invocation", "session", "user"]
#: How long invocation and session counters live when a budget sets no window.
_LIFETIME: Final[dict[str, float]] = {"invocation": 86_400.0, "session": 30 * 86_400.0}
_DIMENSIONS: Final = ("input_tokens", "output_tokens", "cost")


@dataclass(frozen=True, slots=True)
class Price:
    """What a model costs, in currency units per million tokens.

    Attributes:
        input: price of one million input (prompt) tokens.
        output: price of one million output tokens (thinking tokens included).
    """

    input: float
    output: float

    def __post_init__(self) -> None:
        for value in (self.input, self.output):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError("prices are numbers (currency units per million tokens)")
            if not math.isfinite(value) or value < 0:
                raise ValueError("prices must be finite and non-negative")

    def micros(self, input_tokens: int, output_tokens: int) -> int:
        """The cost of a call in millionths of a currency unit, rounded up."""
        return math.ceil(input_tokens * self.input + output_tokens * self.output)


@dataclass(frozen=True, slots=True)
class Budget:
    """One cap: what may be spent per invocation, per session or per user per window.

    Attributes:
        scope: ``invocation`` (one run), ``session`` or ``user``.
        input_tokens: input tokens allowed (None: no cap).
        output_tokens: output tokens allowed (thinking tokens included).
        cost: money allowed, in currency units, priced by ``TokenBudget(prices=...)``.
        window_seconds: for ``user``, the fixed window the cap applies to (required); for
            the others, how long the count lives (default a day for an invocation, 30 days
            for a session).
    """

    scope: Scope
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    window_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.scope not in ("invocation", "session", "user"):
            raise ValueError(f"scope must be invocation, session or user, not {self.scope!r}")
        for cap, c in (("input_tokens", self.input_tokens), ("output_tokens", self.output_tokens)):
            if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 0):
                raise ValueError(f"Budget {cap} must be a non-negative integer or None, not {c!r}")
        if self.cost is not None and (
            isinstance(self.cost, bool)
            or not isinstance(self.cost, int | float)
            or not math.isfinite(self.cost)
            or self.cost < 0
        ):
            raise ValueError("cost must be a finite, non-negative amount")
        if all(c is None for c in (self.input_tokens, self.output_tokens, self.cost)):
            raise ValueError("a budget caps at least one of input_tokens, output_tokens, cost")
        if self.window_seconds is None and self.scope == "user":
            raise ValueError("a per-user budget needs window_seconds (e.g. 86400 for a day)")
        if self.window_seconds is not None and not self.window_seconds > 0:
            raise ValueError("window_seconds must be positive")

    def caps(self) -> dict[str, int]:
        """The capped dimensions and their limits (cost in millionths of a unit)."""
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        capped: dict[str, int] = {k: v for k, v in out.items() if v is not None}
        if self.cost is not None:
            capped["cost"] = round(self.cost * 1_000_000)
        return capped


def _as_budget(value: Budget | Mapping[str, Any]) -> Budget:
    return value if isinstance(value, Budget) else Budget(**value)


def _as_price(model: str, value: Price | Mapping[str, Any]) -> Price:
    """One model's price from a ``Price`` or a ``{input, output}`` mapping.

    Raises:
        TypeError: for anything else, naming the model; a mapping of mappings is what TOML
            makes of an unquoted dotted name (``gemini-2.5-flash`` reads as
            ``gemini-2 -> 5-flash``), so that message says to quote it.
    """
    if isinstance(value, Price):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(
            f"price of model {model!r}: give Price(input=..., output=...) or "
            f"{{'input': ..., 'output': ...}}, not {type(value).__name__}"
        )
    nested = [k for k, v in value.items() if isinstance(v, Mapping)]
    if nested:
        dotted = f"{model}.{nested[0]}"
        raise TypeError(
            f"price of model {model!r} holds a table {nested[0]!r}: a model name with dots "
            f'was read as nested keys; quote it in TOML: "{dotted}" = {{ input = ..., '
            "output = ... }"
        )
    unknown = sorted(set(value) - {"input", "output"})
    missing = sorted({"input", "output"} - set(value))
    if unknown or missing:
        raise TypeError(
            f"price of model {model!r}: takes 'input' and 'output' (per million tokens); "
            + (f"unknown {unknown}" if unknown else f"missing {missing}")
        )
    return Price(**value)


def _part(value: object) -> str:
    """A key part that cannot collide with another or carry raw ids: a short digest."""
    return hashlib.blake2b(str(value).encode(), digest_size=12).hexdigest()


class TokenBudget:
    """``before_model`` / ``after_model``: stop spending once a token or money budget is used up.

    ::

        TokenBudget(
            [Budget("invocation", output_tokens=4_000),
             Budget("user", cost=5.00, window_seconds=86_400)],
            prices={"gemini-2.5-flash": Price(input=0.30, output=2.50)},
            store=RedisStore(os.environ["REDIS_URL"]),
        )

    Each final model response adds its ``usage_metadata`` (prompt tokens; candidate plus
    thinking tokens) and its price to every budget's counters. Before a model call, a
    budget whose counter has reached its cap refuses the call with ``message`` (a
    model-role answer the user reads) and notes ``deny`` with a content-free code:
    ``<scope>_<dimension>_budget`` (``user_cost_budget``...), ``budget_unavailable`` when
    the store fails and ``unpriced_model`` when a cost budget meets a model with no price.
    A call is checked before it is made, so the call that crosses a cap completes; the
    next one is refused.

    Args:
        budgets: the caps, as :class:`Budget` or mappings of its fields.
        prices: price per model name (``llm_request.model``), as :class:`Price` or
            ``{"input": ..., "output": ...}``; ``"*"`` prices every other model.
        store: where the counters live (default: a new ``MemoryStore``, one process).
        on_store_error: ``deny`` (default, fail closed) or ``allow`` when the store fails.
        message: what the user reads when a budget is spent.
        name: the handler name.

    Attributes:
        counts: ``allowed``, ``denied``, ``store_errors``, ``recorded``.

    Raises:
        ValueError, TypeError: on a malformed budget or price, at construction.
    """

    def __init__(
        self,
        budgets: Sequence[Budget | Mapping[str, Any]],
        *,
        prices: Mapping[str, Price | Mapping[str, Any]] | None = None,
        store: Store | None = None,
        on_store_error: Literal["deny", "allow"] = "deny",
        message: str = "This conversation has used up its budget for now. Please try again later.",
        name: str = "TokenBudget",
    ) -> None:
        if isinstance(budgets, Budget | Mapping) or not budgets:
            raise TypeError("budgets takes a non-empty list of Budget")
        if on_store_error not in ("deny", "allow"):
            raise ValueError("on_store_error must be 'deny' or 'allow'")
        if store is not None and not isinstance(store, Store):
            raise TypeError(f"store must be an adk_lattice Store, got {type(store).__name__}")
        self.budgets = tuple(_as_budget(b) for b in budgets)
        self.prices = {model: _as_price(model, p) for model, p in (prices or {}).items()}
        self.store: Store = store if store is not None else MemoryStore(name=name)
        self.on_store_error = on_store_error
        self.message = message
        self.name = name
        self._counts = Counts()
        self._models: Keyed[str | None] = Keyed()
        self._roots = Roots()
        #: root invocation id -> the (app name, session id, user id) of the user request.
        self._requests: Keyed[tuple[str, str, str]] = Keyed()
        self._priced = any(b.cost is not None for b in self.budgets)

    #: Its tool hooks only keep the count; scoped to tools it would count no model call.
    _adk_lattice_unscoped: ClassVar[tuple[str, ...]] = ("tools",)

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``allowed``, ``denied``, ``store_errors``, ``recorded``."""
        return self._counts.snapshot()

    def _price(self, model: str | None) -> Price | None:
        return self.prices.get(model or "", self.prices.get("*"))

    def _request(self, ctx: Any) -> tuple[str, str, str, str]:
        """The user request ``ctx`` belongs to: root invocation, app, session and user.

        An ``AgentTool``'s nested run has its own invocation, session and app name: it
        counts against the request that called it, not from zero.
        """
        root = self._roots.of(ctx.invocation_id)
        request = self._requests.get(root)
        if request is None:
            session = ctx.session
            request = (str(session.app_name), str(session.id), str(ctx.user_id))
            self._requests.put(root, request)
        return (root, *request)

    def _keys(self, ctx: Any, budget: Budget) -> tuple[str, float]:
        root, app, session_id, user_id = self._request(ctx)
        who = {"invocation": root, "session": session_id, "user": user_id}[budget.scope]
        base = f"{self.name}:{_part(app)}:{budget.scope}:{_part(who)}"
        if budget.scope == "user":
            window = float(budget.window_seconds or 0)
            return f"{base}:{int(time.time() // window)}", window
        return base, float(budget.window_seconds or _LIFETIME[budget.scope])

    async def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """Refuse the call when a budget is spent, or when it cannot be checked."""
        model = getattr(llm_request, "model", None)
        self._models.put((callback_context.invocation_id, callback_context.agent_name), model)
        code = None
        if self._priced and self._price(model) is None:
            code = "unpriced_model"
        else:
            code = await self._spent(callback_context)
        if code is None:
            self._counts.bump("allowed")
            return None
        self._counts.bump("denied")
        record_denial(callback_context, self.name, code)
        report(callback_context, "deny", self.name, code)
        return refusal(self.name, code, self.message)

    async def _spent(self, ctx: Any) -> str | None:
        for budget in self.budgets:
            key, window = self._keys(ctx, budget)
            for dimension, cap in budget.caps().items():
                used = await self._incr(f"{key}:{dimension}", window, 0)
                if used is None:
                    if self.on_store_error == "allow":
                        continue  # fail open for this counter; the others still count
                    return "budget_unavailable"
                if used >= cap:
                    return f"{budget.scope}_{dimension}_budget"
        return None

    async def after_model(self, *, callback_context: Any, llm_response: Any) -> None:
        """Add a final response's tokens and price to every budget."""
        if llm_response.partial is True:
            return  # chunks carry no usage; the final response carries the whole call's
        usage = llm_response.usage_metadata
        if usage is None:
            return
        spent = {
            "input_tokens": usage.prompt_token_count or 0,
            "output_tokens": (usage.candidates_token_count or 0)
            + (usage.thoughts_token_count or 0),
        }
        model = self._models.pop((callback_context.invocation_id, callback_context.agent_name))
        price = self._price(model)
        spent["cost"] = price.micros(spent["input_tokens"], spent["output_tokens"]) if price else 0
        for budget in self.budgets:
            key, window = self._keys(callback_context, budget)
            for dimension in budget.caps():
                if spent[dimension]:
                    await self._incr(f"{key}:{dimension}", window, spent[dimension])
        self._counts.bump("recorded")

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        """Mark the call's context, so a nested run it starts counts against this request."""
        self._request(tool_context)
        self._roots.enter_tool(tool_context.invocation_id)

    def after_tool(self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        """The tool call is over: runs started later in this context are new requests."""
        self._roots.leave_tool()

    def on_tool_error(self, *, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> None:
        """The tool call failed: runs started later in this context are new requests."""
        self._roots.leave_tool()

    def after_run(self, *, invocation_context: Any) -> None:
        """Forget the request when its root invocation ends (its counters stay in the store)."""
        if self._roots.forget(invocation_context.invocation_id):
            self._requests.pop(invocation_context.invocation_id)

    def on_run_error(self, *, invocation_context: Any, error: Any) -> None:
        """Forget the request when its root invocation fails."""
        self.after_run(invocation_context=invocation_context)

    async def _incr(self, key: str, window: float, amount: int) -> int | None:
        try:
            value = await self.store.incr(key, window, amount)
        except Exception as exc:  # a store outside the package may raise
            logger.warning("adk_lattice: %s: the store failed (%s)", self.name, type(exc).__name__)
            value = None
        if value is None:
            self._counts.bump("store_errors")
        return value
