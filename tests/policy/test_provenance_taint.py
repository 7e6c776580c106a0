"""Where ProvenanceGuard keeps taint and finds trusted text: the record, and what grounds."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events.event import Event
from google.genai import types

from adk_lattice.policy import Consequential, ProvenanceGuard, provenance_values
from adk_lattice.policy.provenance_taint import (
    TAINT_KEY,
    capped,
    capped_pairs,
    instruction_text,
    read_taint,
    scalars,
    select,
    session_hash,
    token_hash,
    trusted_leaves,
    user_texts,
)
from adk_lattice.state import StateKey
from adk_lattice.testing import function_tool
from tests.policy.test_provenance import ATTACKER, INBOX, check, context, guard

SALT = "c" * 16
ROOM = StateKey("user:home_room", dict, {}, "The user's own rooms.")
LIMIT = StateKey("user:daily_limit", int, 0, "The user's own daily limit.")
DEEP = StateKey("user:deep", dict, {}, "A pathologically deep value.")


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test extracts its own tokens: the module's memo would hand it earlier results."""
    provenance_values._MEMO.clear()


def _record(**entries: dict[str, Any]) -> dict[str, Any]:
    return {TAINT_KEY: {"v": 1, "s": entries}}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        ("Pay only DE89.", "Pay only DE89."),
        (types.Content(parts=[types.Part(text="a"), types.Part(text="b")]), "a\nb"),
        (["a", types.Content(parts=[types.Part(text="b")])], "a\nb"),
        (types.Part(text="p"), "p"),
        (42, ""),
    ],
    ids=["none", "str", "content", "list", "part", "other"],
)
def test_the_system_instruction_text_is_read_from_every_shape(value: Any, text: str) -> None:
    """A system instruction given as text, Content, parts or a list reads as its text."""
    assert instruction_text(value) == text


def test_a_source_read_twice_is_recorded_once() -> None:
    """Reading the same untrusted tool again adds no second entry to the record."""
    ctx = context()
    guard().after_tool(tool=INBOX, tool_args={}, tool_context=ctx, result={})
    (entry,) = ctx.state[TAINT_KEY]["s"].values()
    assert entry["src"] == ["read_inbox"]


def test_the_record_is_versioned() -> None:
    """The taint record carries its format version beside the session entries."""
    assert set(context().state[TAINT_KEY]) == {"v", "s"}
    assert context().state[TAINT_KEY]["v"] == 1


def test_a_malformed_record_distrusts_the_user_text() -> None:
    """With an unreadable taint record, even values the 'user' typed are not grounded."""
    ctx = context(f"pay 5 to {ATTACKER}", state={TAINT_KEY: "clean!"}, tainted=False)
    assert check(guard(), ctx, recipient=ATTACKER, amount=5)["arguments"] == [
        "recipient",
        "amount",
    ]


def test_an_inherited_marker_alone_taints() -> None:
    """A record whose only entry says it inherited taint (no sources) still taints."""
    state = _record(**{SALT: {"src": [], "inh": True}})
    ctx = context(f"pay 5 to {ATTACKER}", state=state, tainted=False)
    assert check(guard(), ctx, recipient=ATTACKER, amount=5)["status"] == "denied"


def _handed_down(value: str) -> dict[str, Any]:
    """The caller's entry, holding the salted hash of an IBAN its user typed."""
    return {"src": ["read_inbox"], "inh": False, "tok": [token_hash(SALT, "iban", value)]}


def test_a_nested_run_grounds_what_its_caller_handed_down() -> None:
    """A session that inherited taint grounds a value by the hashes its caller handed down."""
    ctx = context(tainted=False)
    mine = session_hash(ctx.session.id)
    ctx.state[TAINT_KEY] = _record(
        **{SALT: _handed_down(ATTACKER), mine: {"src": ["lookup"], "inh": True}}
    )[TAINT_KEY]
    assert check(guard(), ctx, recipient=ATTACKER, amount=None) is None


def test_a_session_of_its_own_ignores_hashes_handed_to_others() -> None:
    """A session that did not inherit taint is not grounded by another session's hashes."""
    ctx = context(tainted=False)
    mine = session_hash(ctx.session.id)
    ctx.state[TAINT_KEY] = _record(
        **{SALT: _handed_down(ATTACKER), mine: {"src": ["read_inbox"], "inh": False}}
    )[TAINT_KEY]
    assert check(guard(), ctx, recipient=ATTACKER, amount=None)["status"] == "denied"


def test_a_trusted_state_structure_grounds_its_leaves() -> None:
    """Every string leaf of a trusted state value grounds, whole: {"rooms": ["Team Room"]}."""
    g = rooms(trusted_state=[ROOM])
    ctx = context("book it", state={"user:home_room": {"rooms": ["Team Room"]}})
    assert check(g, ctx, tool=_booking(), room="team room") is None


def test_a_trusted_state_number_grounds_an_amount() -> None:
    """A number held in trusted state grounds the same amount."""
    g = guard(trusted_state=[LIMIT])
    ctx = context("pay the usual", state={"user:daily_limit": 500})
    assert check(g, ctx, recipient=None, amount=500) is None


