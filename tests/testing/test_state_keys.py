"""undeclared_state_keys scans source for literal state keys nobody declared."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from adk_lattice.testing import undeclared_state_keys

KEYS = ["user:is_manager", "account_status", "app:refund_limit"]

SOURCE = """
def before_tool(*, tool, tool_args, tool_context):
    if tool_context.state.get("user:isManager"):
        return None
    status = tool_context.state["acount_status"]
    tool_context.state["account_status"] = "ok"
    tool_context.state.setdefault("app:refund_limt", 1000)
    state = tool_context.state
    state.update({"user:is_manager": True, "surprise": 1})
    if "temp:seen" in state:
        del state["account_status"]
    key = f"temp:{tool.name}"
    state[key] = 1
"""


def write(tmp_path: Path, text: str, name: str = "handlers.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_undeclared_keys_are_found_with_suggestions(tmp_path: Path) -> None:
    """Each undeclared literal key is reported with the nearest declared key."""
    found = undeclared_state_keys([write(tmp_path, SOURCE)], KEYS)
    assert [(f.key, f.suggestion) for f in found] == [
        ("user:isManager", "user:is_manager"),
        ("acount_status", "account_status"),
        ("app:refund_limt", "app:refund_limit"),
        ("surprise", None),
        ("temp:seen", None),
    ]


def test_finding_reads_as_path_line_column(tmp_path: Path) -> None:
    """A finding prints as path:line:col with the suggestion."""
    path = write(tmp_path, 'x = ctx.state["user:isManager"]\n')
    (finding,) = undeclared_state_keys([path], KEYS)
    assert str(finding) == (
        f"{path}:1:15: undeclared state key 'user:isManager' (did you mean 'user:is_manager'?)"
    )


def test_declared_keys_are_quiet(tmp_path: Path) -> None:
    """Source using only declared keys gives no findings."""
    path = write(tmp_path, 'ctx.state["account_status"] = ctx.state.get("user:is_manager")\n')
    assert undeclared_state_keys([path], KEYS) == []


def test_objects_with_a_name_declare_keys(tmp_path: Path) -> None:
    """Declared keys may be objects with a .name (e.g. StateKey)."""

    @dataclass
    class Key:
        name: str

    path = write(tmp_path, 'ctx.state["account_status"]\n')
    assert undeclared_state_keys([path], [Key("account_status")]) == []


def test_statekey_with_an_undeclared_literal_name_is_found(tmp_path: Path) -> None:
    """StateKey("...") made with a name outside the declared set is reported."""
    path = write(tmp_path, 'LIMIT = StateKey("app:refund_limt", int, 1000, "limit")\n')
    assert [f.key for f in undeclared_state_keys([path], KEYS)] == ["app:refund_limt"]


def test_directories_are_searched_recursively(tmp_path: Path) -> None:
    """A directory is scanned for .py files in every subdirectory."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    write(tmp_path / "pkg" / "sub", 'state["nope"]\n', "deep.py")
    write(tmp_path / "pkg", 'state["nope"]\n', "notes.txt")
    assert [f.key for f in undeclared_state_keys([tmp_path], KEYS)] == ["nope"]


def test_other_subscripts_are_ignored(tmp_path: Path) -> None:
    """Subscripts and .get calls on things not named state are not state keys."""
    path = write(tmp_path, 'config["nope"]\nsettings.get("nope")\nctx.states["nope"]\n')
    assert undeclared_state_keys([path], KEYS) == []


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    """A path that does not exist raises FileNotFoundError naming it."""
    with pytest.raises(FileNotFoundError, match=r"missing\.py"):
        undeclared_state_keys([tmp_path / "missing.py"], KEYS)


def test_unparsable_file_names_the_file(tmp_path: Path) -> None:
    """A file with a syntax error raises SyntaxError naming the file."""
    path = write(tmp_path, "def (:\n", "bad.py")
    with pytest.raises(SyntaxError) as error:
        undeclared_state_keys([path], KEYS)
    assert error.value.filename == str(path)


def test_bad_declared_key_is_a_type_error(tmp_path: Path) -> None:
    """A declared key that is neither a string nor has a .name is a TypeError."""
    with pytest.raises(TypeError, match="declared keys"):
        undeclared_state_keys([write(tmp_path, "")], [42])


def test_ignored_prefixes_are_not_checked(tmp_path: Path) -> None:
    """Keys under an ignored prefix (temp:) are skipped; others still reported."""
    path = write(tmp_path, 'state["temp:seen"] = 1\nstate["nope"] = 2\n')
    found = undeclared_state_keys([path], KEYS, ignore_prefixes=["temp:"])
    assert [f.key for f in found] == ["nope"]


def test_shared_prefix_alone_is_no_suggestion(tmp_path: Path) -> None:
    """An unrelated key under the same user: prefix gets no suggestion."""
    path = write(tmp_path, 'state["user:tenant_id"]\n')
    (finding,) = undeclared_state_keys([path], KEYS)
    assert finding.suggestion is None


def test_missing_prefix_suggests_the_prefixed_key(tmp_path: Path) -> None:
    """A key that lost its scope prefix is pointed to its declared, prefixed form."""
    path = write(tmp_path, 'state["is_manager"]\n')
    (finding,) = undeclared_state_keys([path], KEYS)
    assert finding.suggestion == "user:is_manager"


def test_statekey_object_used_as_the_key_is_found(tmp_path: Path) -> None:
    """state[IS_MANAGER] with a StateKey object (not its name) is reported as misuse."""
    write(tmp_path, 'IS_MANAGER = StateKey("user:is_manager", bool, False, "doc")\n', "keys.py")
    path = write(tmp_path, "import keys\nok = ctx.state.get(keys.IS_MANAGER)\n", "use.py")
    (finding,) = undeclared_state_keys([tmp_path], KEYS)
    assert (finding.path, finding.problem, finding.key) == (path, "object_as_key", "IS_MANAGER")
    assert str(finding) == (
        f"{path}:2:20: StateKey IS_MANAGER used as a state key; the key is its name: "
        "use IS_MANAGER.get(state) or state[IS_MANAGER.name]"
    )


def test_statekey_name_used_as_the_key_is_quiet(tmp_path: Path) -> None:
    """state[IS_MANAGER.name] and IS_MANAGER.get(state) are the right uses."""
    write(tmp_path, 'IS_MANAGER = StateKey("user:is_manager", bool, False, "doc")\n', "keys.py")
    write(tmp_path, "a = ctx.state[IS_MANAGER.name]\nb = IS_MANAGER.get(ctx.state)\n", "use.py")
    assert undeclared_state_keys([tmp_path], KEYS) == []
