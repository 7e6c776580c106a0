"""Declarations for :class:`ProvenanceGuard`: consequential tools and trusted tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .taint import parse_paths
from .values import KINDS


def check_kinds(args: Mapping[str, str], where: str) -> dict[str, str]:
    """Validate a ``{argument: kind}`` table.

    Raises:
        ValueError: on a non-string argument name or an unknown kind.
    """
    if not isinstance(args, Mapping):
        raise ValueError(f"{where}: args must map argument names to kinds, e.g. {{'to': 'email'}}")
    for arg, kind in args.items():
        if not isinstance(arg, str) or not arg:
            raise ValueError(f"{where}: argument names must be non-empty strings, got {arg!r}")
        if kind not in KINDS:
            raise ValueError(
                f"{where}: unknown kind {kind!r} for argument {arg!r}; "
                f"valid kinds: {', '.join(sorted(KINDS))}"
            )
    return dict(args)


@dataclass(frozen=True, slots=True)
class Consequential:
    """A tool whose call has an effect, and the arguments that steer it.

    Args:
        args: ``{argument name: kind}``; kinds are ``email``, ``iban``, ``url``, ``number``,
            ``id``, ``phone`` and ``text``. Each must be grounded in trusted text when
            untrusted content is in context.
        always_confirm: with untrusted content in context, every call needs a person, even
            with grounded arguments (``args`` may then be empty).
        hint: what the person is asked (default: names the tool and the arguments).

    Raises:
        ValueError: on an unknown kind, or no argument without ``always_confirm``.
    """

    args: Mapping[str, str] = field(default_factory=dict)
    always_confirm: bool = False
    hint: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", check_kinds(self.args, "Consequential"))
        if not self.args and not self.always_confirm:
            raise ValueError(
                "Consequential needs at least one sensitive argument, e.g. "
                "Consequential(args={'recipient': 'iban'}), or always_confirm=True"
            )


def trust_table(table: Mapping[str, Any]) -> dict[str, bool | tuple[tuple[str, ...], ...]]:
    """Validate ``trusted_tools`` and parse the field paths."""
    if not isinstance(table, Mapping):
        raise ValueError("trusted_tools must map tool names to True or a list of field paths")
    out: dict[str, bool | tuple[tuple[str, ...], ...]] = {}
    for tool, trust in table.items():
        if not isinstance(tool, str) or not tool:
            raise ValueError(f"trusted_tools: tool names must be strings, got {tool!r}")
        if isinstance(trust, bool):
            out[tool] = trust
        elif (
            isinstance(trust, Sequence)
            and not isinstance(trust, str)
            and trust
            and all(isinstance(p, str) and p and "" not in p.split(".") for p in trust)
        ):
            out[tool] = parse_paths(trust)
        else:
            raise ValueError(
                f"trusted_tools[{tool!r}] must be True (the whole output) or a non-empty list "
                f"of dotted field paths such as ['messages.*.sender'], not {trust!r}"
            )
    return out
