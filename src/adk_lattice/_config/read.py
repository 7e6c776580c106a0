"""A lattice described in a TOML file: tiers, handlers by import path, shared stores, state keys.

``Lattice.from_config(path)`` builds it; ``Lattice(name=...)`` reads the file named by
``ADK_LATTICE_CONFIG`` when no tier is passed in code (what ``adk web --extra_plugins
adk_lattice.Lattice`` builds); ``python -m adk_lattice config check FILE`` validates it.
Every problem is reported with the file, the table and the key, and what was expected; all
problems of a file are reported at once. The format is documented in ``docs/config.md``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .build import Finder, build_entry, build_state, build_store

#: The environment variable ``Lattice(name=...)`` reads a config file path from.
CONFIG_ENV: Final = "ADK_LATTICE_CONFIG"
#: The tiers a file may list, as arrays of tables (``[[policy]]``, ...).
TIER_TABLES: Final = ("policy", "cache", "handlers", "telemetry")
_TOP: Final = (*TIER_TABLES, "lattice", "stores", "state", "tracing")
_LATTICE_KEYS: Final = {
    "name": "a string",
    "strict": "true or false",
    "timeout": "a positive number of seconds",
    "max_invocations": "a positive integer",
    "dynamic_tools": "a list of tool names",
}
_TRACING_KEYS: Final = {
    "exporter": "one of 'console', 'otlp', 'otlp_http', 'otlp_grpc', 'none'",
    "service_name": "a string",
    "logs": "true, false or an exporter name (audit records as OpenTelemetry logs)",
}


class ConfigError(ValueError):
    """A configuration file that cannot be used; ``findings`` lists every problem.

    Each finding names the file, the table and the key, and says what was expected.
    """

    def __init__(self, findings: list[str]) -> None:
        self.findings = list(findings)
        super().__init__("\n".join(self.findings))


@dataclass(slots=True)
class LatticeConfig:
    """What a configuration file builds: keyword arguments for ``Lattice`` and its stores.

    Attributes:
        path: the file it was read from.
        tiers: ``policy``, ``cache``, ``handlers`` and (when the file lists it)
            ``telemetry``: the built handler objects, in file order.
        options: ``strict``, ``timeout``, ``max_invocations``, ``dynamic_tools`` and
            ``name`` when given.
        stores: the shared stores by name (the lattice closes them at ``close()``).
        state: the declared state keys by name.
        tracing: the ``[tracing]`` table (``exporter``, ``service_name``), or None.
    """

    path: Path
    tiers: dict[str, list[Any]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    stores: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    tracing: dict[str, Any] | None = None

    def lattice_kwargs(self) -> dict[str, Any]:
        """The keyword arguments for ``Lattice`` (tiers and options, without ``name``)."""
        kwargs: dict[str, Any] = {k: v for k, v in self.options.items() if k != "name"}
        for tier in TIER_TABLES:
            if tier in self.tiers:
                kwargs[tier] = self.tiers[tier]
        return kwargs


def read_config(path: str | os.PathLike[str]) -> LatticeConfig:
    """Read, validate and build a configuration file (without starting tracing).

    Args:
        path: the TOML file.

    Returns:
        The built :class:`LatticeConfig`.

    Raises:
        ConfigError: listing every problem found, each naming the file, table and key.
    """
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError([f"{file}: no such file (expected a TOML lattice config)"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{file}: cannot read it ({type(exc).__name__}: {exc})"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{file}: not valid TOML: {exc}"]) from None
    except RecursionError:  # the parser recurses per level: a file can nest past the limit
        raise ConfigError([f"{file}: arrays or tables nested too deeply to read"]) from None
    find = Finder(str(file), base=str(file.resolve().parent))
    config = LatticeConfig(path=file)
    for key in data:
        if key not in _TOP:
            find.add("(top level)", key, f"unknown table; expected one of {', '.join(_TOP)}")
    config.options = _flat(find, data, "lattice", _LATTICE_KEYS)
    config.tracing = _flat(find, data, "tracing", _TRACING_KEYS) if "tracing" in data else None
    config.stores = _named(find, data, "stores", build_store)
    config.state = _named(find, data, "state", build_state)
    refs = {"stores": config.stores, "state": config.state}
    for tier in TIER_TABLES:
        if tier not in data:
            continue
        entries = data[tier]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            find.add(f"[[{tier}]]", "", f"expected an array of tables ([[{tier}]] ...)")
            continue
        built = [build_entry(find, tier, i + 1, e, refs) for i, e in enumerate(entries)]
        config.tiers[tier] = [b for b in built if b is not None]
    if find.findings:
        raise ConfigError(find.findings)
    return config


def _flat(
    find: Finder, data: Mapping[str, Any], table: str, keys: Mapping[str, str]
) -> dict[str, Any]:
    section = data.get(table, {})
    if not isinstance(section, dict):
        find.add(f"[{table}]", "", "expected a table")
        return {}
    out: dict[str, Any] = {}
    for key, value in section.items():
        expected = keys.get(key)
        if expected is None:
            find.add(f"[{table}]", key, f"unknown key; expected one of {', '.join(keys)}")
        elif not _fits(key, value, table):
            find.add(f"[{table}]", key, f"expected {expected}, got {value!r}")
        else:
            out[key] = value
    return out


def _fits(key: str, value: Any, table: str) -> bool:
    if table == "tracing":
        if key == "exporter":
            return value in ("console", "otlp", "otlp_http", "otlp_grpc", "none")
        if key == "logs":
            return isinstance(value, bool) or value in ("console", "otlp", "otlp_http", "otlp_grpc")
        return isinstance(value, str) and bool(value)
    if key == "name":
        return isinstance(value, str) and bool(value)
    if key == "strict":
        return isinstance(value, bool)
    if key == "dynamic_tools":
        return isinstance(value, list) and all(isinstance(v, str) and v for v in value)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if key == "timeout":
        return number and value > 0
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _named(find: Finder, data: Mapping[str, Any], table: str, build: Any) -> dict[str, Any]:
    section = data.get(table, {})
    if not isinstance(section, dict):
        find.add(f"[{table}]", "", f"expected a table of named tables ([{table}.NAME])")
        return {}
    out: dict[str, Any] = {}
    for name, spec in section.items():
        if not isinstance(spec, dict):
            find.add(f"[{table}.{name}]", "", "expected a table")
            continue
        built = build(find, name, spec)
        if built is not None:
            out[name] = built
    return out


def config_from_env() -> LatticeConfig | None:
    """The configuration named by ``ADK_LATTICE_CONFIG``, or None when it is unset or empty.

    Raises:
        ConfigError: when the file is missing or has problems.
    """
    path = os.environ.get(CONFIG_ENV, "").strip()
    return read_config(path) if path else None


def read_config_name(path: str | os.PathLike[str]) -> str | None:
    """``[lattice] name`` of a config file, or None (problems surface when it is built)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    section = data.get("lattice")
    name = section.get("name") if isinstance(section, dict) else None
    return name if isinstance(name, str) and name else None
