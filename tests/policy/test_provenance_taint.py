"""Where ProvenanceGuard keeps taint and finds trusted text: the record, and what grounds."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events.event import Event
from google.genai import types

from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.policy.provenance import values as provenance_values
from adk_lattice.policy.provenance.config import trust_table, typed_leaves
from adk_lattice.policy.provenance.taint import (
    MAX_SESSIONS,
    TAINT_KEY,
    Taint,
    batch_of,
    capped,
    capped_pairs,
    instruction_text,
    mark,
    read_taint,
    scalars,
    select,
    session_hash,
    token_hash,
    tool_responses,
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
    guard().label(tool=INBOX, tool_context=ctx)
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
        (("byname", "*", "iban"), ["C", "D"]),
    ],
)
def test_a_trusted_field_path_selects_its_values(path: tuple[str, ...], found: list[str]) -> None:
    """Paths pick mapping keys, list items by index (in range) and * for every item."""
    response = {
        "rows": [{"iban": "A"}, {"iban": "B"}],
        "meta": {"a": "m1", "b": "m2"},
        "byname": {"x": {"iban": "C"}, "y": {"iban": "D"}},
    }
    assert list(select(response, path)) == found


def test_a_tool_not_trusted_gives_no_leaves() -> None:
    """trust=False reads nothing from a response; True reads every leaf, of any kind."""
    response = {"a": "x", "b": [1, "y"]}
    table = trust_table({"off": False, "on": True})
    assert list(typed_leaves(response, table["off"])) == []
    assert list(typed_leaves(response, table["on"])) == [("x", None), ("1", None), ("y", None)]


def test_trusted_text_is_capped_at_its_budget_the_last_text_cut() -> None:
    """Texts are kept in order until the budget is used: the last one cut, the rest dropped."""
    assert capped(["abc", "defg", "hi"], budget=5) == ["abc", "de"]
    assert capped(["abc", "de", "x"], budget=5) == ["abc", "de"]
    assert capped(["a", "b"], budget=1) == ["a"]
    fields = [("abc", "text", ("e",)), ("defg", "text", ()), ("hi", "text", ())]
    assert capped_pairs(fields, budget=5) == [("abc", "text", ("e",)), ("de", "text", ())]
    assert capped_pairs([("a", "text", ()), ("b", "text", ())], budget=1) == [("a", "text", ())]


def test_a_value_field_over_the_budget_is_left_out_not_cut() -> None:
    """A trusted value that does not fit is dropped: its cut prefix would be another value."""
    fields = [("abc", None, ()), ("DE89370400440532013000", None, ()), ("x", None, ())]
    assert capped_pairs(fields, budget=5) == [("abc", None, ()), ("x", None, ())]


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


class Writes(dict[str, Any]):
    """Session state that counts its writes, as ADK counts a state delta."""

    writes = 0

    def __setitem__(self, key: str, value: Any) -> None:
        self.writes += 1
        super().__setitem__(key, value)


def test_marking_a_source_already_recorded_writes_no_state() -> None:
    """A source the record names already adds no state delta when read again."""
    state = Writes()
    mark(state, "s", "read_inbox")
    mark(state, "s", "read_inbox")
    assert state.writes == 1


def test_a_new_source_keeps_the_tokens_handed_down() -> None:
    """Recording a new source keeps the token hashes the entry holds for nested runs."""
    state: dict[str, Any] = {}
    mark(state, "s", None, tokens=["t1", "t2"])
    mark(state, "s", "read_inbox")
    assert state[TAINT_KEY]["s"][session_hash("s")] == {
        "src": ["read_inbox"],
        "inh": False,
        "tok": ["t1", "t2"],
    }


def test_the_record_keeps_the_newest_sessions_and_its_own() -> None:
    """Past MAX_SESSIONS entries the oldest others go; the marking session is kept, newest."""
    others = {f"other{i}": {"src": ["web"], "inh": False} for i in range(MAX_SESSIONS + 2)}
    state = _record(**{session_hash("s"): {"src": ["web"], "inh": False}}, **others)
    mark(state, "s", "read_inbox")
    kept = list(state[TAINT_KEY]["s"])
    assert kept == [*list(others)[-(MAX_SESSIONS - 1) :], session_hash("s")]


def test_a_session_newest_in_a_full_record_keeps_every_other() -> None:
    """Re-marking the newest session of a full record drops no other session's entry."""
    others = {f"other{i}": {"src": ["web"], "inh": False} for i in range(MAX_SESSIONS - 1)}
    state = _record(**others, **{session_hash("s"): {"src": ["web"], "inh": False}})
    mark(state, "s", "read_inbox")
    assert list(state[TAINT_KEY]["s"]) == [*others, session_hash("s")]


