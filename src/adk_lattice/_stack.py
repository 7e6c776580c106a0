"""Two lattices on one runner: the one registered later stands down unless told to stack.

``adk web --extra_plugins adk_lattice.Lattice`` on an app whose ``App.plugins`` already
holds a ``Lattice`` gives the runner two of them. Both would run every hook: two audit
records per invocation, and the second records ``allow`` for a call the first denied
(ADK stops at the first plugin's value, so the second's chain sees a tool call that never
ran, or runs its own policies on it). So a lattice finding another ``Lattice`` registered
before it on the same plugin manager warns once, naming both, and stands down there;
``Lattice(stack=True)`` runs anyway.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("adk_lattice")


def plugin_manager(ctx: Any) -> Any:
    """The plugin manager of the runner a hook's context belongs to, or None."""
    try:  # a CallbackContext / ToolContext carries the invocation context
        return ctx._invocation_context.plugin_manager
    except AttributeError:
        return getattr(ctx, "plugin_manager", None)


class StackCheck:
    """Whether one lattice stands down on a given runner (decided once per plugin manager).

    Args:
        owner: the lattice asking.
        stack: run even when another lattice was registered first.
    """

    __slots__ = ("_off", "_owner", "_seen", "_stack", "_warned")

    def __init__(self, owner: Any, *, stack: bool) -> None:
        self._owner = owner
        self._stack = stack
        self._seen: Any = None  # the plugin manager decided last (one, so a strong reference)
        self._off = False
        self._warned = False

    def off(self, ctx: Any) -> bool:
        """True when the owner should do nothing on the runner a callback or tool context
        belongs to."""
        if self._stack:
            return False
        return self.decide(plugin_manager(ctx))

    def off_run(self, invocation_context: Any) -> bool:
        """:meth:`off` for the run hooks, which get the invocation context itself."""
        if self._stack:
            return False
        return self.decide(getattr(invocation_context, "plugin_manager", None))

    def decide(self, manager: Any) -> bool:
        """True when another lattice is registered before the owner on ``manager``."""
        if manager is self._seen:
            return self._off
        first = self._first_lattice(manager)
        off = first is not None and first is not self._owner
        if off and not self._warned:
            self._warned = True
            logger.warning(
                "adk_lattice: two Lattice plugins on one runner: %r (registered first) and "
                "%r; %r stands down so each hook is decided and audited once. Construct it "
                "with Lattice(stack=True) to run both.",
                first.name,
                self._owner.name,
                self._owner.name,
            )
        self._seen, self._off = manager, off
        return off

    def _first_lattice(self, manager: Any) -> Any:
        plugins = getattr(manager, "plugins", None)
        if not isinstance(plugins, list | tuple):
            return None
        kind = type(self._owner)
        return next((p for p in plugins if isinstance(p, kind)), None)
