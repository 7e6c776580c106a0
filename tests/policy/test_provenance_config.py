"""Declaring ProvenanceGuard: every configuration mistake fails at construction, with the fix."""

from __future__ import annotations

import pytest

from adk_lattice.policy import Consequential, ProvenanceGuard, ToolRule
from tests.policy.test_provenance import guard


def test_unknown_kind_names_the_valid_kinds() -> None:
    """A typo in a kind fails at construction, listing every valid kind."""
    kinds = "valid kinds: account, email, iban, id, number, phone, postal, text, url, wallet"
    with pytest.raises(ValueError, match=kinds):
        Consequential(args={"recipient": "ibna"})


def test_empty_args_fail_with_the_fix() -> None:
    """A consequential tool with no sensitive argument fails, saying what to write."""
    fix = (
        r"^Consequential needs at least one sensitive argument, e\.g\. "
        r"Consequential\(args=\{'recipient': 'iban'\}\), or always_confirm=True$"
    )
    with pytest.raises(ValueError, match=fix):
        Consequential(args={})


def test_empty_args_allowed_with_always_confirm() -> None:
    """always_confirm=True alone is a complete declaration."""
    assert Consequential(always_confirm=True).args == {}


def test_non_string_tool_name_fails() -> None:
    """A tool name that is not a string fails at construction."""
    with pytest.raises(ValueError, match="tool names must be strings"):
        ProvenanceGuard({3: Consequential(args={"to": "email"})})  # type: ignore[dict-item]


def test_plain_dict_instead_of_consequential_fails() -> None:
    """A bare dict where a Consequential belongs fails, showing the right form."""
    with pytest.raises(ValueError, match="must be a Consequential"):
        ProvenanceGuard({"send": {"to": "email"}})  # type: ignore[dict-item]


def test_unknown_on_ungrounded_fails() -> None:
    """on_ungrounded takes only 'deny' or 'confirm'."""
    with pytest.raises(ValueError, match="'deny' or 'confirm'"):
        guard(on_ungrounded="ask")


def test_trusted_tools_string_path_fails() -> None:
    """A single path string instead of a list of paths fails with the fix."""
    with pytest.raises(ValueError, match=r"\['messages.\*.sender'\]"):
        guard(trusted_tools={"read_inbox": "messages.*.sender"})


def test_trusted_state_refuses_an_undeclared_name() -> None:
    """A key name in trusted_state must be declared: an undeclared one fails with the fix."""
    with pytest.raises(ValueError, match="no state key 'user:pc_never_declared' is declared"):
        guard(trusted_state=["user:pc_never_declared"])


def test_from_rules_reads_sensitive_arguments() -> None:
    """ToolRule(sensitive=...) rows become consequential tools; other rows are ignored."""
    g = ProvenanceGuard.from_rules(
        {"send_money": ToolRule(sensitive={"recipient": "iban"}), "lookup": ToolRule()}
    )
    assert set(g.consequential) == {"send_money"}
    assert g.consequential["send_money"].args == {"recipient": "iban"}


def test_from_rules_rejects_a_bad_kind() -> None:
    """A bad kind in a ToolRule fails when the guard is built from it."""
    with pytest.raises(ValueError, match="ToolRule for 'send_money'"):
        ProvenanceGuard.from_rules({"send_money": ToolRule(sensitive={"recipient": "bank"})})


def test_from_rules_without_sensitive_rows_fails() -> None:
    """A rule table with nothing sensitive is a mistake, not an empty guard."""
    with pytest.raises(
        ValueError, match=r"^no ToolRule declares sensitive=\.\.\., e\.g\. \{'recipient': 'iban'\}$"
    ):
        ProvenanceGuard.from_rules({"lookup": ToolRule()})


def test_from_rules_passes_the_other_options_on() -> None:
    """from_rules hands its other arguments (a name, trusted tools) to the guard it builds."""
    g = ProvenanceGuard.from_rules(
        {"send_money": ToolRule(sensitive={"recipient": "iban"})}, name="payments"
    )
    assert g.name == "payments"


def test_trusted_state_keys_are_exposed_for_protection() -> None:
    """The trusted state keys are the policy's state_keys, which the lattice protects."""
    from adk_lattice.state import StateKey

    key = StateKey("user:home_iban", str, "", "The user's own account.")
    assert guard(trusted_state=[key]).state_keys == (key,)


def test_args_that_are_not_a_table_fail_with_the_fix() -> None:
    """args given as a list of names fails, showing the {argument: kind} form."""
    with pytest.raises(
        ValueError,
        match=r"^Consequential: args must map argument names to kinds, e\.g\. \{'to': 'email'\}$",
    ):
        Consequential(args=["to"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", 3])
def test_an_argument_name_that_is_not_a_string_fails(name: object) -> None:
    """An empty or non-string argument name fails at construction, naming the declaration."""
    with pytest.raises(
        ValueError, match=r"^Consequential: argument names must be non-empty strings"
    ):
        Consequential(args={name: "iban"})  # type: ignore[dict-item]


def test_trusted_tools_that_are_not_a_table_fail_with_the_fix() -> None:
    """trusted_tools given as a list of names fails, saying what it maps."""
    with pytest.raises(
        ValueError, match=r"^trusted_tools must map tool names to True or a list of field paths$"
    ):
        guard(trusted_tools=["read_inbox"])


@pytest.mark.parametrize("name", ["", 3])
def test_a_trusted_tool_name_that_is_not_a_string_fails(name: object) -> None:
    """An empty or non-string tool name in trusted_tools fails at construction."""
    with pytest.raises(ValueError, match="trusted_tools: tool names must be strings"):
        guard(trusted_tools={name: True})


@pytest.mark.parametrize(
    "paths", [[], ["messages..sender"], ["messages."], [""], ["ok", 3]], ids=repr
)
def test_a_bad_list_of_trusted_paths_fails(paths: list[object]) -> None:
    """An empty list of paths, or a path with an empty segment, fails with the fix."""
    with pytest.raises(ValueError, match=r"non-empty list of dotted field paths"):
        guard(trusted_tools={"read_inbox": paths})


def test_consequential_not_a_mapping_fails_with_the_form() -> None:
    """A list of tool names where the mapping belongs fails, showing the right form."""
    with pytest.raises(
        ValueError, match=r"^consequential must map tool names to Consequential\(\.\.\.\)$"
    ):
        ProvenanceGuard(["send_money"])  # type: ignore[arg-type]


def test_trusted_state_error_names_the_type_given() -> None:
    """A trusted_state entry that is neither a key nor a name is reported by its type."""
    with pytest.raises(TypeError, match=r"trusted_state takes a StateKey or a .* not int$"):
        guard(trusted_state=[5])
