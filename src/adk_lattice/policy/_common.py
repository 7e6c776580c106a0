"""What every built-in policy shares: legible denials of each hook's type, and counters."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Final, Generic, TypeVar

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .._notes import note
from ..state import REGISTRY, StateKey

#: The ``custom_metadata`` key under which a refusal says who refused and why.
META_KEY: Final = "adk_lattice"
#: The ``temp:`` state key where model/agent policies record their latest denial.
DENIAL_STATE_KEY: Final = "temp:adk_lattice.denial"

V = TypeVar("V")


def declared_key(
    key: Any, kind: type[Any] | None, what: str, *, declare: bool = True, doc: str = ""
) -> StateKey[Any]:
    """A :class:`StateKey`, given as one or by its name (as a config file writes it).

    A name is looked up in the registry; a name never declared is declared here, of
    ``kind`` with its empty default (``False`` for a bool key), so that a missing value
    never counts as true.

    Args:
        key: a StateKey or a key name such as ``"user:is_manager"``.
        kind: the type the policy reads (None: any; an undeclared name is then a bool).
        what: the argument, as a message names it (``Approval role``).
        declare: declare a name never declared (else it is an error naming the fix).
        doc: the doc of a key declared here.

    Raises:
        TypeError: on another type, or a name declared with a different type.
        ValueError: on a malformed name.
    """
    if not isinstance(key, StateKey):
        if not isinstance(key, str) or not key:
            raise TypeError(
                f"{what} takes a StateKey or a state key name such as 'user:is_manager', "
                f"not {type(key).__name__}"
            )
        known = REGISTRY.get(key)
        if known is None and not declare:
            raise ValueError(
                f"{what}: no state key {key!r} is declared; declare it first, with "
                f"StateKey({key!r}, str, '', '...') in code or a [state.NAME] table in a "
                "config file (then pass '@state.NAME')"
            )
        if known is None:
            new = kind or bool
            known = StateKey(key, new, new(), doc or f"Declared by name for {what}.")
        key = known
    found: StateKey[Any] = key
    if kind is not None and found.type is not kind:
        raise TypeError(
            f"{what} needs a {kind.__name__} state key; {found.name!r} is declared as "
            f"{found.type.__name__}"
        )
    return found


def tool_denial(policy: str, reason: str, code: str, **extra: Any) -> dict[str, Any]:
    """A tool result a model can explain, with a code a program can read.

    Args:
        policy: the denying policy's name.
        reason: what the model (and the user) read; may name fields, never raw values.
        code: a short, content-free reason code (``schema``, ``tool_call_limit``...).
        extra: more fields (``tool``...).

    Returns:
        ``{"status": "denied", "reason": ..., "code": ..., "policy": ..., **extra}``.
    """
    return {"status": "denied", "reason": reason, "code": code, "policy": policy, **extra}


def ask_person(
    ctx: Any,
    policy: str,
    tool: str,
    code: str,
    hint: str,
    *,
    note_code: str | None = None,
    **payload: Any,
) -> dict[str, Any]:
    """Pause the call for a person through ADK's tool confirmation, and say so legibly.

    Args:
        ctx: the ``before_tool`` hook's ``tool_context``.
        policy: the asking policy's name.
        tool: the tool's name.
        code: the content-free reason code of the result.
        hint: what the person is asked.
        note_code: the code noted for telemetry (default: ``code``).
        payload: more fields of the confirmation's payload (never raw values).

    Returns:
        ``{"status": "pending_approval", "reason": ..., "code": ..., "policy": ...,
        "tool": ...}``, the tool's result until the person answers.
    """
    ctx.request_confirmation(hint=hint, payload={"tool": tool, **payload})
    report(ctx, "defer", policy, note_code or code)
    return {
        "status": "pending_approval",
        "reason": f"this {tool} call waits for a person to approve it",
        "code": code,
        "policy": policy,
        "tool": tool,
    }


def report(ctx: Any, decision: str, policy: str, reason: str) -> None:
    """Tell telemetry and audit what a policy decided on the hook whose context is ``ctx``.

    Args:
        ctx: the hook's context argument (``callback_context`` or ``tool_context``).
        decision: a decision name (``deny``, ``block``, ``rewrite``, ``redact``, ``defer``).
        policy: the policy's handler name.
        reason: a short, content-free reason code: never a user value.
    """
    if ctx is not None:  # no hook context (a direct call): nobody could gather the note
        note(ctx, decision, handler=policy, reason=reason)


def kinds_code(kinds: Iterable[str]) -> str:
    """The kinds found as one content-free reason code: ``card,email`` (sorted, lower case)."""
    return ",".join(sorted({k.lower() for k in kinds}))


def model_content(text: str) -> types.Content:
    """A model-role Content holding one text part."""
    return types.Content(role="model", parts=[types.Part(text=text)])


def refusal(policy: str, code: str, text: str, **detail: Any) -> LlmResponse:
    """A model-role LlmResponse standing in for a model call, tagged with who refused and why.

    Args:
        policy: the refusing policy's name.
        code: a short machine-readable reason (``prompt_injection``, ``model_call_limit``...).
        text: what the user reads.
        detail: extra fields for the metadata (never raw user data).
    """
    meta = {META_KEY: {"denied_by": policy, "reason": code, **detail}}
    return LlmResponse(content=model_content(text), custom_metadata=meta, turn_complete=True)


def record_denial(ctx: Any, policy: str, code: str, **detail: Any) -> None:
    """Note a denial in the context's ``temp:`` state, for later callbacks and tools."""
    # A context without writable state still gets its denial; only the note is lost.
    with contextlib.suppress(Exception):
        ctx.state[DENIAL_STATE_KEY] = {"policy": policy, "reason": code, **detail}


