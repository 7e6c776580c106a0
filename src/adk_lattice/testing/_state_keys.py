"""``undeclared_state_keys``: find string-literal state keys in source that nobody declared.

A mistyped state key (``user:isManager`` for ``user:is_manager``) reads as missing and
falls back to a default without an error: in a policy that default can be the permissive
branch. Scanning the source for literal keys turns that into a CI failure.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

#: Methods of ``state`` whose first argument is a key.
_KEY_METHODS = frozenset({"get", "setdefault", "pop", "__getitem__", "__setitem__", "__contains__"})


@dataclass(frozen=True, slots=True)
class StateKeyFinding:
    """One undeclared state key found in source.

    Attributes:
        path: the file.
        line, column: where the key literal is (1-based line, 0-based column).
        key: the undeclared key, or for ``object_as_key`` the StateKey's variable name.
        suggestion: the nearest declared key, or None when none is close.
        problem: ``undeclared`` (a literal key nobody declared) or ``object_as_key`` (a
            ``StateKey`` object used as the key itself, which is never the string key).
    """

    path: Path
    line: int
    column: int
    key: str
    suggestion: str | None
    problem: Literal["undeclared", "object_as_key"] = "undeclared"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.column + 1}"
        if self.problem == "object_as_key":
            return (
                f"{where}: StateKey {self.key} used as a state key; the key is its name: "
                f"use {self.key}.get(state) or state[{self.key}.name]"
            )
        hint = f" (did you mean {self.suggestion!r}?)" if self.suggestion else ""
        return f"{where}: undeclared state key {self.key!r}{hint}"


def _key_names(keys: Iterable[Any]) -> set[str]:
    names: set[str] = set()
    for key in keys:
        name = key if isinstance(key, str) else getattr(key, "name", None)
        if not isinstance(name, str):
            raise TypeError(
                f"declared keys must be strings or objects with a str .name, got {key!r}"
            )
        names.add(name)
    return names


def _is_state(node: ast.expr) -> bool:
    """``state``, ``ctx.state``, ``tool_context.session.state`` and the like."""
    return (isinstance(node, ast.Name) and node.id == "state") or (
        isinstance(node, ast.Attribute) and node.attr == "state"
    )


def _literal(node: ast.expr | None) -> ast.Constant | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node
    return None


def _key_exprs(tree: ast.AST) -> Iterator[ast.expr]:
    """Every expression used as a key of ``state`` in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_state(node.value):
            yield node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, method = node.func.value, node.func.attr
            if _is_state(owner) and method in _KEY_METHODS and node.args:
                yield node.args[0]
            elif _is_state(owner) and method == "update" and node.args:
                mapping = node.args[0]
                if isinstance(mapping, ast.Dict):
                    yield from (k for k in mapping.keys if k is not None)
        elif isinstance(node, ast.Compare) and _is_membership_in_state(node):
            yield node.left


def _is_membership_in_state(node: ast.Compare) -> bool:
    """``"k" in state`` or ``"k" not in ctx.state``."""
    single = len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
    return single and _is_state(node.comparators[0])


def _statekey_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node.func) == "StateKey" and node.args:
            yield node


def _statekey_names(tree: ast.AST) -> set[str]:
    """Names bound to a ``StateKey(...)``: ``IS_MANAGER = StateKey("user:is_manager", ...)``."""
    names: set[str] = set()
    value: ast.expr | None
    targets: list[ast.expr]
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            value, targets = node.value, node.targets
        elif isinstance(node, ast.AnnAssign):
            value, targets = node.value, [node.target]
        else:
            continue
        if isinstance(value, ast.Call) and _called_name(value.func) == "StateKey":
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


#: How alike two bare names must be (difflib ratio) for a suggestion.
_CUTOFF = 0.75
_PREFIXES = ("app:", "user:", "temp:")


def _split(key: str) -> tuple[str, str]:
    """Split a key into its scope prefix and its bare name in lower snake case.

    ``user:isManager`` gives ``("user:", "is_manager")``, so naming-style slips compare equal.
    """
    prefix = next((p for p in _PREFIXES if key.startswith(p)), "")
    bare = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key[len(prefix) :])
    return prefix, bare.lower().replace("-", "_")


def _suggest(key: str, declared: set[str]) -> str | None:
    """The declared key whose bare name is nearest, preferring the same scope prefix.

    Bare names are compared so a shared ``user:`` prefix does not make unrelated keys look
    alike, and a key that lost or changed its prefix still finds its declared form.
    """
    prefix, bare = _split(key)
    best: tuple[float, str] | None = None
    for name in sorted(declared):
        other_prefix, other_bare = _split(name)
        score = difflib.SequenceMatcher(None, bare, other_bare).ratio()
        score += 0.01 if other_prefix == prefix else 0.0
        if score >= _CUTOFF and (best is None or score > best[0]):
            best = (score, name)
    return best[1] if best else None


def _files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.py") if p.is_file())
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")


def undeclared_state_keys(
    paths: Iterable[str | Path], keys: Iterable[Any], *, ignore_prefixes: Iterable[str] = ()
) -> list[StateKeyFinding]:
    """Scan Python source for string-literal state keys that are not declared.

    Finds ``state["k"]`` (read, write, delete), ``state.get("k")``, ``state.setdefault``,
    ``state.pop``, ``state.update({"k": ...})``, ``"k" in state`` and ``StateKey("k", ...)``
    on any ``state`` name or ``.state`` attribute. Keys built at run time (f-strings,
    variables) are not literals and are not checked. Also reports a ``StateKey`` object
    used as the key itself (``state[IS_MANAGER]``): the session never holds that key, so
    the read always misses.

    Args:
        paths: files and directories (searched recursively for ``*.py``).
        keys: the declared keys: strings, or objects with a ``.name`` (e.g. ``StateKey``).
        ignore_prefixes: keys starting with any of these are not checked (e.g. ``temp:``
            for per-invocation scratch keys).

    Returns:
        The findings in file and line order, each with the nearest declared key.

    Raises:
        FileNotFoundError: when a path does not exist.
        SyntaxError: when a file does not parse (the message names the file).
        TypeError: when a declared key is neither a string nor has a string ``.name``.
    """
    declared = _key_names(keys)
    ignored = tuple(ignore_prefixes)
    trees = [
        (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in _files(paths)
    ]
    objects = set().union(*(_statekey_names(tree) for _, tree in trees))
    findings: list[StateKeyFinding] = []
    for path, tree in trees:
        literals = [_literal(call.args[0]) for call in _statekey_calls(tree)]
        for expr in _key_exprs(tree):
            literals.append(_literal(expr))
            name = _called_name(expr)  # a bare or dotted name, e.g. IS_MANAGER, keys.TENANT
            if name in objects:
                where = (expr.lineno, expr.col_offset)
                findings.append(StateKeyFinding(path, *where, str(name), None, "object_as_key"))
        for literal in filter(None, literals):
            key = str(literal.value)
            if key not in declared and not key.startswith(ignored):
                where = (literal.lineno, literal.col_offset)
                findings.append(StateKeyFinding(path, *where, key, _suggest(key, declared)))
    return sorted(findings, key=lambda f: (str(f.path), f.line, f.column))
