"""Argument checks and rewrites for :class:`~adk_lattice.policy.ToolGuard`.

Checks never raise on bad input: each returns a reason string (legible, naming the
argument and the rule, never echoing a long raw value) or None. Rewrites change arguments
in place where the model must not have a say: clamp, round, or inject a value from state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import jsonschema  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from ...state import StateKey
from .._common import declared_key

#: A check: takes the arguments, returns None/True to allow, or a reason string/False to deny.
Check = Callable[[Mapping[str, Any]], "str | bool | None"]


def field_names(schema: Any) -> frozenset[str]:
    """Every property name a JSON schema declares, at any depth (the names a reason may use)."""
    names: set[str] = set()
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            props = node.get("properties")
            if isinstance(props, Mapping):
                names.update(k for k in props if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def where(path: Iterable[Any], known: Collection[str]) -> str:
    """A path for a reason: declared field names and indices only.

    A key the model chose (not in ``known``) may carry anything, an email or a secret, so a
    path through one reads ``an argument`` instead.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif isinstance(part, str) and part in known:
            out.append(f".{part}" if out else part)
        else:
            return "an argument"
    return "".join(out) or "arguments"


def hygiene(
    args: Any,
    *,
    max_string: int,
    max_depth: int,
    max_items: int,
    known: Collection[str] = frozenset(),
) -> str | None:
    """Why ``args`` is malformed regardless of the tool: non-finite numbers, huge strings,
    deep nesting, huge collections, non-string keys. None when it is clean.

    The reason names a field only when it is in ``known`` (declared by the tool or rule).
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(args, ())]
    while stack:
        value, path = stack.pop()
        depth = len(path)
        if depth > max_depth:
            return f"arguments are nested deeper than {max_depth} levels"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where(path, known)} must be a finite number"
        if isinstance(value, str) and len(value) > max_string:
            return f"{where(path, known)} is longer than {max_string} characters"
        if isinstance(value, Mapping):
            if len(value) > max_items:
                return f"{where(path, known)} has more than {max_items} entries"
            for k, v in value.items():
                if not isinstance(k, str):
                    return f"{where(path, known)} has a non-string key"
                stack.append((v, (*path, k)))
        elif isinstance(value, list | tuple):
            if len(value) > max_items:
                return f"{where(path, known)} has more than {max_items} items"
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
    return None


def _schema_reason(error: jsonschema.ValidationError, known: Collection[str]) -> str:
    at = where(error.absolute_path, known)
    rule, bound = error.validator, error.validator_value
    if rule == "required":  # the name comes from the schema, as written (quotes too)
        names = [p for p in bound if error.message == f"{p!r} is a required property"]
        if not names or len(error.message) >= 200:
            return "missing field"
        return f"{names[0]} is a required property"
    if rule == "type":
        return f"{at} must be of type {bound}"
    if rule in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        ops = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return f"{at} must be {ops[str(rule)]} {bound}"
    if rule in ("maxLength", "minLength", "maxItems", "minItems", "pattern", "format"):
        return f"{at} fails {rule} {bound!r}"
    if rule == "enum":
        return f"{at} must be one of {list(bound)[:20]}"
    if rule == "additionalProperties":
        return f"{at} has an unexpected field"
    return f"{at} fails the {rule} rule"


def schema_check(schema: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], str | None]:
    """A check from a JSON schema (validated once, here).

    Raises:
        jsonschema.SchemaError: when the schema itself is invalid.
    """
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    known = field_names(schema)

    def check(args: Mapping[str, Any]) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(dict(args)))
        return None if error is None else _schema_reason(error, known)

    return check


def model_check(model: type[BaseModel]) -> Callable[[Mapping[str, Any]], str | None]:
    """A check that validates the arguments with a pydantic model (strict types).

    The reason names the failing field (when the model declares it) and pydantic's error
    type, never its message, which may quote the input.
    """
    known = field_names(model.model_json_schema())

    def check(args: Mapping[str, Any]) -> str | None:
        try:
            model.model_validate(dict(args), strict=True)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
            return f"{where(first['loc'], known)}: fails {first['type']}"
        return None

    return check


def run_check(check: Check, args: Mapping[str, Any]) -> str | None:
    """Run a user check; False or a string denies, and so does a KeyError, ValueError or
    TypeError it raises.

    A raised error's message may quote the arguments (``invalid literal for int(): 'x'``),
    so the reason names the check and the error's type only; a check that wants to explain
    itself returns a string.
    """
    label = getattr(check, "__name__", "a check")
    try:
        verdict = check(args)
    except KeyError:
        return f"arguments rejected by {label}: a value it needs is missing"
    except (ValueError, TypeError) as exc:
        return f"arguments rejected by {label} ({type(exc).__name__})"
    if verdict is None or verdict is True:
        return None
    if verdict is False:
        return f"arguments rejected by {label}"
    return str(verdict)[:500]


def _check_field(name: Any, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what} field takes the argument's name (a string), not {name!r}")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class Clamp:
    """Clamp a numeric argument into ``[low, high]`` (missing or non-numeric: left to checks)."""

    #: The reason code telemetry and audit report when this rewrite changed a value.
    code: ClassVar[str] = "clamp"

    field: str
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        _check_field(self.field, "Clamp")
        for bound, value in (("low", self.low), ("high", self.high)):
            if value is not None and not _number(value):
                raise TypeError(f"Clamp {bound} must be a finite number or None, not {value!r}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"Clamp low ({self.low}) is above high ({self.high})")

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

    def __post_init__(self) -> None:
        _check_field(self.field, "Round")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int):
            raise TypeError(f"Round digits must be an integer, not {self.digits!r}")

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
    key: StateKey[Any] | str
    on_conflict: Literal["overwrite", "deny"] = "overwrite"
    required: bool = True

    def __post_init__(self) -> None:
        _check_field(self.field, "InjectState")
        key = declared_key(self.key, None, "InjectState key", declare=False)
        object.__setattr__(self, "key", key)
        if self.on_conflict not in ("overwrite", "deny"):
            raise ValueError(
                f"InjectState on_conflict must be 'overwrite' or 'deny', not {self.on_conflict!r}"
            )
        if not isinstance(self.required, bool):
            raise TypeError(f"InjectState required must be true or false, not {self.required!r}")

    @property
    def state_key(self) -> StateKey[Any]:
        """The declared key (a name given is resolved at construction)."""
        assert isinstance(self.key, StateKey)  # __post_init__ made it one
        return self.key

    def apply(self, args: dict[str, Any], state: Any) -> str | None:
        key = self.state_key
        if self.required and not key.present(state):
            return f"{self.field} cannot be set: {key.name} is not set for this user"
        value = key.get(state)
        asked = args.get(self.field)
        if self.on_conflict == "deny" and asked is not None and asked != value:
            return f"{self.field} may only be this user's own; another value was requested"
        args[self.field] = value
        return None


Rewrite = Clamp | Round | InjectState
