"""Building what a config file names: stores, state keys, handlers, and the ``@`` references.

A handler argument may be a reference, a string starting with ``@``:

- ``"@stores.NAME"``: the shared store declared as ``[stores.NAME]``;
- ``"@state.NAME"``: the state key declared as ``[state.NAME]``;
- ``"@env.VAR"``: the value of an environment variable (for secrets);
- ``"@import:pkg.module:attr"``: a Python object (rules, functions, a declared StateKey).

``"@@..."`` stands for a literal string starting with ``@``. References resolve inside
lists and inline tables too.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._handlers import _OPTIONS, configure
from .._hooks import HOOKS
from .convert import Mismatch, convert, hints

_ENTRY_KEYS: Final = ("use", "args", *_OPTIONS)
_STATE_TYPES: Final = {"str": str, "int": int, "float": float, "bool": bool}
_STATE_KEYS: Final = ("key", "type", "default", "doc")
#: The shortest ``@env`` value kept out of findings (see :meth:`Finder.secret`).
_SHORTEST_SECRET: Final = 4
#: The store types a config may declare, and the class each builds.
STORE_TYPES: Final = {
    "memory": "adk_lattice.stores:MemoryStore",
    "sqlite": "adk_lattice.stores:SQLiteStore",
    "redis": "adk_lattice.stores:RedisStore",
}


class Finder:
    """Collects findings, each naming the file, the table and the key.

    Args:
        file: the config file, as the findings name it.
        base: the file's folder, from which its import paths also resolve.
    """

    def __init__(self, file: str, base: str | None = None) -> None:
        self.file = file
        self.base = base
        self.findings: list[str] = []
        #: ``@env`` values read so far -> the reference that names each (see :meth:`secret`).
        self._secrets: dict[str, str] = {}

    def secret(self, name: str, value: str) -> None:
        """Never print ``value`` (read from ``@env.NAME``): findings say ``@env.NAME``.

        A handler's refusal quotes what it was given (``not 'sk-live-...'``), and findings
        are printed by ``config check`` and logged by a refusing lattice. Values of fewer
        than four characters are too short to be secrets and too common to replace.
        """
        if len(value) >= _SHORTEST_SECRET:
            self._secrets[value] = f"@env.{name}"

    def import_object(self, reference: str) -> Any:
        """:func:`import_object` with the config file's folder on the import path."""
        return import_object(reference, base=self.base)

    def add(self, table: str, key: str, message: str) -> None:
        where = f"{table} {key}" if key else table
        for value, reference in sorted(self._secrets.items(), key=lambda s: -len(s[0])):
            for form in (value, repr(value)[1:-1]):  # as given, and as a repr quotes it
                message = message.replace(form, reference)
        self.findings.append(f"{self.file}: {where}: {message}")


