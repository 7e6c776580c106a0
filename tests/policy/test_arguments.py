"""Argument hygiene, checks and rewrites: the exact limits and both ends of every bound."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from adk_lattice.policy import Clamp, Round
from adk_lattice.policy.tools.arguments import hygiene, run_check, schema_check, where

LIMITS = {"max_string": 5, "max_depth": 3, "max_items": 4}


def nested_lists(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_a_string_exactly_at_the_limit_is_accepted() -> None:
    """A string of max_string characters is clean; one more character is refused."""
    assert hygiene({"note": "x" * 5}, **LIMITS) is None
    assert hygiene({"note": "x" * 6}, **LIMITS, known={"note"}) == (
        "note is longer than 5 characters"
    )


def test_a_collection_exactly_at_the_limit_is_accepted() -> None:
    """max_items entries in a list or object are clean; one more is refused."""
    assert hygiene({"ids": [1, 2, 3, 4]}, **LIMITS) is None
    assert hygiene({"ids": [1, 2, 3, 4, 5]}, **LIMITS, known={"ids"}) == (
        "ids has more than 4 items"
    )
    assert hygiene(dict.fromkeys("abcd", 1), **LIMITS) is None
    assert hygiene(dict.fromkeys("abcde", 1), **LIMITS) == "arguments has more than 4 entries"


def test_nesting_exactly_at_the_depth_limit_is_accepted() -> None:
    """A value max_depth levels deep is clean; one level deeper is refused."""
    assert hygiene({"a": {"b": {"c": 1}}}, **LIMITS) is None
    assert hygiene({"a": {"b": {"c": {"d": 1}}}}, **LIMITS) == (
        "arguments are nested deeper than 3 levels"
    )


def test_the_depth_limit_counts_list_nesting_too() -> None:
    """Lists inside lists count towards max_depth as objects do."""
    assert hygiene({"a": nested_lists(2)}, **LIMITS) is None
    assert hygiene({"a": nested_lists(3)}, **LIMITS) == (
        "arguments are nested deeper than 3 levels"
    )


def test_a_huge_string_inside_a_list_is_refused_naming_its_index() -> None:
    """A long string inside a list is found, and its path names the declared field and index."""
    out = hygiene({"ids": ["ok", "x" * 6]}, **LIMITS, known={"ids"})
    assert out == "ids[1] is longer than 5 characters"


def test_a_non_string_key_is_refused() -> None:
    """An object with a non-string key is malformed."""
    assert hygiene({"a": {1: "x"}}, **LIMITS, known={"a"}) == "a has a non-string key"


def test_a_path_through_an_undeclared_key_hides_the_key() -> None:
    """A key the model chose never appears in a reason: the path reads 'an argument'."""
    assert where(["alice@example.com", 0], known={"ids"}) == "an argument"
    assert where([], known=set()) == "arguments"
    assert where(["ids", 2, "name"], known={"ids", "name"}) == "ids[2].name"


def test_a_check_returning_false_denies() -> None:
    """A check returning False rejects the arguments, naming the check."""

    def small_amounts_only(args: Any) -> bool:
        return bool(args["amount"] < 10)

    assert run_check(small_amounts_only, {"amount": 50}) == (
        "arguments rejected by small_amounts_only"
    )
    assert run_check(small_amounts_only, {"amount": 5}) is None


def test_a_check_raising_a_value_error_denies_by_the_error_type_only() -> None:
    """A ValueError from a check denies, naming its type but never its message."""

    def parses(args: Any) -> bool:
        return int(args["amount"]) > 0

    out = run_check(parses, {"amount": "alice@example.com"})
    assert out == "arguments rejected by parses (ValueError)"


def test_a_long_check_reason_is_cut() -> None:
    """A reason string from a check is cut to 500 characters."""
    out = run_check(lambda args: "r" * 900, {})
    assert out == "r" * 500


@pytest.mark.parametrize(
    ("value", "expected"),
    [(-5, 1), (0, 1), (1, 1), (7, 7), (10, 10), (11, 10), (0.5, 1.0), (-2.5, 1.0)],
)
def test_clamp_holds_values_between_both_bounds(value: float, expected: float) -> None:
    """Clamp raises a value below low to low and lowers one above high to high."""
    args: dict[str, Any] = {"n": value}
    Clamp("n", low=1, high=10).apply(args, {})
    assert args["n"] == expected
    assert type(args["n"]) is type(value)


def test_clamp_with_only_a_lower_bound_leaves_large_values() -> None:
    """Clamp(low=...) alone raises small values and leaves large ones as they are."""
    args: dict[str, Any] = {"n": -3, "m": 10**6}
    Clamp("n", low=0).apply(args, {})
    Clamp("m", low=0).apply(args, {})
    assert args == {"n": 0, "m": 10**6}


@pytest.mark.parametrize("value", [True, "5", None])
def test_clamp_leaves_non_numbers_to_the_checks(value: Any) -> None:
    """A bool, a string or a missing value is not clamped (a schema or check judges it)."""
    args: dict[str, Any] = {"n": value}
    Clamp("n", low=1, high=2).apply(args, {})
    assert args["n"] is value


def _reason(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    return schema_check({"type": "object", **schema})(args)


@pytest.mark.parametrize(
    ("prop", "value", "reason"),
    [
        ({"type": "number", "minimum": 1}, 0, "n must be >= 1"),
        ({"type": "number", "exclusiveMinimum": 1}, 1, "n must be > 1"),
        ({"type": "number", "maximum": 9}, 10, "n must be <= 9"),
        ({"type": "number", "exclusiveMaximum": 9}, 9, "n must be < 9"),
        ({"type": "string", "maxLength": 2}, "abc", "n fails maxLength 2"),
        ({"type": "string", "minLength": 2}, "a", "n fails minLength 2"),
        ({"type": "array", "maxItems": 1}, [1, 2], "n fails maxItems 1"),
        ({"type": "array", "minItems": 2}, [1], "n fails minItems 2"),
        ({"type": "string", "pattern": "^[a-z]+$"}, "A1", "n fails pattern '^[a-z]+$'"),
        ({"enum": ["a", "b"]}, "c", "n must be one of ['a', 'b']"),
        ({"type": "integer", "multipleOf": 5}, 7, "n fails the multipleOf rule"),
    ],
)
def test_each_schema_rule_has_its_own_legible_reason(
    prop: dict[str, Any], value: Any, reason: str
) -> None:
    """A schema failure names the declared field, the rule and its bound, never the value."""
    assert _reason({"properties": {"n": prop}}, {"n": value}) == reason


def test_a_long_enum_is_listed_up_to_twenty_values() -> None:
    """An enum failure lists at most the first 20 allowed values."""
    allowed = [f"v{i}" for i in range(25)]
    out = _reason({"properties": {"n": {"enum": allowed}}}, {"n": "x"})
    assert out == f"n must be one of {allowed[:20]}"


def test_an_unexpected_field_is_refused_without_naming_it() -> None:
    """additionalProperties=False refuses a field the model made up, without echoing its name."""
    schema = {"properties": {"n": {"type": "number"}}, "additionalProperties": False}
    assert _reason(schema, {"n": 1, "alice@example.com": 2}) == (
        "arguments has an unexpected field"
    )


def test_a_missing_field_is_named_unless_its_name_is_huge() -> None:
    """A missing required field is named; a name making the message 200+ characters is not."""
    assert _reason({"required": ["amount"]}, {}) == "amount is a required property"
    fits, huge = "f" * 174, "f" * 175  # the message adds 2 quotes and 23 characters
    assert _reason({"required": [fits]}, {}) == f"{fits} is a required property"
    assert _reason({"required": [huge]}, {}) == "missing field"


def test_a_collection_reason_names_a_declared_field() -> None:
    """An object with too many entries is named by its declared field."""
    out = hygiene({"filters": dict.fromkeys("abcde", 1)}, **LIMITS, known={"filters"})
    assert out == "filters has more than 4 entries"


def test_a_check_without_a_name_is_called_a_check() -> None:
    """A nameless callable (a partial) that returns False is named 'a check' in the reason."""
    check = functools.partial(lambda limit, args: args["n"] < limit, 10)
    assert run_check(check, {"n": 50}) == "arguments rejected by a check"


@pytest.mark.parametrize("value", ["12.345", 7, None])
def test_round_leaves_anything_but_a_float_alone(value: Any) -> None:
    """Round changes only float arguments; text, ints and missing values pass unchanged."""
    args: dict[str, Any] = {"amount": value}
    Round("amount", 2).apply(args, {})
    assert args["amount"] is value


def test_a_missing_field_with_quotes_in_its_name_is_named_as_written() -> None:
    """A required field whose name holds quotes is named exactly as the schema spells it."""
    assert _reason({"required": ["o'brien"]}, {}) == "o'brien is a required property"
    assert _reason({"required": ["it's 'x'"]}, {}) == "it's 'x' is a required property"
