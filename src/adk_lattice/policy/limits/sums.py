"""``SumLimit``: a cap on the total of a numeric argument per user (or tenant) per window.

Fifteen refunds of 100 are 1,500 as surely as one refund of 1,500 is. The total is kept
on a shared :class:`~adk_lattice.stores.Store` with its atomic ``incr(key, window,
amount=...)``: a call reserves its amount before it runs (so concurrent calls cannot all
slip under the cap), and the reservation is given back when the call does not run (a later
policy denied it, a cache answered it, the tool raised).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import Any, Literal

from ..._records import current_call
from ...state import StateKey
from ...stores import MemoryStore, Store
from ...stores._base import COUNTER_MAX
from .._common import Counts, Keyed, ask_person, declared_key, report, tool_denial
from ..tools.approval import Approval
from .rate import counter_key

logger = logging.getLogger("adk_lattice.policy")


class SumLimit:
    """``before_tool`` / ``after_tool``: keep the sum of ``field`` under ``limit`` per window.

    ::

        SumLimit("issue_refund", "amount", limit=1000, window=86400, store=store)

    Over the limit the call is denied (code ``sum_limit``), or, with ``on_exceed="confirm"``,
    sent to a person through ADK's tool confirmation (checked with ``role`` / ``approver``
    like :class:`Approval`). An amount that is missing, negative, non-numeric or not finite
    is denied (``sum_limit_input``). When the store fails the call is denied
    (``sum_limit_unavailable``) unless ``on_store_error="allow"``. Only calls that ran are
    counted.

    Args:
        tool: the tool whose calls are summed.
        field: the numeric argument summed (after earlier policies' rewrites).
        limit: the most the sum may reach within one window.
        window: the fixed window's length in seconds.
        per: ``"user"`` (the session's user id) or a declared str key (a tenant), or the
            name of one (``"user:tenant_id"``).
        store: where sums live (default: a new ``MemoryStore``, one process only).
        scale: units per 1 of ``field`` kept by the store (default 100: cents); each call's
            amount is rounded up to a whole unit.
        on_exceed: ``"deny"`` or ``"confirm"`` (ask a person).
        role: a bool key (or its name) whose holder may go over the cap (without being
            asked).
        approver: with ``"confirm"``: ``approver(tool_context, confirmation) -> bool``.
        on_store_error: ``"deny"`` (fail closed) or ``"allow"``.
        name: the handler name (also part of the counter keys).

    Attributes:
        counts: ``allowed``, ``denied``, ``pending_approval``, ``released``, ``store_errors``.
    """

    def __init__(
        self,
        tool: str,
        field: str,
        *,
        limit: float,
        window: float,
        per: Literal["user"] | StateKey[str] | str = "user",
        store: Store | None = None,
        scale: int = 100,
        on_exceed: Literal["deny", "confirm"] = "deny",
        role: StateKey[bool] | str | None = None,
        approver: Any = None,
        on_store_error: Literal["deny", "allow"] = "deny",
        name: str = "SumLimit",
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int | float) or not limit >= 0:
            raise ValueError("limit must be a non-negative number")
        if isinstance(window, bool) or not isinstance(window, int | float) or not window > 0:
            raise ValueError("window must be a positive number of seconds")
        if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
            raise ValueError("scale must be a positive int (units per 1, e.g. 100 for cents)")
        if on_exceed not in ("deny", "confirm") or on_store_error not in ("deny", "allow"):
            raise ValueError("on_exceed is 'deny' or 'confirm'; on_store_error 'deny' or 'allow'")
        if approver is not None and on_exceed != "confirm":
            raise ValueError("approver= checks a person's confirmation: pass on_exceed='confirm'")
        if store is not None and not isinstance(store, Store):
            raise TypeError(f"store must be an adk_lattice Store, got {type(store).__name__}")
        self.tool, self.field = tool, field
        #: Only this tool's calls reach the handler.
        self.tools = frozenset({tool})
        self.limit, self.window, self.scale = limit, float(window), scale
        self.per: Literal["user"] | StateKey[str] = (
            "user" if per == "user" else declared_key(per, str, "SumLimit per", declare=False)
        )
        if role is not None:
            role = declared_key(role, bool, "SumLimit role")
        self.state_keys = tuple(k for k in (self.per, role) if isinstance(k, StateKey))
        self.store = store if store is not None else MemoryStore(name=name)
        self.approval = Approval(
            lambda _args: True, role=role, confirm=on_exceed == "confirm", approver=approver
        )
        self.on_exceed, self.on_store_error = on_exceed, on_store_error
        self.name = name
        self._counts = Counts()
        self._held: Keyed[tuple[str, int]] = Keyed()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters by outcome."""
        return self._counts.snapshot()

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The summed tool and its field (checked against the app at its first run)."""
        return {self.tool: frozenset({self.field})}

    def _key(self, ctx: Any) -> str:
        if self.per == "user":
            scope, who = "user", ctx.user_id
        else:
            scope, who = self.per.name, self.per.get(ctx.state) or "-"
        index = int(time.time() // self.window)
        return counter_key(self.name, ctx.session.app_name, scope, who, index)

    async def _add(self, key: str, units: int) -> int | None:
        try:
            return await self.store.incr(key, self.window, amount=units)
        except Exception as exc:  # an outage must not become the handler's crash
            logger.warning("adk_lattice: %s: the store failed (%s)", self.name, type(exc).__name__)
            return None

    async def before_tool(
        self, *, tool: Any, tool_args: Any, tool_context: Any
    ) -> dict[str, Any] | None:
        """Reserve the call's amount; deny (or ask a person) when the sum would pass the cap."""
        ctx = tool_context
        value = tool_args.get(self.field) if isinstance(tool_args, Mapping) else None
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            reason = f"{self.field} must be a non-negative number"
            return self._deny(ctx, "sum_limit_input", reason)
        if isinstance(value, float) and not math.isfinite(value):
            return self._deny(ctx, "sum_limit_input", f"{self.field} must be a finite number")
        units = math.ceil(round(value * self.scale, 6))
        if units > COUNTER_MAX:  # no store counts past a signed 64-bit integer
            return self._deny(ctx, "sum_limit_input", f"{self.field} is too large to count")
        key = self._key(ctx)
        total = await self._add(key, units)
        if total is None:
            self._counts.bump("store_errors")
            if self.on_store_error == "allow":
                return None
            reason = "the running total could not be checked (store unavailable)"
            return self._deny(ctx, "sum_limit_unavailable", reason)
        if total > self.limit * self.scale:
            verdict, code = self.approval.decide(ctx)
            if verdict != "allow":
                await self._add(key, -units)
                if verdict == "defer":
                    return self._ask(ctx)
                if code == "approval_required":
                    code = "sum_limit"
                reason = f"{self.tool} may total at most {self.limit:g} per {self.window:g} s"
                return self._deny(ctx, code, reason)
        self._held.put((ctx.invocation_id, ctx.function_call_id), (key, units))
        self._counts.bump("allowed")
        return None

    def _ask(self, ctx: Any) -> dict[str, Any]:
        hint = f"This {self.tool} call takes the total past {self.limit:g}. Approve it?"
        self._counts.bump("pending_approval")
        return ask_person(ctx, self.name, self.tool, "sum_limit", hint)

    def _deny(self, ctx: Any, code: str, reason: str) -> dict[str, Any]:
        self._counts.bump("denied")
        report(ctx, "deny", self.name, code)
        return tool_denial(self.name, reason, code, tool=self.tool)

    async def after_tool(
        self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any
    ) -> None:
        """Keep the reservation of a call that ran; give back one that did not."""
        held = self._held.pop((tool_context.invocation_id, tool_context.function_call_id))
        call = current_call()
        if held is not None and call is not None and call.short_circuited_by is not None:
            await self._release(held)

    async def on_tool_error(
        self, *, tool: Any, tool_args: Any, tool_context: Any, error: Any
    ) -> None:
        """A call that raised moved nothing: give its reservation back."""
        held = self._held.pop((tool_context.invocation_id, tool_context.function_call_id))
        if held is not None:
            await self._release(held)

    async def _release(self, held: tuple[str, int]) -> None:
        self._counts.bump("released")
        await self._add(held[0], -held[1])
