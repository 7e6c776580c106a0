"""Turning what users register (objects, functions) into bound chain entries, once."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from ._adk_plugins import PluginObserver, is_plugin, plugin_callbacks
from ._hooks import DEFAULT_ON_ERROR, HOOK_ARGS, HOOKS, TOOL_HOOKS, HookName, OnError, Tier

#: A class attribute only ``Lattice`` sets: how binding recognises a nested lattice without
#: importing the plugin (which imports this module).
LATTICE_MARK: Final = "_adk_lattice_plugin"
#: A class attribute naming the scoping options (``tools``, ``agents``) a handler refuses:
#: one that must see every call (``ProvenanceGuard``) would silently skip the rest.
UNSCOPED_MARK: Final = "_adk_lattice_unscoped"
#: A method a handler may define, ``(*, tools, agents) -> str | None``: what is wrong with
#: the scoping it was given, for a scope that depends on its settings (a model-call cap
#: scoped to tools never counts), or None when it is fine.
SCOPE_CHECK_MARK: Final = "_adk_lattice_scope_problem"

_OPTIONS: Final = ("name", "agents", "tools", "on_error", "partial", "timeout", "mode")
_MODES: Final = ("enforce", "shadow")
_ON_ERROR: Final = ("deny", "skip", "raise")
_F = TypeVar("_F", bound=Callable[..., Any])
#: ``enforce``: the handler acts. ``shadow``: it runs on copies and only reports.
Mode = Literal["enforce", "shadow"]


@dataclass(frozen=True, slots=True)
class Bound:
    """One handler method bound into one hook's chain (or an observer), resolved once."""

    name: str
    tier: Tier
    call: Callable[..., Any]
    is_async: bool
    on_error: OnError
    agents: frozenset[str] | None
    tools: frozenset[str] | None
    partial: bool
    timeout: float | None
    #: ``mode="shadow"``: runs on copies, its decision reported as what it would have done.
    shadow: bool = False


