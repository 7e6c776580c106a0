"""Typed conversion: a config file's table becomes the dataclass a parameter's annotation names.

A handler argument annotated ``Mapping[str, Consequential]`` takes ``{ send = { args = {
to = "email" } } }``; ``Sequence[Budget]`` takes an array of tables; ``Approval | None``
takes one table. Where the annotation allows several dataclasses (``Rewrite = Clamp |
Round | InjectState``), the table says which with ``use = "Clamp"``. The fields come from
the dataclass itself, so a field added to a class is writable in a file without code here.
A relative path given where the annotation takes an ``os.PathLike`` (an audit file, a SQLite
database) resolves against the config file's folder, not the working folder.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import difflib
import inspect
import os
import pathlib
import types
import typing
from typing import Any, Union, get_args, get_origin

_MAPPINGS = (abc.Mapping, abc.MutableMapping, dict)
_SEQUENCES = (abc.Sequence, abc.Collection, abc.Iterable, list, set, frozenset, abc.Set)


class Mismatch(ValueError):
    """A table that does not fit its annotation; ``where`` is the path below the argument."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(message)


def hints(target: Any) -> dict[str, Any]:
    """The evaluated annotations of a callable or dataclass (the unresolvable ones left out)."""
    func = target.__init__ if inspect.isclass(target) and not _is_dataclass(target) else target
    try:
        return typing.get_type_hints(func)
    except Exception:  # an annotation only a type checker can read: take the others
        found: dict[str, Any] = {}
        scope = getattr(inspect.unwrap(func), "__globals__", {})
        for name, ann in getattr(func, "__annotations__", {}).items():
            try:
                found[name] = eval(ann, scope) if isinstance(ann, str) else ann
            except Exception:
                continue
        return found


def _is_dataclass(ann: Any) -> bool:
    return inspect.isclass(ann) and dataclasses.is_dataclass(ann)


def _is_path(ann: Any) -> bool:
    target = get_origin(ann) or ann
    return inspect.isclass(target) and issubclass(target, os.PathLike | pathlib.PurePath)


def _path(value: str, base: str | None) -> str:
    """A relative path written in a config file, from the file's folder."""
    if base is None or os.path.isabs(value):
        return value
    return os.path.join(base, value)


def convert(value: Any, ann: Any, where: str = "", base: str | None = None) -> Any:
    """``value`` as ``ann`` asks: tables into dataclasses, arrays into tuples, recursively.

    Args:
        value: the value as the file wrote it.
        ann: the annotation of the parameter or field it is for.
        where: its path below the argument, for messages.
        base: the config file's folder: a relative path given for an ``os.PathLike``
            resolves from it.

    Raises:
        Mismatch: on a table with an unknown field, a missing or wrong ``use``, or one its
            dataclass refuses.
    """
    origin = get_origin(ann)
    if origin in (Union, types.UnionType):
        return _union(value, get_args(ann), where, base)
    if isinstance(value, str) and _is_path(ann):
        return _path(value, base)
    if _is_dataclass(ann) and isinstance(value, dict):
        return build(ann, value, where, base)
    args = get_args(ann)
    if origin in _MAPPINGS and isinstance(value, dict) and len(args) == 2:
        return {k: convert(v, args[1], f"{where}.{k}", base) for k, v in value.items()}
    if origin in _SEQUENCES and isinstance(value, list) and args:
        return [convert(v, args[0], f"{where}[{i}]", base) for i, v in enumerate(value)]
    if origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(v, args[0], f"{where}[{i}]", base) for i, v in enumerate(value))
        return tuple(value)
    return value


def _union(value: Any, members: tuple[Any, ...], where: str, base: str | None) -> Any:
    classes = [m for m in members if _is_dataclass(m)]
    if isinstance(value, dict) and classes:
        names = [c.__name__ for c in classes]
        use = value.get("use")
        if use is None and len(classes) == 1:
            return build(classes[0], value, where, base)
        if use is None:
            raise Mismatch(where, f'a table here is one of {", ".join(names)}: add use = "..."')
        chosen = [c for c in classes if c.__name__ == use]
        if not chosen:
            near = difflib.get_close_matches(str(use), names, 1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise Mismatch(f"{where}.use", f"expected one of {', '.join(names)}, got {use!r}{hint}")
        return build(chosen[0], {k: v for k, v in value.items() if k != "use"}, where, base)
    if isinstance(value, str) and any(_is_path(m) for m in members):
        return _path(value, base)
    for member in members:
        origin = get_origin(member)
        fits = (isinstance(value, dict) and origin in _MAPPINGS) or (
            isinstance(value, list) and (origin in _SEQUENCES or origin is tuple)
        )
        if fits:
            return convert(value, member, where, base)
    return value


def build(cls: Any, table: dict[str, Any], where: str, base: str | None = None) -> Any:
    """Build dataclass ``cls`` from ``table``, converting each field by its annotation.

    Raises:
        Mismatch: on an unknown field (with the nearest real one), or when ``cls`` refuses.
    """
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    for key in table:
        if key not in fields:
            near = difflib.get_close_matches(key, fields, 1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            if isinstance(table[key], dict) and not near:
                # TOML reads an unquoted ``a.b = {...}`` as nested tables ``a -> b``.
                dotted = f"{where.rsplit('.', 1)[-1]}.{key}"
                hint = (
                    f" (a name with dots was read as nested tables; quote it in TOML: "
                    f'"{dotted}" = {{ ... }})'
                )
            raise Mismatch(
                f"{where}.{key}",
                f"{cls.__name__} has no field {key!r}{hint}; it has {', '.join(fields)}",
            )
    annotations = hints(cls)
    kwargs = {
        k: convert(v, annotations.get(k, Any), f"{where}.{k}", base) for k, v in table.items()
    }
    try:
        return cls(**kwargs)
    except Exception as exc:
        raise Mismatch(where, f"{cls.__name__} refused it ({type(exc).__name__}: {exc})") from None