class Counts:
    """Thread-safe counters a policy exposes as ``policy.counts`` (a read-only snapshot)."""

    def __init__(self) -> None:
        self._counter: Counter[str] = Counter()
        self._lock = threading.Lock()

    def bump(self, *names: str) -> None:
        """Add one to each named counter."""
        with self._lock:
            for name in names:
                self._counter[name] += 1

    def snapshot(self) -> Mapping[str, int]:
        """A copy of the counters."""
        with self._lock:
            return dict(self._counter)


class Keyed(Generic[V]):
    """A bounded map from a per-stream or per-invocation key to a value; oldest evicted first.

    One policy instance serves every session at once, so per-invocation data lives here,
    keyed, and is freed when the invocation ends; the bound keeps memory flat when a run
    never ends cleanly.
    """

    def __init__(self, max_entries: int = 4096) -> None:
        self._data: OrderedDict[Any, V] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: Any) -> V | None:
        """The value for ``key``, or None."""
        with self._lock:
            return self._data.get(key)

    def setdefault(self, key: Any, factory: type[V] | Any) -> V:
        """The value for ``key``, created with ``factory()`` when missing."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                value = factory()
                self._data[key] = value
                while len(self._data) > self._max:
                    self._data.popitem(last=False)
            return value

    def put(self, key: Any, value: V) -> None:
        """Set the value for ``key``."""
        with self._lock:
            self._data[key] = value
            while len(self._data) > self._max:
                self._data.popitem(last=False)

    def pop(self, key: Any) -> V | None:
        """Forget ``key`` and return its value."""
        with self._lock:
            return self._data.pop(key, None)

    def items(self) -> list[tuple[Any, V]]:
        """A snapshot of the entries, oldest first."""
        with self._lock:
            return list(self._data.items())

    def drop_where(self, first: Any) -> None:
        """Forget every tuple key whose first item is ``first`` (an invocation id)."""
        with self._lock:
            for key in [k for k in self._data if isinstance(k, tuple) and k[0] == first]:
                del self._data[key]

    def __len__(self) -> int:
        return len(self._data)


def text_of(content: types.Content | None) -> str:
    """The concatenated text parts of a Content (thoughts excluded)."""
    if content is None or not content.parts:
        return ""
    return "".join(p.text for p in content.parts if p.text and not p.thought)
