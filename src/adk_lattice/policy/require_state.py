"""``RequireState``: stop an invocation before any token is spent when state does not hold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.genai import types

from ..state import StateKey
from ._common import Counts, declared_key, model_content, record_denial, report


class RequireState:
    """``before_agent``: answer with ``message`` instead of running the agent.

    The agent runs only when ``check(key.get(state))`` is true; by default the value must
    be truthy (a bool key must be True). The key is read through its declaration, so a
    wrong-typed value (the string ``"true"``) counts as the default, not as true::

        ACTIVE = StateKey("user:account_active", bool, False, "The account may use the agent.")
        RequireState(ACTIVE, message="Your account is inactive; please contact support.")

    Args:
        key: the declared key, or a name (looked up in the registry, else declared as a
            bool key defaulting to False).
        message: what the user reads when the check fails.
        check: a predicate on the key's value (default: ``bool``).
        equals: shorthand for ``check=lambda v: v == equals``.
        name: the handler name (default ``RequireState``).
        agents: only guard these agents (default: every agent, including sub-agents).

    Attributes:
        counts: ``allowed`` and ``denied`` counters.

    A stop is noted for telemetry and audit as ``block`` with the code ``state_required``.
    """

    _UNSET: Any = object()

    def __init__(
        self,
        key: StateKey[Any] | str,
        *,
        message: str = "Sorry, I can't help with this right now: your account is not enabled.",
        check: Callable[[Any], bool] | None = None,
        equals: Any = _UNSET,
        name: str = "RequireState",
        agents: set[str] | frozenset[str] | None = None,
    ) -> None:
        if check is not None and equals is not self._UNSET:
            raise ValueError("give RequireState either check= or equals=, not both")
        if not isinstance(message, str) or not message.strip():
            raise ValueError("RequireState needs a non-empty message for the user")
        self.key = declared_key(
            key, None, "RequireState", doc="Must be true for the agent to run (RequireState)."
        )
        #: The keys this policy trusts; ``Lattice`` protects them from client writes.
        self.state_keys = (self.key,)
        self.message = message
        if equals is not self._UNSET:
            self._check: Callable[[Any], bool] = lambda v: bool(v == equals)
        else:
            self._check = check or bool
        self.name = name
        self.agents = agents
        self._counts = Counts()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``allowed``, ``denied``."""
        return self._counts.snapshot()

    def before_agent(self, *, agent: Any, callback_context: Any) -> types.Content | None:
        """Let the agent run, or return the user's message as the agent's answer."""
        value = self.key.get(callback_context.state)
        if self._check(value):
            self._counts.bump("allowed")
            return None
        self._counts.bump("denied")
        record_denial(callback_context, self.name, "state_required", key=self.key.name)
        report(callback_context, "block", self.name, "state_required")
        return model_content(self.message)
