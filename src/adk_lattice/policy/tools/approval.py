"""``Approval``: when a call needs a person, and whose "yes" counts.

ADK's tool confirmation (``tool_context.request_confirmation``) pauses the call and emits
an ``adk_request_confirmation`` function call; the client answers with a function
response ``{"confirmed": true, "payload": ...}`` and ADK re-runs the original call (its
name and arguments checked against the session history) with
``tool_context.tool_confirmation`` set. That answer proves only that *someone who can post
to this session* said yes: ADK records no other identity. So a confirmation is checked
against who may give it, in the resumed run: the ``approver`` callable, else the ``role``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ...state import StateKey
from .._common import declared_key

logger = logging.getLogger("adk_lattice.policy")

#: ``(verdict, code)``: ``allow`` (code says how), ``deny`` or ``defer`` (ask a person).
Verdict = tuple[Literal["allow", "deny", "defer"], str]


@dataclass(frozen=True, slots=True)
class Approval:
    """When a call needs approval, and who may give it.

    Args:
        when: a predicate on the (rewritten) arguments; or a ``(field, threshold)`` pair
            meaning ``args[field] > threshold``.
        role: a declared bool key, or its name (``"user:is_manager"``: looked up in the
            registry, else declared as a bool defaulting to False); when it is True for this
            user the call goes ahead without asking. With ``confirm=True`` and no
            ``approver``, a confirmation counts only when the role holds in the resumed run.
        confirm: ask a person through ADK's tool confirmation: the run pauses, and the call
            runs when an authorised person approves. When False and ``role`` does not hold,
            it is denied.
        approver: ``approver(tool_context, confirmation) -> bool``: whether this
            confirmation comes from someone allowed to approve (e.g. it verifies a signed
            token your approval UI put in ``confirmation.payload``). False, or an
            exception, denies (``approver_not_authorised``).
        hint: what the person is asked.

    Without ``role`` or ``approver``, ``confirm=True`` is a "are you sure?" question the
    requester answers themself: use it for that, not for four-eyes approval.
    """

    when: Callable[[Mapping[str, Any]], bool] | tuple[str, float]
    role: StateKey[bool] | str | None = None
    confirm: bool = False
    approver: Callable[[Any, Any], bool] | None = None
    hint: str = "Please approve or reject this call."

    def __post_init__(self) -> None:
        if self.role is not None:
            object.__setattr__(self, "role", declared_key(self.role, bool, "Approval role"))
        when = self.when
        if isinstance(when, list):  # a config file writes the pair as an array
            when = tuple(when)
            object.__setattr__(self, "when", when)
        if not callable(when) and not (
            isinstance(when, tuple)
            and len(when) == 2
            and isinstance(when[0], str)
            and isinstance(when[1], int | float)
            and not isinstance(when[1], bool)
        ):
            raise TypeError(
                "Approval when takes a predicate on the arguments or a (field, threshold) "
                f"pair such as ('amount', 100), not {when!r}"
            )
        if self.approver is not None and not callable(self.approver):
            raise TypeError("approver must be a callable (tool_context, confirmation) -> bool")
        if self.approver is not None and not self.confirm:
            raise ValueError("an approver checks confirmations: pass confirm=True with it")

    @property
    def role_key(self) -> StateKey[bool] | None:
        """The declared role key (a name given is resolved at construction), or None."""
        return self.role if isinstance(self.role, StateKey) else None

    def needed(self, args: Mapping[str, Any]) -> bool:
        """Whether these arguments cross the threshold (an unreadable value: yes)."""
        if callable(self.when):
            try:
                return bool(self.when(args))
            except Exception:
                return True  # fail closed: a predicate that cannot decide asks for approval
        name, threshold = self.when
        value = args.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        # math.isfinite would overflow on an int past float range; ints are always finite
        # and compare with a float threshold exactly.
        if isinstance(value, float) and not math.isfinite(value):
            return True
        return value > threshold

    def decide(self, ctx: Any) -> Verdict:
        """What to do with a call that needs approval, given its tool context.

        Returns:
            ``("allow", "role" | "approved")``, ``("deny", code)`` with the code
            ``approval_required``, ``rejected_by_approver`` or ``approver_not_authorised``,
            or ``("defer", "approval_required")`` when a person must be asked.
        """
        role = self.role_key
        if role is not None and role.get(ctx.state) is True:
            return ("allow", "role")
        if not self.confirm:
            return ("deny", "approval_required")
        confirmation = getattr(ctx, "tool_confirmation", None)
        if confirmation is None:
            return ("defer", "approval_required")
        if not confirmation.confirmed:
            return ("deny", "rejected_by_approver")
        if self.approver is not None:
            try:
                ok = self.approver(ctx, confirmation) is True
            except Exception as exc:
                logger.warning("adk_lattice: an approver check raised %s", type(exc).__name__)
                ok = False
            return ("allow", "approved") if ok else ("deny", "approver_not_authorised")
        if role is not None:  # the role did not hold above: this "yes" is not a manager's
            return ("deny", "approver_not_authorised")
        return ("allow", "approved")