def import_object(reference: str, *, base: str | None = None) -> Any:
    """Import ``pkg.module:attr`` (or ``pkg.module.attr``) and return the object.

    A config's imports resolve the same way wherever it is read (``config check``, ``adk
    api_server``, an app's code): from the process's import path plus the config file's
    own folder, never from the working folder. The folder is on the import path only
    while the config's own imports run, so a file beside the config can never answer a
    later import of the app (an optional dependency it probes for, say).

    Args:
        reference: the import path.
        base: the config file's folder (on ``sys.path`` for this import only).

    Raises:
        ValueError: with a readable message when it does not import or does not exist.
    """
    module_name, sep, attr_path = reference.partition(":")
    if not sep:
        module_name, _, attr_path = reference.rpartition(".")
    if not module_name or not attr_path:
        raise ValueError(f"expected an import path like 'pkg.module:Name', got {reference!r}")
    added = base if base is not None and base not in sys.path else None
    if added is not None:
        sys.path.append(added)  # after the app's own path: a file beside it cannot shadow it
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise ValueError(f"cannot import {module_name!r} ({type(exc).__name__}: {exc})") from None
    finally:
        if added is not None and added in sys.path:
            sys.path.remove(added)
            importlib.invalidate_caches()
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            near = difflib.get_close_matches(part, [n for n in dir(obj) if n[:1] != "_"], 1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(f"{module_name!r} has no attribute {attr_path!r}{hint}")
        obj = getattr(obj, part)
    return obj


def _accepts(factory: Callable[..., Any]) -> tuple[set[str], bool]:
    """The keyword names a factory takes, and whether it takes any (``**kwargs``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return set(), True
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return names, any(p.kind is p.VAR_KEYWORD for p in params)


def _call(
    find: Finder, table: str, factory: Callable[..., Any], args: Mapping[str, Any], what: str
) -> Any:
    """Call ``factory(**args)``, first checking every key against its signature."""
    names, open_ended = _accepts(factory)
    unknown = [k for k in args if k not in names] if not open_ended else []
    for key in unknown:
        find.add(
            table,
            f"args.{key}",
            f"{what} takes no argument {key!r}; it takes "
            f"{', '.join(sorted(n for n in names if n != 'self')) or 'none'}",
        )
    if unknown:
        return None
    annotations = hints(factory)
    typed: dict[str, Any] = {}
    for key, value in args.items():
        try:
            typed[key] = convert(value, annotations.get(key, Any), base=find.base)
        except Mismatch as exc:
            find.add(table, f"args.{key}{exc.where}", str(exc))
    if len(typed) < len(args):
        return None
    try:
        return factory(**typed)
    except Exception as exc:
        find.add(table, "args", f"{what} refused them ({type(exc).__name__}: {exc})")
        return None


def resolve(find: Finder, table: str, key: str, value: Any, refs: Mapping[str, Any]) -> Any:
    """Replace ``@`` references in an argument value (recursively)."""
    if isinstance(value, list):
        return [resolve(find, table, key, v, refs) for v in value]
    if isinstance(value, dict):
        return {k: resolve(find, table, f"{key}.{k}", v, refs) for k, v in value.items()}
    if not isinstance(value, str) or not value.startswith("@"):
        return value
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@import:"):
        try:
            return find.import_object(value[len("@import:") :])
        except ValueError as exc:
            find.add(table, key, str(exc))
            return None
    kind, _, name = value[1:].partition(".")
    if kind == "env":
        if name not in os.environ:
            find.add(table, key, f"environment variable {name!r} is not set")
            return None
        find.secret(name, os.environ[name])
        return os.environ[name]
    if kind in ("stores", "state"):
        found = refs[kind].get(name)
        if found is None:
            declared = ", ".join(refs[kind]) or "none"
            find.add(table, key, f"{value!r} names no [{kind}.{name}] table (declared: {declared})")
        return found
    find.add(
        table,
        key,
        f"unknown reference {value!r}; expected '@stores.NAME', '@state.NAME', '@env.VAR' "
        "or '@import:pkg.module:attr' (write '@@' for a literal '@')",
    )
    return None


def build_store(find: Finder, name: str, spec: Mapping[str, Any]) -> Any:
    """Build one ``[stores.NAME]`` table; the URL of a Redis store comes from ``url_env``."""
    table = f"[stores.{name}]"
    kind = spec.get("type")
    if kind not in STORE_TYPES:
        find.add(table, "type", f"expected one of {', '.join(STORE_TYPES)}, got {kind!r}")
        return None
    args = {k: v for k, v in spec.items() if k != "type"}
    if kind == "redis":
        if "url" in args:
            find.add(
                table,
                "url",
                "a Redis URL may hold a password: put it in an environment "
                "variable and name that variable with url_env",
            )
            return None
        env = args.pop("url_env", None)
        if not isinstance(env, str) or not env:
            find.add(
                table,
                "url_env",
                "expected the name of the environment variable holding the Redis URL",
            )
            return None
        if not os.environ.get(env):
            find.add(table, "url_env", f"environment variable {env!r} is not set")
            return None
        args["url"] = os.environ[env]
        find.secret(env, args["url"])
    args.setdefault("name", name)
    try:
        factory = find.import_object(STORE_TYPES[kind])
    except ValueError as exc:
        find.add(table, "type", str(exc))
        return None
    if kind == "redis":
        try:
            importlib.import_module("redis")
        except ImportError:
            find.add(
                table,
                "type",
                "a redis store needs the redis package: pip install 'adk-lattice[redis]'",
            )
            return None
    return _call(find, table, factory, args, f"{kind} store")


def build_state(find: Finder, name: str, spec: Mapping[str, Any]) -> Any:
    """Build one ``[state.NAME]`` table into a :class:`~adk_lattice.state.StateKey`."""
    from ..state import StateKey

    table = f"[state.{name}]"
    ok = True
    for key in spec:
        if key not in _STATE_KEYS:
            find.add(table, key, f"unknown key; expected one of {', '.join(_STATE_KEYS)}")
            ok = False
    key_name, type_name = spec.get("key"), spec.get("type", "str")
    if not isinstance(key_name, str) or not key_name:
        find.add(table, "key", "expected the state key, e.g. 'user:tenant_id'")
        ok = False
    if type_name not in _STATE_TYPES:
        find.add(table, "type", f"expected one of {', '.join(_STATE_TYPES)}, got {type_name!r}")
        ok = False
    doc = spec.get("doc", "")
    if not isinstance(doc, str):
        find.add(table, "doc", "expected a string")
        ok = False
    if not ok:
        return None
    kind = _STATE_TYPES[type_name]
    default = spec.get("default", kind())
    try:
        return StateKey(str(key_name), kind, default, doc)
    except (TypeError, ValueError) as exc:
        find.add(table, "key", str(exc))
        return None


def build_entry(
    find: Finder, tier: str, index: int, spec: Mapping[str, Any], refs: Mapping[str, Any]
) -> Any:
    """Build one ``[[tier]]`` entry: import ``use``, call it with ``args``, set the options."""
    table = f"[[{tier}]] #{index}"
    for key in spec:
        if key not in _ENTRY_KEYS:
            find.add(table, key, f"unknown key; expected one of {', '.join(_ENTRY_KEYS)}")
            return None
    use = spec.get("use")
    if not isinstance(use, str) or not use:
        find.add(
            table,
            "use",
            "expected the import path of a handler, e.g. 'adk_lattice.policy:InjectionGuard'",
        )
        return None
    table = f"[[{tier}]] #{index} ({use})"
    raw_args = spec.get("args", {})
    if not isinstance(raw_args, dict):
        find.add(table, "args", "expected a table of keyword arguments")
        return None
    try:
        target = find.import_object(use)
    except ValueError as exc:
        find.add(table, "use", str(exc))
        return None
    before = len(find.findings)
    args = {k: resolve(find, table, f"args.{k}", v, refs) for k, v in raw_args.items()}
    if len(find.findings) > before:
        return None
    if _is_handler(target):
        if args:
            find.add(table, "args", f"{use} is a handler object already: it takes no args")
            return None
        obj = target
    elif callable(target):
        obj = _call(find, table, target, args, use)
        if obj is None:
            return None
    else:
        find.add(
            table,
            "use",
            f"expected a handler class, factory or object, got {type(target).__name__}",
        )
        return None
    options = {k: spec[k] for k in _OPTIONS if k in spec}
    try:
        configure(obj, **options)
        from .._handlers import bind

        bind(obj, tier)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        find.add(table, "", str(exc))
        return None
    return obj


def _is_handler(obj: Any) -> bool:
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return False
    return any(callable(getattr(obj, h, None)) for h in (*HOOKS, "observe"))