def test_a_trusted_state_bool_grounds_nothing() -> None:
    """A flag in trusted state is not text: True does not ground an id 'true'."""
    g = rooms(trusted_state=[ROOM])
    ctx = context("book it", state={"user:home_room": {"vip": True}})
    assert check(g, ctx, tool=_booking(), room="true")["status"] == "denied"


def test_a_pathologically_deep_trusted_value_does_not_crash_the_check() -> None:
    """Trusted state nested thousands of levels deep is read to a depth, not overflowed."""
    deep: dict[str, Any] = {"leaf": "x"}
    for _ in range(5_000):
        deep = {"k": deep}
    g = rooms(trusted_state=[DEEP])
    ctx = context("book it")
    ctx.state["user:deep"] = deep
    assert check(g, ctx, tool=_booking(), room="team room")["status"] == "denied"


def book_room(room: str) -> dict[str, Any]:
    """Book a room."""
    return {}


def _booking() -> Any:
    return function_tool(book_room)


def rooms(**options: Any) -> ProvenanceGuard:
    return ProvenanceGuard({"book_room": Consequential(args={"room": "id"})}, **options)


def test_an_inherited_session_reads_only_its_callers_hashes() -> None:
    """A nested session trusts the token hashes its caller handed it, never its own entry's."""
    mine, caller = session_hash("nested"), session_hash("caller")
    state = {
        TAINT_KEY: {
            "v": 1,
            "s": {
                mine: {"src": [], "inh": True, "tok": ["own"]},
                caller: {"src": ["read_inbox"], "inh": False, "tok": ["given", 7]},
            },
        }
    }
    assert read_taint(state, "nested").hashed == {caller: frozenset({"given"})}


def test_a_token_hash_is_sixteen_hex_characters_even_for_a_lone_surrogate() -> None:
    """Hashing never fails on text UTF-8 cannot encode, and is 16 hex characters long."""
    digest = token_hash("salt", "id", "a\ud800b")
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert digest != token_hash("salt", "id", "a\ud801b")


def _deep(depth: int, leaf: object, box: str) -> object:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if box == "dict" else [value]
    return value


@pytest.mark.parametrize("box", ["dict", "list"])
def test_leaves_are_read_down_to_twenty_levels_and_no_deeper(box: str) -> None:
    """A leaf inside 20 nested containers is read; inside 21 it is not."""
    assert list(scalars(_deep(20, "x", box))) == ["x"]
    assert list(scalars(_deep(21, "x", box))) == []


@pytest.mark.parametrize(
    ("path", "found"),
    [
        (("rows", "*", "iban"), ["A", "B"]),
        (("rows", "1", "iban"), ["B"]),
        (("rows", "2", "iban"), []),
        (("rows", "x"), []),
        (("meta", "*"), ["m1", "m2"]),
    ],
)
def test_a_trusted_field_path_selects_its_values(path: tuple[str, ...], found: list[str]) -> None:
    """Paths pick mapping keys, list items by index (in range) and * for every item."""
    response = {"rows": [{"iban": "A"}, {"iban": "B"}], "meta": {"a": "m1", "b": "m2"}}
    assert list(select(response, path)) == found


def test_a_tool_not_trusted_gives_no_leaves() -> None:
    """trust=False reads nothing from a response; True reads every leaf."""
    response = {"a": "x", "b": [1, "y"]}
    assert list(trusted_leaves(response, False)) == []
    assert list(trusted_leaves(response, True)) == ["x", "1", "y"]


def test_trusted_text_is_capped_at_its_budget_the_last_text_cut() -> None:
    """Texts are kept in order until the budget is used: the last one cut, the rest dropped."""
    assert capped(["abc", "defg", "hi"], budget=5) == ["abc", "de"]
    assert capped(["abc", "de", "x"], budget=5) == ["abc", "de"]
    assert capped(["a", "b"], budget=1) == ["a"]
    assert capped_pairs([("abc", ("e",)), ("defg", ()), ("hi", ())], budget=5) == [
        ("abc", ("e",)),
        ("de", ()),
    ]
    assert capped_pairs([("a", ()), ("b", ())], budget=1) == [("a", ())]


def test_only_the_users_own_messages_are_their_words() -> None:
    """Text of user-authored events counts; an agent's text or an empty event does not."""

    def event(author: str, text: str | None) -> Event:
        parts = [types.Part(text=text)] if text is not None else []
        return Event(
            author=author, invocation_id="i", content=types.Content(role="user", parts=parts)
        )

    events = [event("user", "first"), event("assistant", "not theirs"), event("user", None),
              Event(author="user", invocation_id="i"), event("user", "second")]  # fmt: skip
    assert list(user_texts(events)) == ["second", "first"]


def test_a_session_entry_of_the_wrong_shape_has_no_sources() -> None:
    """A taint entry that is not a mapping, or whose sources are not a list, names none."""
    for entry in ("garbage", {"src": "read_inbox"}):
        taint = read_taint({TAINT_KEY: {"v": 1, "s": {"another": entry}}}, "s")
        assert taint.sources == ()
