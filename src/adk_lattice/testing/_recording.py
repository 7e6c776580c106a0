"""``RecordingHandler``: a handler fake that records every hook call and answers on cue."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from .._hooks import HOOKS, HookName


@dataclass(frozen=True, slots=True)
class HookCall:
    """One call a :class:`RecordingHandler` received.

    Attributes:
        hook: the hook name (``before_tool``, ...).
        kwargs: the keyword arguments it was called with, as given (not copied).
    """

    hook: HookName
    kwargs: Mapping[str, Any]


def returns_in_turn(*values: Any) -> Callable[..., Any]:
    """A scripted answer giving ``values`` one per call, then None once they run out.

    Example::

        RecordingHandler(returns={"before_tool": returns_in_turn(None, {"cached": True})})
    """
    remaining = list(values)

    def answer(**_: Any) -> Any:
        return remaining.pop(0) if remaining else None

    return answer


def _answer(
    handler: RecordingHandler,
    hook: HookName,
    value: Any,
    error: BaseException | type[BaseException] | None,
    /,
    **kwargs: Any,
) -> Any:
    handler.calls.append(HookCall(hook, kwargs))
    if error is not None:
        raise error
    return value(**kwargs) if callable(value) else value


async def _answer_async(
    handler: RecordingHandler,
    hook: HookName,
    value: Any,
    error: BaseException | type[BaseException] | None,
    /,
    **kwargs: Any,
) -> Any:
    return _answer(handler, hook, value, error, **kwargs)


class RecordingHandler:
    """A handler implementing the chosen hooks that records each call and answers on cue.

    Register it in any tier (``Lattice(handlers=[rec])``) or call its methods directly.

    Args:
        hooks: the hooks to implement (default: every hook). A hook not listed is absent,
            so the lattice never calls it.
        returns: per hook, the value to return; a callable is called with the hook's
            keyword arguments and its result returned (see :func:`returns_in_turn`).
        raises: per hook, an exception (instance or class) to raise after recording.
        is_async: implement the hooks as coroutines instead of plain functions.
        name: the name the lattice reports it under.
        **options: handler options set as attributes (``agents``, ``tools``, ``on_error``,
            ``partial``, ``timeout``).

    Raises:
        ValueError: on an unknown hook name in ``hooks``, ``returns`` or ``raises``.
    """

    def __init__(
        self,
        hooks: Iterable[HookName] | None = None,
        *,
        returns: Mapping[HookName, Any] | None = None,
        raises: Mapping[HookName, BaseException | type[BaseException]] | None = None,
        is_async: bool = False,
        name: str = "RecordingHandler",
        **options: Any,
    ) -> None:
        chosen = tuple(HOOKS if hooks is None else hooks)
        returns = dict(returns or {})
        raises = dict(raises or {})
        unknown = sorted({*chosen, *returns, *raises} - set(HOOKS))
        if unknown:
            raise ValueError(f"unknown hook(s) {unknown}; expected names from {HOOKS}")
        missing = sorted({*returns, *raises} - set(chosen))
        if missing:
            raise ValueError(f"returns/raises given for hook(s) not implemented: {missing}")
        self.name = name
        self.calls: list[HookCall] = []
        for key, value in options.items():
            setattr(self, key, value)
        for hook in chosen:
            # A partial over module functions (not a closure) so a copied handler records
            # into its own ``calls``; inspect still sees the async ones as coroutines.
            answer = _answer_async if is_async else _answer
            setattr(self, hook, partial(answer, self, hook, returns.get(hook), raises.get(hook)))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        # Only reached for attributes that do not exist: a hook not chosen stays absent
        # (the lattice must not bind it), while type checkers accept calls to the chosen
        # hooks, which are set per instance.
        owner = self.__dict__.get("name", type(self).__name__)  # safe before __init__ ran
        raise AttributeError(f"RecordingHandler {owner!r} has no attribute {name!r}")

    def hooks_called(self) -> list[HookName]:
        """The hook names called, in order."""
        return [call.hook for call in self.calls]

    def calls_to(self, hook: HookName) -> list[Mapping[str, Any]]:
        """The keyword arguments of each call to ``hook``, in order."""
        return [call.kwargs for call in self.calls if call.hook == hook]

    def __repr__(self) -> str:
        return f"<RecordingHandler {self.name!r}: {len(self.calls)} call(s)>"
