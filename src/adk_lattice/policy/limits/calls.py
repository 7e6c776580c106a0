"""``CallLimits``: per-request caps on model calls, tool calls and calls per tool.

A user request is the root invocation: an ``AgentTool``'s nested run has an invocation id
of its own but counts against the request whose tool call started it. The link is a
context variable set while a tool call runs: ADK starts the nested Runner inside the
tool, in that call's context, so the nested run's first hook finds its parent's root.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from google.adk.models.llm_response import LlmResponse

from ..._records import tool_label
from .._common import Counts, Keyed, record_denial, refusal, report, tool_denial

#: The root invocation of the tool call running in this context (None outside tool calls).
_ROOT: ContextVar[str | None] = ContextVar("adk_lattice_root_invocation", default=None)


class Roots:
    """Which root invocation (user request) each invocation belongs to, bounded.

    An invocation seen for the first time while a tool call of another invocation runs in
    the same context (an ``AgentTool``'s nested run) belongs to that call's root; any other
    is its own root.
    """

    def __init__(self, max_entries: int = 4096) -> None:
        self._roots: Keyed[str] = Keyed(max_entries)

    def of(self, invocation_id: str) -> str:
        """The root invocation id of ``invocation_id``."""
        root = self._roots.get(invocation_id)
        if root is None:
            root = _ROOT.get() or invocation_id
            self._roots.put(invocation_id, root)
        return root

    def enter_tool(self, invocation_id: str) -> None:
        """Mark this context as running a tool call of ``invocation_id``'s request."""
        _ROOT.set(self.of(invocation_id))

    def leave_tool(self) -> None:
        """The tool call is over: runs started later in this context are new requests."""
        _ROOT.set(None)

    def forget(self, invocation_id: str) -> bool:
        """Forget an ended invocation; True when it was a root (its request is over)."""
        root = self._roots.pop(invocation_id)
        return root is None or root == invocation_id


class CallLimits:
    """``before_model`` / ``before_tool``: stop a runaway invocation legibly.

    Counts are kept per user request: the root invocation, which nested ``AgentTool`` runs
    count against (keyed by its ``invocation_id``, freed when it ends, and bounded), so
    one instance serves every session at once::

        CallLimits(max_model_calls=8, max_tool_calls=20, per_tool={"issue_refund": 1})

    Over a cap, a model call is answered with ``message`` (a model-role refusal) and a tool
    call gets ``{"status": "denied", "reason": ..., "code": "tool_call_limit"}``, which the
    model can explain. Both are noted for telemetry and audit as ``deny`` with the code
    ``model_call_limit`` or ``tool_call_limit``.

    Args:
        max_model_calls: model calls allowed per invocation (None: no cap).
        max_tool_calls: tool calls allowed per invocation, all tools together.
        per_tool: tool calls allowed per invocation, by tool name.
        message: what the user reads when the model-call cap is reached.
        name: the handler name.

    Attributes:
        counts: ``denied:model``, ``denied:tools``, ``denied:<tool>``.
    """

    def __init__(
        self,
        *,
        max_model_calls: int | None = None,
        max_tool_calls: int | None = None,
        per_tool: Mapping[str, int] | None = None,
        message: str = "I've reached the limit of steps I can take for one request. "
        "Please ask again, more specifically.",
        name: str = "CallLimits",
    ) -> None:
        caps = [max_model_calls, max_tool_calls, *(per_tool or {}).values()]
        if any(c is not None and (not isinstance(c, int) or c < 0) for c in caps):
            raise ValueError("call limits must be non-negative integers")
        self.max_model_calls = max_model_calls
        self.max_tool_calls = max_tool_calls
        self.per_tool = dict(per_tool or {})
        self.message = message
        self.name = name
        self._counts = Counts()
        self._runs: Keyed[Counter[str]] = Keyed()
        self._roots = Roots()

    @property
    def counts(self) -> Mapping[str, int]:
        """Denial counters."""
        return self._counts.snapshot()

    @property
    def open_invocations(self) -> int:
        """Invocations with live counters (0 once every run has ended)."""
        return len(self._runs)

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The tools ``per_tool`` caps (checked against the app at its first run)."""
        return dict.fromkeys(self.per_tool, frozenset())

    def _adk_lattice_scope_problem(self, *, tools: Any, agents: Any) -> str | None:
        """A model-call cap scoped to tools never counts: a model call is no tool's call."""
        if tools is None or self.max_model_calls is None:
            return None
        return (
            "max_model_calls with tools= can never count a model call: a handler scoped to "
            "tools runs only on those tools' calls, and a model call is no tool's call. "
            "Register the model-call cap on a CallLimits without tools= (give the two "
            "different names), and cap tools there with per_tool={...} or max_tool_calls"
        )

    def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """Count the model call; refuse it past ``max_model_calls``."""
        root = self._roots.of(callback_context.invocation_id)
        used = self._runs.setdefault(root, Counter)
        if self.max_model_calls is not None and used["model"] >= self.max_model_calls:
            self._counts.bump("denied:model")
            record_denial(callback_context, self.name, "model_call_limit")
            report(callback_context, "deny", self.name, "model_call_limit")
            return refusal(self.name, "model_call_limit", self.message, limit=self.max_model_calls)
        used["model"] += 1
        return None

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any] | None:
        """Count the tool call; deny it past the total or the per-tool cap."""
        name = tool_label(tool)
        root = self._roots.of(tool_context.invocation_id)
        # Set even when denied below: after_tool runs either way and clears it.
        self._roots.enter_tool(tool_context.invocation_id)
        used = self._runs.setdefault(root, Counter)
        cap = self.per_tool.get(name)
        if cap is not None and used[f"tool:{name}"] >= cap:
            self._counts.bump(f"denied:{name}")
            reason = f"{name} may be called at most {cap} time(s) per request"
            return self._deny(tool_context, name, reason)
        if self.max_tool_calls is not None and used["tools"] >= self.max_tool_calls:
            self._counts.bump("denied:tools")
            reason = f"at most {self.max_tool_calls} tool calls are allowed per request"
            return self._deny(tool_context, name, reason)
        used["tools"] += 1
        used[f"tool:{name}"] += 1
        return None

    def _deny(self, ctx: Any, tool: str, reason: str) -> dict[str, Any]:
        report(ctx, "deny", self.name, "tool_call_limit")
        return tool_denial(self.name, reason, "tool_call_limit", tool=tool)

    def after_tool(self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        """The tool call is over: runs started later in this context are new requests."""
        self._roots.leave_tool()

    def on_tool_error(self, *, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> None:
        """The tool call failed: runs started later in this context are new requests."""
        self._roots.leave_tool()

    def after_run(self, *, invocation_context: Any) -> None:
        """Free the request's counters when its root invocation ends."""
        if self._roots.forget(invocation_context.invocation_id):
            self._runs.pop(invocation_context.invocation_id)

    def on_run_error(self, *, invocation_context: Any, error: Any) -> None:
        """Free the request's counters when its root invocation fails."""
        if self._roots.forget(invocation_context.invocation_id):
            self._runs.pop(invocation_context.invocation_id)