def test_a_record_written_earlier_is_read_by_its_session_id() -> None:
    """A stored record names a session by the first 16 hex of its id's SHA-256, so records
    kept in a database across upgrades are still read."""
    state = _record(**{"84097828fc31a8c8": {"src": ["read_inbox"], "inh": False}})
    assert read_taint(state, "session-1") == Taint(True, ("read_inbox",), False, {})


def test_a_session_id_with_a_lone_surrogate_has_a_record() -> None:
    """A session id UTF-8 cannot encode is still marked and read back, never a crash."""
    state: dict[str, Any] = {}
    mark(state, "s\ud800", "read_inbox")
    assert read_taint(state, "s\ud800").sources == ("read_inbox",)


def test_an_unreadable_record_reads_as_inherited_taint_named_unreadable() -> None:
    """A malformed record reads as tainted and inherited, its one source <unreadable>."""
    assert read_taint({TAINT_KEY: "clean!"}, "s") == Taint(True, ("<unreadable>",), True)


def test_a_session_without_an_entry_names_its_callers_inherited_taint() -> None:
    """A session with no entry of its own, in a record whose entry inherited taint, reads
    tainted with the caller's sources and <inherited>."""
    state = _record(caller={"src": ["web"], "inh": True})
    assert read_taint(state, "nested").sources == ("web", "<inherited>")


class _Unlistable:
    """A history entry that cannot list its function responses."""

    def get_function_responses(self) -> list[Any]:
        raise RuntimeError("not an event")


def _responded(name: str, call_id: str | None) -> Event:
    response = types.FunctionResponse(name=name, response={"ok": 1}, id=call_id)
    content = types.Content(role="user", parts=[types.Part(function_response=response)])
    return Event(author="agent", invocation_id="i", content=content)


def test_tool_responses_skip_an_event_that_cannot_list_them() -> None:
    """An entry that fails to list its responses is skipped; older events are still read."""
    events = [_responded("lookup", "c1"), _Unlistable()]
    assert list(tool_responses(events)) == [("lookup", {"ok": 1}, "c1")]


def test_a_tool_response_without_a_call_id_has_an_empty_one() -> None:
    """A function response with no id is listed with the call id ''."""
    assert list(tool_responses([_responded("lookup", None)])) == [("lookup", {"ok": 1}, "")]


def _calling(*call_ids: str) -> Event:
    parts = [types.Part(function_call=types.FunctionCall(name="f", id=c)) for c in call_ids]
    return Event(
        author="agent", invocation_id="i", content=types.Content(role="model", parts=parts)
    )


def _asking(call_id: str, events: list[Event]) -> Any:
    session = type("S", (), {"events": events})()
    return type(
        "C", (), {"function_call_id": call_id, "session": session, "invocation_id": "inv"}
    )()


def test_a_call_is_batched_with_the_model_event_that_asked_for_it() -> None:
    """batch_of names the event holding the call, not a newer one asking for other calls."""
    asked, newer = _calling("c1", "c2"), _calling("c3")
    assert batch_of(_asking("c1", [asked, newer])) == ("inv", asked.id)


def test_a_call_older_than_the_last_64_events_has_no_batch() -> None:
    """Only the last 64 events are searched for the model event of a call."""
    events = [_calling("c1"), *[_calling(f"x{i}") for i in range(64)]]
    assert batch_of(_asking("c1", events)) is None
    assert batch_of(_asking("c1", events[1:] + events[:1])) is not None
