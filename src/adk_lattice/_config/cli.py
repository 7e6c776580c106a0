"""``python -m adk_lattice``: CI checks (``lint tools``, ``lint state``, ``config check``).

Exit status: 0 when clean, 1 with findings, 2 on a usage error (bad arguments, an
object reference that does not import, a path that does not exist or does not parse).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

CLEAN, FINDINGS, USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with what the command was asked to do (exit status 2)."""


def load(reference: str) -> Any:
    """Import ``pkg.module:attr.path`` and return the object.

    The current directory is importable, so a project's own packages resolve when the
    command runs from its root.

    Raises:
        UsageError: when the reference is malformed, the module does not import or the
            attribute does not exist.
    """
    module_name, sep, attr_path = reference.partition(":")
    if not sep or not module_name or not attr_path:
        raise UsageError(f"{reference!r} is not of the form pkg.module:attribute")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(f"cannot import {module_name!r}: {exc}") from exc
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{reference!r}: {part!r} not found") from None
    return obj


def _lint_tools(args: argparse.Namespace, out: TextIO) -> int:
    from google.adk.agents.base_agent import BaseAgent

    from ..testing import DEFAULT_BANS, Ban, tool_findings

    bans = tuple(load(args.bans)) if args.bans else DEFAULT_BANS
    if not all(isinstance(ban, Ban) for ban in bans):
        raise UsageError(f"{args.bans!r} must be a sequence of adk_lattice.testing.Ban")
    findings: list[str] = []
    for reference in args.agents:
        target = load(reference)
        if callable(target) and not isinstance(target, BaseAgent):
            target = _build(reference, target)
        root = getattr(target, "root_agent", target)  # an App or an agent
        if not isinstance(root, BaseAgent):
            raise UsageError(
                f"{reference!r} is a {type(target).__name__}, not an agent, an App or a "
                "function returning one"
            )
        findings += tool_findings(root, bans=bans, allow_unchecked=set(args.allow_unchecked))
    for finding in findings:
        print(finding, file=out)
    return _summary(out, "tools", len(findings))


def _build(reference: str, factory: Any) -> Any:
    """Call a factory of the app or agent (apps often build their tree in a function)."""
    try:
        inspect.signature(factory).bind()
    except TypeError:
        raise UsageError(
            f"{reference!r} needs arguments; point at a function without any"
        ) from None
    except ValueError:
        pass  # no signature to inspect (a builtin): just call it
    try:
        return factory()
    except Exception as exc:
        raise UsageError(f"{reference!r} raised {exc!r}") from exc


def _lint_state(args: argparse.Namespace, out: TextIO) -> int:
    from ..testing import undeclared_state_keys

    keys: list[Any] = []
    for reference in args.keys:
        loaded = load(reference)
        if isinstance(loaded, str | bytes) or not isinstance(loaded, Iterable):
            raise UsageError(
                f"{reference!r} is a {type(loaded).__name__}, not a collection of keys"
            )
        keys.extend(loaded)
    try:
        findings = undeclared_state_keys(args.paths, keys, ignore_prefixes=args.ignore_prefix)
    except (FileNotFoundError, SyntaxError, TypeError) as exc:
        raise UsageError(str(exc)) from exc
    for finding in findings:
        print(finding, file=out)
    return _summary(out, "state", len(findings))


def _config_check(args: argparse.Namespace, out: TextIO) -> int:
    from .read import ConfigError, read_config

    if not os.path.isfile(args.file):
        raise UsageError(f"{args.file}: no such file (expected a TOML lattice config)")
    # The check imports exactly what the server would: ``python -m`` put the working
    # folder first on the path, which ``adk api_server`` does not, so it is taken off.
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    try:
        config = read_config(args.file)
    except ConfigError as exc:
        for finding in exc.findings:
            print(finding, file=out)
        return _summary(out, "config", len(exc.findings), verb="check")
    finally:
        sys.path[:] = saved + [p for p in sys.path if p not in saved]
    counts = ", ".join(f"{len(v)} {k}" for k, v in config.tiers.items()) or "no tiers"
    print(f"{args.file}: {counts}; {len(config.stores)} store(s)", file=out)
    return _summary(out, "config", 0, verb="check")


def _summary(out: TextIO, what: str, count: int, verb: str = "lint") -> int:
    label = f"{verb} {what}" if verb == "lint" else f"{what} {verb}"
    if count:
        print(f"{label}: {count} finding(s)", file=out)
        return FINDINGS
    print(f"{label}: clean", file=out)
    return CLEAN


def parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    # The module docstring is reStructuredText; the terminal shows it without the markup.
    description = (__doc__ or "").replace("``", "")
    top = argparse.ArgumentParser(prog="python -m adk_lattice", description=description)
    commands = top.add_subparsers(dest="command", required=True)
    lint = commands.add_parser("lint", help="check model-facing tool text or state keys")
    checks = lint.add_subparsers(dest="check", required=True)

    tools = checks.add_parser("tools", help="check every tool an agent tree shows a model")
    tools.add_argument(
        "agents",
        nargs="+",
        metavar="pkg.module:root_agent",
        help="an agent, an App, or a function without arguments returning one",
    )
    tools.add_argument("--bans", metavar="pkg.module:BANS", help="replace the default bans")
    tools.add_argument(
        "--allow-unchecked",
        action="append",
        default=[],
        metavar="NAME",
        help="a tool or toolset that may go unchecked (repeatable)",
    )
    tools.set_defaults(run=_lint_tools)

    state = checks.add_parser("state", help="find literal state keys that are not declared")
    state.add_argument("paths", nargs="+", metavar="PATH")
    state.add_argument(
        "--keys",
        required=True,
        action="append",
        metavar="pkg.module:KEYS",
        help="the declared keys: strings or objects with .name, e.g. a StateKey registry "
        "(repeatable)",
    )
    state.add_argument(
        "--ignore-prefix",
        action="append",
        default=[],
        metavar="PREFIX",
        help="do not check keys starting with PREFIX, e.g. temp: (repeatable)",
    )
    state.set_defaults(run=_lint_state)

    config = commands.add_parser("config", help="validate a lattice config file")
    config_checks = config.add_subparsers(dest="check", required=True)
    check = config_checks.add_parser(
        "check", help="build every store and handler a config file names, without running"
    )
    check.add_argument("file", metavar="FILE", help="the TOML config file")
    check.set_defaults(run=_config_check)
    return top


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command; returns the exit status."""
    out = out or sys.stdout
    args = parser().parse_args(argv)
    try:
        status: int = args.run(args, out)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE
    return status
