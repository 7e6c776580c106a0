"""Declarations for :class:`ProvenanceGuard`: consequential tools and trusted tools."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .taint import parse_paths, scalars, select
from .values import KINDS, VALUE_KINDS, is_value


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
    """A tool whose call has an effect, and the arguments that direct it.

    Args:
        args: ``{argument name: kind}``; kinds are ``email``, ``iban``, ``wallet`` (a
            cryptocurrency address), ``account`` (a domestic bank account: a sort code,
            routing number, BSB or IFSC with its account number), ``url``, ``number``,
            ``id``, ``phone`` and ``text``. Each must be grounded in trusted text when
            untrusted content is in context.
        always_confirm: with untrusted content in context, every call needs a person, even
            with grounded arguments (``args`` may then be empty).
        hint: what the person is asked (default: names the tool and the arguments).
        content: the free-text arguments scanned for destinations (email addresses, URLs,
            IBANs, wallets, domestic accounts, phone numbers) while untrusted content is in
            context, each of which must be grounded as a sensitive argument is:
            ``"scan"`` (every string argument not in ``args``, the default), ``"off"``, or
            a list of argument names.

    Raises:
        ValueError: on an unknown kind, no argument without ``always_confirm``, or a bad
            ``content``.
    """

    args: Mapping[str, str] = field(default_factory=dict)
    always_confirm: bool = False
    hint: str | None = None
    content: str | Sequence[str] = "scan"

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", check_kinds(self.args, "Consequential"))
        if not self.args and not self.always_confirm:
            raise ValueError(
                "Consequential needs at least one sensitive argument, e.g. "
                "Consequential(args={'recipient': 'iban'}), or always_confirm=True"
            )
        object.__setattr__(self, "content", _content(self.content, self.args))

    def scanned(self, tool_args: Mapping[str, Any]) -> list[str]:
        """The arguments of a call whose text is scanned for destinations, in call order."""
        if self.content == "off":
            return []
        if self.content == "scan":
            return [a for a in tool_args if a not in self.args]
        return [a for a in tool_args if a in self.content]


def _content(content: Any, args: Mapping[str, str]) -> str | tuple[str, ...]:
    """``"scan"``, ``"off"`` or a sorted tuple of argument names, validated."""
    if content in ("scan", "off"):
        return str(content)
    fix = "content must be 'scan', 'off' or a non-empty list of argument names, e.g. ['body']"
    if isinstance(content, str) or not isinstance(content, Sequence | frozenset | set):
        raise ValueError(f"Consequential: {fix}, not {content!r}")
    names = list(content)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"Consequential: {fix}, not {content!r}")
    both = sorted(set(names) & set(args))
    if both:
        raise ValueError(
            f"Consequential: {', '.join(both)} in both args and content; a sensitive "
            f"argument is checked whole, so list it in one of them"
        )
    return tuple(sorted(set(names)))


#: One trusted field: its path (empty: the whole output) and the kind it vouches for
#: (None: a whole value of any kind; ``text``: trusted text, values inside it included).
TrustedField = tuple[tuple[str, ...], str | None]


@dataclass(frozen=True, slots=True)
class Trust:
    """What the app declares it controls in one tool's output.

    Attributes:
        whole: the whole output is the app's: it taints only where a leaf is free text
            that its declaration does not call ``text``. A tool trusted for some fields
            only carries outside text in the others, and taints.
        fields: the trusted fields with their kinds.
    """

    whole: bool
    fields: tuple[TrustedField, ...]


_FORMS = (
    "True (whole values of any kind in the whole output), a kind such as 'id' or 'text' "
    "(the whole output), a non-empty list of dotted field paths such as "
    "['messages.*.sender'], or a table of such paths to kinds, e.g. {'contacts.*.email': "
    "'email'}"
)


def _path(tool: str, path: Any, trust: Any) -> tuple[str, ...]:
    if not isinstance(path, str) or not path or "" in path.split("."):
        raise ValueError(f"trusted_tools[{tool!r}] must be {_FORMS}, not {trust!r}")
    return parse_paths([path])[0]


def _kind(tool: str, where: str, kind: Any) -> str:
    if kind not in KINDS:
        raise ValueError(
            f"trusted_tools[{tool!r}]{where}: unknown kind {kind!r}; "
            f"valid kinds: {', '.join(sorted(KINDS))}"
        )
    return str(kind)


def trust_table(table: Mapping[str, Any]) -> dict[str, Trust]:
    """Validate ``trusted_tools`` and parse the field paths and kinds.

    Raises:
        ValueError: on a form that is none of the four, a bad path or an unknown kind.
    """
    if not isinstance(table, Mapping):
        raise ValueError("trusted_tools must map tool names to True or a list of field paths")
    out: dict[str, Trust] = {}
    for tool, trust in table.items():
        if not isinstance(tool, str) or not tool:
            raise ValueError(f"trusted_tools: tool names must be strings, got {tool!r}")
        if trust is True:
            out[tool] = Trust(True, (((), None),))
        elif trust is False:
            out[tool] = Trust(False, ())
        elif isinstance(trust, str) and trust in KINDS:
            out[tool] = Trust(True, (((), trust),))
        elif isinstance(trust, Mapping) and trust:
            out[tool] = Trust(
                False,
                tuple(
                    (_path(tool, p, trust), _kind(tool, f"[{p!r}]", k)) for p, k in trust.items()
                ),
            )
        elif isinstance(trust, Sequence) and not isinstance(trust, str) and trust:
            out[tool] = Trust(False, tuple((_path(tool, p, trust), None) for p in trust))
        else:
            raise ValueError(f"trusted_tools[{tool!r}] must be {_FORMS}, not {trust!r}")
    return out


def typed_leaves(response: Any, trust: Trust) -> Iterator[tuple[str, str | None]]:
    """``(leaf, kind)`` for every string or number leaf of a trusted tool's declared fields,
    but the entries of a :func:`mixed` list under a field declared for any kind."""
    for path, kind in trust.fields:
        for found in select(response, _scope(path)):
            for leaf in scalars(found, skip=None if kind is not None else _mixed_entries):
                yield leaf, kind


def free_text(response: Any, trust: Trust) -> bool:
    """Whether a wholly trusted output holds a leaf (or a mapping key) that is free text,
    not one value of the kind its declaration vouches for: outside text, which taints.

    Under a field declared for any kind, a :func:`mixed` list is free text too.
    """
    for path, kind in trust.fields:
        if kind == "text":
            continue
        for found in select(response, path):
            for leaf, key in _strings(found):
                if leaf is None or not is_value(leaf, None if key else kind):
                    return True
        if kind is None and any(
            True for found in select(response, _scope(path)) for _ in _mixed_lists(found)
        ):
            return True
    return False


def _scope(path: tuple[str, ...]) -> tuple[str, ...]:
    """The path without its trailing ``*``: the list (or mapping) whose items it selects,
    which holds the same leaves, so a list's entries are judged together."""
    while path and path[-1] == "*":
        path = path[:-1]
    return path