class FunctionHandler:
    """A plain function registered on one hook, with its options. Made by :func:`on`."""

    def __init__(self, hook: HookName, fn: Callable[..., Any], **options: Any) -> None:
        if hook not in HOOKS:
            raise ValueError(f"unknown hook {hook!r}; expected one of {', '.join(HOOKS)}")
        if not callable(fn):
            raise TypeError(f"on({hook!r}) needs a callable, got {type(fn).__name__}")
        self.hook = hook
        self.fn = fn
        self.name: str = options.pop("name", None) or getattr(fn, "__name__", type(fn).__name__)
        for key, value in options.items():
            setattr(self, key, value)
        setattr(self, hook, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<handler {self.name!r} on {self.hook}>"


def on(
    hook: HookName,
    *,
    name: str | None = None,
    agents: Collection[str] | None = None,
    tools: Collection[str] | None = None,
    on_error: OnError | None = None,
    partial: bool = False,
    timeout: float | None = None,
    mode: Mode = "enforce",
) -> Callable[[Callable[..., Any]], FunctionHandler]:
    """Register a plain function as a handler on one hook.

    The function takes ADK's keyword arguments for that hook, sync or async::

        @on("before_tool", tools={"issue_refund"})
        def round_amount(*, tool, tool_args, tool_context):
            tool_args["amount"] = round(float(tool_args["amount"]), 2)

        Lattice(handlers=[round_amount])

    Args:
        hook: the hook name (``before_model``, ``after_tool``, ...).
        name: the name telemetry and errors use (default: the function's name).
        agents: run only for these agent names (default: every agent).
        tools: run only for these tool names, on tool hooks (default: every tool).
        on_error: ``deny``, ``skip`` or ``raise`` when it fails (default: per tier).
        partial: also run on streamed partial chunks (``after_model``, ``on_event``).
        timeout: seconds an async handler may take before it counts as failed.
        mode: ``enforce`` (default) or ``shadow``: run on copies of what the hook may edit,
            and report what it would have done (``would_deny``...) without acting.

    Returns:
        A decorator turning the function into a handler object.
    """
    opts: dict[str, Any] = {"name": name, "agents": agents, "tools": tools}
    opts |= {"on_error": on_error, "partial": partial, "timeout": timeout, "mode": mode}
    return lambda fn: FunctionHandler(hook, fn, **opts)


def configure(handler: Any, **options: Any) -> Any:
    """Set scoping and error options on a handler object, returning it.

    Accepts the same options as :func:`on` (``name``, ``agents``, ``tools``, ``on_error``,
    ``partial``, ``timeout``, ``mode``); a class may also declare them as attributes.
    ``configure(handler, mode="shadow")`` puts any handler in shadow mode.

    Raises:
        TypeError: on an unknown option.
    """
    unknown = set(options) - set(_OPTIONS)
    if unknown:
        raise TypeError(f"unknown handler option(s): {', '.join(sorted(unknown))}")
    for key, value in options.items():
        setattr(handler, key, value)
    return handler


def handler_name(handler: Any) -> str:
    """The name a handler reports under: its ``name`` attribute, else its class name."""
    name = getattr(handler, "name", None)
    if isinstance(name, str) and name:
        return name
    if inspect.isfunction(handler) or inspect.ismethod(handler):
        return str(handler.__name__)
    return type(handler).__name__


def _names(value: Any, what: str, owner: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, Iterable):
        items = frozenset(value)
        if all(isinstance(v, str) for v in items):
            return items
    raise TypeError(f"handler {owner!r}: {what} must be a name or a collection of names")


def _bind_one(
    obj: Any,
    tier: Tier,
    call: Callable[..., Any],
    name: str,
    default_timeout: float | None,
    partial: bool | None = None,
) -> Bound:
    on_error = getattr(obj, "on_error", None) or DEFAULT_ON_ERROR[tier]
    if on_error not in _ON_ERROR:
        raise ValueError(f"handler {name!r}: on_error must be one of {_ON_ERROR}, not {on_error!r}")
    timeout = getattr(obj, "timeout", None)
    if timeout is None:
        timeout = default_timeout
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise ValueError(f"handler {name!r}: timeout must be a positive number of seconds")
    return Bound(
        name=name,
        tier=tier,
        call=call,
        is_async=inspect.iscoroutinefunction(call),
        on_error=on_error,
        agents=_names(getattr(obj, "agents", None), "agents", name),
        tools=_names(getattr(obj, "tools", None), "tools", name),
        partial=bool(getattr(obj, "partial", False)) if partial is None else partial,
        timeout=float(timeout) if timeout is not None else None,
        shadow=_mode(obj, tier, name) == "shadow",
    )


def _mode(obj: Any, tier: Tier, name: str) -> Mode:
    mode = getattr(obj, "mode", None) or "enforce"
    if mode not in _MODES:
        raise ValueError(f"handler {name!r}: mode must be 'enforce' or 'shadow', not {mode!r}")
    if mode == "shadow" and tier == "telemetry":
        raise ValueError(
            f"handler {name!r}: observers only watch, so they have no shadow mode; "
            "set mode='shadow' on a policy, cache or custom handler"
        )
    return "shadow" if mode == "shadow" else "enforce"


def bind(
    obj: Any, tier: Tier, default_timeout: float | None = None
) -> tuple[dict[HookName, Bound], Bound | None]:
    """Resolve one registered handler into its hook methods and its observer method.

    ``default_timeout`` applies to async methods of a handler that sets no ``timeout``.
    An ADK plugin (any ``BasePlugin``) contributes the ``*_callback`` methods it overrides;
    in the telemetry tier it becomes an observer of those hooks.

    Returns:
        The bound hook methods by hook name, and the bound ``observe`` method or None.

    Raises:
        TypeError: on a registration mistake, with the fix in the message: a class instead
            of an instance, a bare function registered without :func:`on`, an object with no
            hook method and no ``observe``, a hook method whose signature cannot take ADK's
            keyword arguments, a method named like ADK's plugin hooks (``*_callback``) on an
            object that is not a plugin, hook methods in the telemetry tier.
        ValueError: on a bad ``on_error`` or ``timeout``.
    """
    name = handler_name(obj)
    _refuse_mistakes(obj, name)
    _refuse_scoping(obj, name)
    if is_plugin(obj):
        return _bind_plugin(obj, tier, name, default_timeout)
    hooks: dict[HookName, Bound] = {}
    for hook in HOOKS:
        method = getattr(obj, hook, None)
        if method is None:
            continue
        if not callable(method):
            raise TypeError(f"handler {name!r}: {hook} must be callable")
        if tier == "telemetry":
            raise TypeError(
                f"handler {name!r} is in the telemetry tier, whose handlers are observers: "
                f"implement observe(outcome) instead of {hook}, or register it as a handler"
            )
        check_signature(method, hook, name)
        hooks[hook] = _bind_one(obj, tier, method, name, default_timeout)
    observe = getattr(obj, "observe", None)
    observer = None
    if callable(observe):
        check_observe(observe, name)
        observer = _bind_one(obj, tier, observe, name, default_timeout)
    if not hooks and observer is None:
        if tier == "telemetry":
            raise TypeError(
                f"telemetry entry {name!r} ({type(obj).__name__}) is not an observer: "
                f"telemetry entries need an observe(outcome) method"
            )
        raise TypeError(
            f"handler {name!r} ({type(obj).__name__}) has none of the hook methods "
            f"({', '.join(HOOKS)}) and no observe(outcome) method"
        )
    if tier != "telemetry" and getattr(obj, "tools", None) is not None:
        stray = [h for h in hooks if h not in TOOL_HOOKS]
        if stray and len(stray) == len(hooks):  # no model or agent call is a tool call
            raise TypeError(
                f"handler {name!r} is scoped to tools but implements no tool hook "
                f"({', '.join(stray)})"
            )
    return hooks, observer


def _refuse_mistakes(obj: Any, name: str) -> None:
    """Refuse what can only be a registration mistake, saying how to fix it."""
    if inspect.isclass(obj):
        raise TypeError(
            f"{obj.__name__} is a class: pass an instance, {obj.__name__}() "
            f"(with its arguments), not the class itself"
        )
    if (inspect.isfunction(obj) or inspect.ismethod(obj)) and not isinstance(obj, FunctionHandler):
        raise TypeError(
            f"{name!r} is a plain function: register it on a hook with "
            f"@on('before_tool') (or another hook name) so the lattice knows when to call it"
        )
    if getattr(type(obj), LATTICE_MARK, False) is True:
        raise TypeError(
            f"{name!r} is a Lattice: a Lattice cannot run inside another one; list its "
            f"handlers in this Lattice instead"
        )
    if is_plugin(obj):
        return
    for hook in HOOKS:
        if callable(getattr(obj, f"{hook}_callback", None)):
            raise TypeError(
                f"handler {name!r} has a method {hook}_callback, ADK's plugin hook name, "
                f"which the lattice never calls: name it {hook} (drop `_callback`), or make "
                f"the class a google.adk.plugins.BasePlugin"
            )


def _refuse_scoping(obj: Any, name: str) -> None:
    """Refuse ``tools=`` / ``agents=`` on a handler that must see every call."""
    refused = getattr(type(obj), UNSCOPED_MARK, ())
    given = [option for option in refused if getattr(obj, option, None) is not None]
    if given:
        scoped = " and ".join(f"{option}=" for option in given)
        raise TypeError(
            f"handler {name!r} must see every tool and model call of every agent, and "
            f"{scoped} would make it skip the others without a word: remove {scoped} "
            f"(its own declarations say which tools it acts on)"
        )
    check = getattr(obj, SCOPE_CHECK_MARK, None)
    if callable(check):
        problem = check(tools=getattr(obj, "tools", None), agents=getattr(obj, "agents", None))
        if problem:
            raise TypeError(f"handler {name!r}: {problem}")


def _bind_plugin(
    plugin: Any, tier: Tier, name: str, default_timeout: float | None
) -> tuple[dict[HookName, Bound], Bound | None]:
    callbacks = plugin_callbacks(plugin)
    if not callbacks:
        raise TypeError(
            f"ADK plugin {name!r} ({type(plugin).__name__}) overrides none of BasePlugin's "
            f"hook callbacks, so it would never run"
        )
    for hook, method in callbacks.items():
        check_signature(method, hook, name, suffix="_callback")
    if tier == "telemetry":
        watcher = PluginObserver(plugin, callbacks)
        return {}, _bind_one(plugin, tier, watcher.observe, name, default_timeout, partial=True)
    hooks = {h: _bind_one(plugin, tier, m, name, default_timeout) for h, m in callbacks.items()}
    return hooks, None


#: ADK's agent-level callbacks name these differently from its plugin hooks.
_AGENT_CALLBACK_NAMES: Final = {"args": "tool_args", "tool_response": "result"}


def check_signature(
    method: Callable[..., Any], hook: HookName, name: str, suffix: str = ""
) -> None:
    """Refuse a hook method that cannot take ADK's keyword arguments for its hook.

    Raises:
        TypeError: naming the expected signature (``**kwargs`` is accepted too).
    """
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return  # no introspectable signature (a builtin): nothing to check
    args = HOOK_ARGS[hook]
    try:
        sig.bind(**dict.fromkeys(args))
    except TypeError:
        pass
    else:
        return
    hint = ""
    renamed = [
        f"{old} -> {new}" for old, new in _AGENT_CALLBACK_NAMES.items() if old in sig.parameters
    ]
    if renamed:
        hint = (
            f" ({', '.join(renamed)}: that is ADK's agent-callback shape; plugin hooks, and "
            f"the lattice, pass other names)"
        )
    self = "self, " if inspect.ismethod(method) else ""
    raise TypeError(
        f"handler {name!r}: {hook}{suffix}{sig} cannot take ADK's keyword arguments for "
        f"{hook}; expected {hook}{suffix}({self}*, {', '.join(args)}) "
        f"(or **kwargs){hint}"
    )


def check_observe(method: Callable[..., Any], name: str) -> None:
    """Refuse an ``observe`` that cannot take one outcome.

    Raises:
        TypeError: saying observers need ``observe(outcome)``.
    """
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(None)
    except TypeError:
        raise TypeError(
            f"observer {name!r}: observe{sig} cannot take an outcome; observers need "
            f"observe(self, outcome)"
        ) from None
