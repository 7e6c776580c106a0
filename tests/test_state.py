"""Declared state keys: scopes, typed reads and writes, the registry."""

from __future__ import annotations

import logging

import pytest

from adk_lattice.state import REFUSED_WRITES, REGISTRY, StateKey, StateKeys


def test_scope_follows_the_prefix() -> None:
    """Each ADK prefix maps to its scope and no prefix means session scope."""
    reg = StateKeys()
    scopes = [
        StateKey(n, str, "", registry=reg).scope
        for n in ("app:plan", "user:tenant", "temp:note", "topic")
    ]
    assert scopes == ["app", "user", "temp", "session"]


@pytest.mark.parametrize("name", ["", "bogus:x", "user:", "user:a b", "1abc", ":x"])
def test_malformed_name_is_refused(name: str) -> None:
    """A name that is not an identifier with an optional ADK prefix raises ValueError."""
    with pytest.raises(ValueError, match="bad state key name"):
        StateKey(name, str, "", registry=StateKeys())


def test_default_of_the_wrong_type_is_refused() -> None:
    """A default that is not of the declared type raises ValueError."""
    with pytest.raises(ValueError, match="is not a bool"):
        StateKey("user:flag", bool, "no", registry=StateKeys())  # type: ignore[arg-type]


def test_get_returns_the_default_when_missing() -> None:
    """A missing key reads as the default."""
    key = StateKey("user:is_manager", bool, False, registry=StateKeys())
    assert key.get({}) is False


def test_get_returns_a_well_typed_value() -> None:
    """A value of the declared type is returned as is."""
    key = StateKey("user:is_manager", bool, False, registry=StateKeys())
    assert key.get({"user:is_manager": True}) is True


def test_get_never_trusts_a_string_for_a_bool(caplog: pytest.LogCaptureFixture) -> None:
    """The string "true" for a bool key reads as the default and is logged by type only."""
    key = StateKey("user:is_manager", bool, False, registry=StateKeys())
    with caplog.at_level(logging.WARNING, logger="adk_lattice.state"):
        assert key.get({"user:is_manager": "true"}) is False
    assert "holds a str" in caplog.text
    assert "'true'" not in caplog.text


def test_get_refuses_a_bool_for_an_int() -> None:
    """True is not accepted as an int (bool is an int subclass in Python)."""
    key = StateKey("user:limit", int, 5, registry=StateKeys())
    assert key.get({"user:limit": True}) == 5


def test_get_refuses_nan_for_a_float() -> None:
    """NaN stored under a float key reads as the default."""
    key = StateKey("app:threshold", float, 100.0, registry=StateKeys())
    assert key.get({"app:threshold": float("nan")}) == 100.0


def test_set_writes_a_well_typed_value() -> None:
    """set stores a value of the declared type under the key's name."""
    key = StateKey("user:tenant_id", str, "", registry=StateKeys())
    state: dict[str, object] = {}
    key.set(state, "acme")
    assert state == {"user:tenant_id": "acme"}


def test_set_refuses_a_wrong_type() -> None:
    """set raises TypeError for a value of another type and writes nothing."""
    key = StateKey("user:tenant_id", str, "", registry=StateKeys())
    state: dict[str, object] = {}
    with pytest.raises(TypeError, match="takes a str"):
        key.set(state, 42)  # type: ignore[arg-type]
    assert state == {}


def test_registry_refuses_a_duplicate_with_another_type() -> None:
    """Declaring a name twice with different types raises ValueError."""
    reg = StateKeys()
    StateKey("user:tier", str, "free", registry=reg)
    with pytest.raises(ValueError, match="already declared as str"):
        StateKey("user:tier", int, 0, registry=reg)


def test_registry_accepts_the_same_declaration_twice() -> None:
    """Re-declaring a name with the same type keeps one entry."""
    reg = StateKeys()
    StateKey("user:tier", str, "free", registry=reg)
    StateKey("user:tier", str, "free", registry=reg)
    assert len(reg) == 1


def test_keys_register_in_the_default_registry() -> None:
    """A key declared without a registry lands in the module-level one."""
    StateKey("temp:test_state_probe", int, 0, "Probe key for the registry test.")
    assert "temp:test_state_probe" in REGISTRY


def test_describe_renders_a_markdown_table() -> None:
    """describe lists each key with scope, type, default and doc, sorted by name."""
    reg = StateKeys()
    StateKey("user:is_manager", bool, False, "May approve refunds.", registry=reg)
    StateKey("app:max_refund", float, 100.0, "Refund limit | per call.", registry=reg)
    table = reg.describe().splitlines()
    assert table[0] == "| name | scope | type | default | doc |"
    assert table[2] == "| `app:max_refund` | app | float | `100.0` | Refund limit \\| per call. |"
    assert table[3] == "| `user:is_manager` | user | bool | `False` | May approve refunds. |"


def test_protected_keys_are_listed_by_the_registry() -> None:
    """protected=True keys are what StateKeys.protected() returns; a redeclaration keeps it."""
    reg = StateKeys()
    StateKey("user:role", str, "", "Role.", registry=reg, protected=True)
    StateKey("user:theme", str, "", "Theme.", registry=reg)
    StateKey("user:theme", str, "", "Theme.", registry=reg, protected=True)
    StateKey("user:role", str, "", "Role.", registry=reg)
    assert reg.protected() == {"user:role", "user:theme"}


def test_refused_reads_the_undone_writes() -> None:
    """refused(state) is True only for a key listed as undone in this invocation."""
    key = StateKey("user:role", str, "", "Role.", registry=StateKeys(), protected=True)
    assert key.refused({REFUSED_WRITES: ["user:role"]}) is True
    assert key.refused({REFUSED_WRITES: ["user:other"]}) is False
    assert key.refused({}) is False