def mixed(entries: Sequence[str]) -> bool:
    """Whether two or more entries of one list share no value kind.

    A list a field declares trusted holds values of one kind (participants' addresses,
    file ids, channel names). An outsider who writes several entries (an invitation's
    participants, a synced list) can split a request over short entries, each one value
    of some kind, with the value they want among them ("Note for the assistant:", "please
    pay", an IBAN). No kind holds every entry of such a list, so it is read as text. A
    field declared for one kind checks each entry against that kind instead.
    """
    if len(entries) < 2:
        return False
    shared = set(VALUE_KINDS)
    for entry in entries:
        shared &= {k for k in shared if is_value(entry, k)}
        if not shared:
            return True
    return False


def _mixed_lists(value: Any, depth: int = 0) -> Iterator[Any]:
    """The lists within ``value`` (itself included) whose string entries are :func:`mixed`."""
    if depth >= 20:
        return
    if isinstance(value, list | tuple):
        if mixed([v for v in value if isinstance(v, str)]):
            yield value
        for item in value:
            yield from _mixed_lists(item, depth + 1)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _mixed_lists(item, depth + 1)


def _mixed_entries(value: Sequence[Any]) -> bool:
    return mixed([v for v in value if isinstance(v, str)])


def _strings(value: Any, depth: int = 0) -> Iterator[tuple[str | None, bool]]:
    """``(text, is a key)`` for the string leaves and mapping keys of a structure; a key is
    structure, read as a value of any kind (numbers carry no text); None past 20 levels."""
    if isinstance(value, str):
        yield value, False
    elif depth >= 20 and isinstance(value, Mapping | list | tuple):
        yield None, False
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, True
            yield from _strings(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, depth + 1)
