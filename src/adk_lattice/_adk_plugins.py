"""ADK's own plugins (any ``BasePlugin``) as handlers in a tier, and as observers.

A plugin in a decider tier runs only the callbacks its class overrides, at that tier's
place in the chain and under the lattice's rules: its return values go through the return
guard and its exceptions follow the tier's ``on_error``. In the telemetry tier it is an
observer: its callbacks get the hook's arguments for every hook ADK called, and what they
return is ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from google.adk.plugins.base_plugin import BasePlugin

from ._hooks import HOOKS, HookName

#: The subjects an observing plugin sees as delivered (the winner's value, when one won).
_DELIVERED: Final = {"after_model": "llm_response", "after_tool": "result"}


def is_plugin(obj: Any) -> bool:
    """True for an ADK plugin instance (``google.adk.plugins.BasePlugin``)."""
    return isinstance(obj, BasePlugin)


def plugin_callbacks(plugin: BasePlugin) -> dict[HookName, Callable[..., Any]]:
    """The lattice hooks a plugin implements: each ``<hook>_callback`` it overrides.

    A callback is overridden when the plugin's (class or instance) attribute is not
    ``BasePlugin``'s own no-op; those are left out, so a plugin costs nothing on the hooks
    it does not implement.
    """
    found: dict[HookName, Callable[..., Any]] = {}
    for hook in HOOKS:
        attr = f"{hook}_callback"
        method = getattr(plugin, attr, None)
        if not callable(method):
            continue
        if getattr(method, "__func__", method) is getattr(BasePlugin, attr, None):
            continue
        found[hook] = method
    return found


class PluginObserver:
    """An ADK plugin in the telemetry tier: its callbacks observe, their returns are ignored.

    Args:
        plugin: the plugin.
        callbacks: its overridden callbacks, by lattice hook name.
    """

    __slots__ = ("callbacks", "name", "partial", "plugin")

    def __init__(self, plugin: BasePlugin, callbacks: dict[HookName, Callable[..., Any]]) -> None:
        self.plugin = plugin
        self.callbacks = callbacks
        self.name: str = plugin.name
        self.partial = True  # ADK calls a plugin for every streamed chunk too

    def observe(self, outcome: Any) -> Any:
        """Call the plugin's callback for the hook ADK called, with ADK's arguments.

        Synthesized outcomes (hooks ADK never called) are not passed on: the plugin sees
        what it would see registered on its own. On ``after_model`` and ``after_tool`` it
        gets what was delivered (a decider's replacement, when one won).
        """
        if outcome.synthesized:
            return None
        callback = self.callbacks.get(outcome.hook)
        if callback is None:
            return None
        kwargs = dict(outcome.args)
        subject = _DELIVERED.get(outcome.hook)
        if subject is not None and outcome.value is not None:
            kwargs[subject] = outcome.value
        return callback(**kwargs)

    def __repr__(self) -> str:
        return f"<observer for ADK plugin {self.name!r}>"
