"""Argument checks and rewrites for :class:`~adk_lattice.policy.ToolGuard`.

Checks never raise on bad input: each returns a reason string (legible, naming the
argument and the rule, never echoing a long raw value) or None. Rewrites change arguments
in place where the model must not have a say: clamp, round, or inject a value from state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import jsonschema  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from ..state import StateKey

#: A check: takes the arguments, returns None/True to allow, or a reason string/False to deny.
Check = Callable[[Mapping[str, Any]], "str | bool | None"]


def hygiene(
    args: Any, *, max_string: int, max_depth: int, max_items: int, path: str = ""
) -> str | None:
    """Why ``args`` is malformed regardless of the tool: non-finite numbers, huge strings,
    deep nesting, huge collections, non-string keys. None when it is clean."""
    stack: list[tuple[Any, str, int]] = [(args, path, 0)]
    while stack:
        value, where, depth = stack.pop()
        label = where or "arguments"
        if depth > max_depth:
            return f"{label} is nested deeper than {max_depth} levels"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{label} must be a finite number"
        if isinstance(value, str) and len(value) > max_string:
            return f"{label} is longer than {max_string} characters"
        if isinstance(value, Mapping):
            if len(value) > max_items:
                return f"{label} has more than {max_items} entries"
            for k, v in value.items():
                if not isinstance(k, str):
                    return f"{label} has a non-string key"
                stack.append((v, f"{where}.{k}" if where else k, depth + 1))
        elif isinstance(value, list | tuple):
            if len(value) > max_items:
                return f"{label} has more than {max_items} items"
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
    return None


def _schema_reason(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "arguments"
    rule, bound = error.validator, error.validator_value
    if rule == "required":
        return error.message.replace("'", "", 2) if len(error.message) < 200 else "missing field"
    if rule == "type":
        return f"{where} must be of type {bound}"
    if rule in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        ops = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return f"{where} must be {ops[str(rule)]} {bound}"
    if rule in ("maxLength", "minLength", "maxItems", "minItems", "pattern", "format"):
        return f"{where} fails {rule} {bound!r}"
    if rule == "enum":
        return f"{where} must be one of {list(bound)[:20]}"
    if rule == "additionalProperties":
        return f"{where} has an unexpected field"
    return f"{where} fails the {rule} rule"


def schema_check(schema: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], str | None]:
    """A check from a JSON schema (validated once, here).

    Raises:
        jsonschema.SchemaError: when the schema itself is invalid.
    """
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)

    def check(args: Mapping[str, Any]) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(dict(args)))
        return None if error is None else _schema_reason(error)

    return check


def model_check(model: type[BaseModel]) -> Callable[[Mapping[str, Any]], str | None]:
    """A check that validates the arguments with a pydantic model (strict types)."""

    def check(args: Mapping[str, Any]) -> str | None:
        try:
            model.model_validate(dict(args), strict=True)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            return f"{where}: {first['msg']}"
        return None

    return check


def run_check(check: Check, args: Mapping[str, Any]) -> str | None:
    """Run a user check; False or a string denies, and so does a ValueError/TypeError it raises."""
    try:
        verdict = check(args)
    except KeyError as exc:
        return f"missing argument {str(exc.args[0])[:80] if exc.args else ''}".strip()
    except (ValueError, TypeError) as exc:
        return str(exc)[:200] or type(exc).__name__
    if verdict is None or verdict is True:
        return None
    if verdict is False:
        return f"arguments rejected by {getattr(check, '__name__', 'a check')}"
    return str(verdict)[:500]


@dataclass(frozen=True, slots=True)
class Clamp:
    """Clamp a numeric argument into ``[low, high]`` (missing or non-numeric: left to checks)."""

    #: The reason code telemetry and audit report when this rewrite changed a value.
    code: ClassVar[str] = "clamp"

    field: str
    low: float | None = None
    high: float | None = None

    def apply(self, args: dict[str, Any], state: Any) -> str | None:
        value = args.get(self.field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        new = value
        if self.low is not None and new < self.low:
            new = type(value)(self.low)
        if self.high is not None and new > self.high:
            new = type(value)(self.high)
        args[self.field] = new
        return None


@dataclass(frozen=True, slots=True)
class Round:
    """Round a float argument to ``digits`` decimals (e.g. money to cents)."""

    code: ClassVar[str] = "round"

    field: str
    digits: int = 2

    def apply(self, args: dict[str, Any], state: Any) -> str | None:
        value = args.get(self.field)
        if isinstance(value, float) and math.isfinite(value):
            args[self.field] = round(value, self.digits)
        return None


@dataclass(frozen=True, slots=True)
class InjectState:
    """Set an argument from a declared state key, whatever the model put there.

    Args:
        field: the argument to set (e.g. ``tenant_id``).
        key: the state key to read it from (e.g. ``user:tenant_id``).
        on_conflict: ``overwrite`` replaces a different model-chosen value silently (the
            model cannot control it); ``deny`` refuses the call when the model asked for
            another value (a crafted argument is a signal worth surfacing).
        required: deny when the state holds no usable value (the default), rather than
            injecting the key's default.
    """

    code: ClassVar[str] = "inject_state"

    field: str
    key: StateKey[Any]
    on_conflict: Literal["overwrite", "deny"] = "overwrite"
    required: bool = True

    def apply(self, args: dict[str, Any], state: Any) -> str | None:
        if self.required and not self.key.present(state):
            return f"{self.field} cannot be set: {self.key.name} is not set for this user"
        value = self.key.get(state)
        asked = args.get(self.field)
        if self.on_conflict == "deny" and asked is not None and asked != value:
            return f"{self.field} may only be this user's own; another value was requested"
        args[self.field] = value
        return None


Rewrite = Clamp | Round | InjectState
