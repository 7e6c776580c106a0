"""``Lattice.from_config`` and ``ADK_LATTICE_CONFIG``: a lattice described in a TOML file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from adk_lattice import ConfigError, Lattice
from adk_lattice._config.cli import main
from adk_lattice.policy import CallLimits, RateLimit
from adk_lattice.state import StateKey
from adk_lattice.stores import MemoryStore, RedisStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config" / "lattice.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lattice.toml"
    path.write_text(text, encoding="utf-8")
    return path


def findings(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        Lattice.from_config(path, on_config_error="raise")
    return raised.value.findings


def test_tiers_are_built_in_file_order_with_their_options(tmp_path: Path) -> None:
    """Handlers are imported, called with their args and given their options, in order."""
    path = write(
        tmp_path,
        """
[lattice]
name = "billing"
[[policy]]
use = "adk_lattice.policy:CallLimits"
args = { max_tool_calls = 3 }
name = "limits"
agents = ["billing"]
[[policy]]
use = "adk_lattice.policy:InjectionGuard"
""",
    )
    lattice = Lattice.from_config(path)
    assert lattice.name == "billing"
    assert lattice.chain("before_model") == ("limits", "InjectionGuard")
    assert lattice._members[0].agents == ["billing"]


def test_a_store_named_in_the_file_is_shared_by_every_handler_naming_it(tmp_path: Path) -> None:
    """Two handlers referencing ``@stores.shared`` get one store object."""
    path = write(
        tmp_path,
        """
[stores.shared]
type = "memory"
[[policy]]
use = "adk_lattice.policy:RateLimit"
args = { limit = 5, window_seconds = 60, store = "@stores.shared" }
[[cache]]
use = "adk_lattice.cache:ResponseCache"
args = { store = "@stores.shared" }
""",
    )
    from adk_lattice._config.read import read_config

    config = read_config(path)
    limit, cache = config.tiers["policy"][0], config.tiers["cache"][0]
    assert isinstance(limit, RateLimit)
    assert isinstance(config.stores["shared"], MemoryStore)
    assert limit.store is config.stores["shared"] is cache.store


def test_a_state_key_declared_in_the_file_is_passed_by_reference(tmp_path: Path) -> None:
    """``@state.tenant`` hands the handler the declared StateKey."""
    path = write(
        tmp_path,
        """
[state.tenant]
key = "user:cfg_tenant"
type = "str"
doc = "The tenant."
[[policy]]
use = "adk_lattice.policy:RateLimit"
args = { limit = 5, window_seconds = 60, per = "@state.tenant" }
""",
    )
    from adk_lattice._config.read import read_config

    limit = read_config(path).tiers["policy"][0]
    assert isinstance(limit.per, StateKey)
    assert (limit.per.name, limit.per.type) == ("user:cfg_tenant", str)


def test_a_redis_url_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``url_env`` names the variable holding the Redis URL; the store uses its value."""
    monkeypatch.setenv("CFG_REDIS_URL", "redis://127.0.0.1:1/3")
    path = write(tmp_path, '[stores.shared]\ntype = "redis"\nurl_env = "CFG_REDIS_URL"\n')
    from adk_lattice._config.read import read_config

    store = read_config(path).stores["shared"]
    assert isinstance(store, RedisStore)
    assert store.client.connection_pool.connection_kwargs["db"] == 3


def test_a_redis_url_written_in_the_file_is_refused(tmp_path: Path) -> None:
    """A URL (which may hold a password) in the file is an error pointing at url_env."""
    path = write(tmp_path, '[stores.shared]\ntype = "redis"\nurl = "redis://:pw@host/0"\n')
    (finding,) = findings(path)
    assert finding.startswith(f"{path}: [stores.shared] url: ")
    assert "url_env" in finding


def test_an_unset_environment_variable_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store whose url_env is unset fails with the variable's name."""
    monkeypatch.delenv("CFG_UNSET_URL", raising=False)
    path = write(tmp_path, '[stores.s]\ntype = "redis"\nurl_env = "CFG_UNSET_URL"\n')
    assert findings(path) == [
        f"{path}: [stores.s] url_env: environment variable 'CFG_UNSET_URL' is not set"
    ]


def test_an_unknown_handler_argument_names_file_table_key_and_the_accepted_ones(
    tmp_path: Path,
) -> None:
    """A misspelt argument is reported with what the handler takes."""
    path = write(
        tmp_path, '[[policy]]\nuse = "adk_lattice.policy:CallLimits"\nargs = {max_tool = 1}\n'
    )
    (finding,) = findings(path)
    assert finding.startswith(
        f"{path}: [[policy]] #1 (adk_lattice.policy:CallLimits) args.max_tool:"
    )
    assert "max_tool_calls" in finding


def test_unknown_keys_and_tables_are_errors(tmp_path: Path) -> None:
    """Every unknown key is reported, all at once, each with its table."""
    path = write(
        tmp_path,
        """
polcy = []
[lattice]
strikt = true
[[policy]]
use = "adk_lattice.policy:InjectionGuard"
mod = "shadow"
""",
    )
    found = findings(path)
    assert len(found) == 3
    assert found[0].startswith(f"{path}: (top level) polcy: unknown table")
    assert found[1].startswith(f"{path}: [lattice] strikt: unknown key")
    assert found[2].startswith(f"{path}: [[policy]] #1 mod: unknown key")


def test_a_wrong_value_says_what_was_expected(tmp_path: Path) -> None:
    """An option of the wrong type names the expected type."""
    path = write(tmp_path, '[lattice]\ntimeout = "soon"\n')
    assert findings(path) == [
        f"{path}: [lattice] timeout: expected a positive number of seconds, got 'soon'"
    ]


def test_a_handler_that_refuses_its_arguments_is_reported(tmp_path: Path) -> None:
    """A constructor's own validation error becomes a finding for that entry."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:CallLimits"\nargs = {max_tool_calls = -1}\n',
    )
    (finding,) = findings(path)
    assert "[[policy]] #1 (adk_lattice.policy:CallLimits) args:" in finding
    assert "non-negative" in finding


def test_an_import_path_that_does_not_import_is_reported(tmp_path: Path) -> None:
    """``use`` naming a missing module or attribute is a finding, not a traceback."""
    path = write(tmp_path, '[[handlers]]\nuse = "adk_lattice.policy:NoSuchGuard"\n')
    (finding,) = findings(path)
    assert "[[handlers]] #1 (adk_lattice.policy:NoSuchGuard) use:" in finding


def test_an_unknown_reference_is_reported(tmp_path: Path) -> None:
    """A reference to an undeclared store lists the declared ones."""
    path = write(
        tmp_path,
        '[stores.a]\ntype = "memory"\n[[cache]]\nuse = "adk_lattice.cache:ResponseCache"\n'
        'args = { store = "@stores.b" }\n',
    )
    (finding,) = findings(path)
    assert "args.store: '@stores.b' names no [stores.b] table (declared: a)" in finding


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    """A config path that does not exist fails at construction."""
    assert findings(tmp_path / "nope.toml") == [
        f"{tmp_path / 'nope.toml'}: no such file (expected a TOML lattice config)"
    ]


def test_the_environment_variable_configures_a_lattice_built_from_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Lattice(name=...)``, as ``adk web`` builds it, reads ``ADK_LATTICE_CONFIG``."""
    path = write(tmp_path, '[[policy]]\nuse = "adk_lattice.policy:CallLimits"\n')
    monkeypatch.setenv("ADK_LATTICE_CONFIG", str(path))
    assert Lattice(name="adk_lattice.Lattice").chain("before_model") == ("CallLimits",)


def test_tiers_given_in_code_win_over_the_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lattice whose tiers are passed in code ignores ``ADK_LATTICE_CONFIG``."""
    path = write(tmp_path, '[[policy]]\nuse = "adk_lattice.policy:CallLimits"\n')
    monkeypatch.setenv("ADK_LATTICE_CONFIG", str(path))
    lattice = Lattice(policy=[CallLimits(name="mine")])
    assert lattice.chain("before_model") == ("mine",)


def test_config_and_tiers_together_are_refused(tmp_path: Path) -> None:
    """``config=`` with tiers in code fails at construction."""
    path = write(tmp_path, "")
    with pytest.raises(ValueError, match="either config= or tiers"):
        Lattice(config=path, policy=[CallLimits()])


async def test_close_closes_the_stores_the_file_declared(tmp_path: Path) -> None:
    """The lattice owns the stores its file declared and closes them."""
    db = tmp_path / "cache.sqlite3"
    path = write(
        tmp_path,
        f'[stores.local]\ntype = "sqlite"\npath = "{db}"\n'
        '[[cache]]\nuse = "adk_lattice.cache:ResponseCache"\nargs = { store = "@stores.local" }\n',
    )
    lattice = Lattice.from_config(path)
    (cache,) = lattice._members[:1]
    assert await cache.store.set("k", b"v")
    assert cache.store._db is not None
    await lattice.close()
    assert cache.store._db is None


def test_config_check_is_clean_on_the_example() -> None:
    """``config check`` on the shipped example exits 0."""
    out = io.StringIO()
    assert main(["config", "check", str(EXAMPLE)], out=out) == 0
    assert out.getvalue().endswith("config check: clean\n")


def test_config_check_prints_findings_and_exits_1(tmp_path: Path) -> None:
    """``config check`` prints every finding and exits 1."""
    path = write(tmp_path, '[lattice]\nstrict = "yes"\n')
    out = io.StringIO()
    assert main(["config", "check", str(path)], out=out) == 1
    assert out.getvalue().splitlines() == [
        f"{path}: [lattice] strict: expected true or false, got 'yes'",
        "config check: 1 finding(s)",
    ]


def test_config_check_without_a_file_is_a_usage_error() -> None:
    """``config check`` with no file exits 2."""
    with pytest.raises(SystemExit) as raised:
        main(["config", "check"])
    assert raised.value.code == 2


def test_a_handler_can_be_put_in_shadow_mode_from_the_file(tmp_path: Path) -> None:
    """``mode = "shadow"`` in an entry makes it a shadow handler, not a decider."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:CallLimits"\nmode = "shadow"\n'
        '[[policy]]\nuse = "adk_lattice.policy:InjectionGuard"\n',
    )
    lattice = Lattice.from_config(path)
    assert lattice.chain("before_model") == ("InjectionGuard",)
    assert lattice.chain("before_model", "shadow") == ("CallLimits",)


HANDLER = '''
class DeskGuard:
    """A handler of the desk's own."""

    def before_tool(self, *, tool, tool_args, tool_context):
        return None
'''


def test_config_check_does_not_import_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module only the working folder holds fails the check, as it fails under the server."""
    (tmp_path / "desk_policy_cwd.py").write_text(HANDLER, encoding="utf-8")
    conf = tmp_path / "conf"
    conf.mkdir()
    path = write(conf, '[[policy]]\nuse = "desk_policy_cwd:DeskGuard"\n')
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main(["config", "check", str(path)], out) == 1
    assert "cannot import 'desk_policy_cwd'" in out.getvalue()


def test_a_module_beside_the_config_file_imports_in_the_check_and_the_lattice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config file's folder is on the import path for the check and for the lattice alike."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "desk_policy_beside.py").write_text(HANDLER, encoding="utf-8")
    path = write(conf, '[[policy]]\nuse = "desk_policy_beside:DeskGuard"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    assert main(["config", "check", str(path)], io.StringIO()) == 0
    lattice = Lattice.from_config(path, on_config_error="raise")
    assert lattice.chain("before_tool") == ("DeskGuard",)


def test_config_check_on_a_missing_file_exits_2(tmp_path: Path) -> None:
    """``config check nope.toml`` is a usage error (exit 2), as the help says."""
    assert main(["config", "check", str(tmp_path / "nope.toml")], out=io.StringIO()) == 2


def test_the_command_help_shows_no_markup(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` prints the description without reStructuredText backticks."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "config check" in out
    assert "``" not in out


def test_a_misspelt_policy_class_gets_a_did_you_mean(tmp_path: Path) -> None:
    """``RequiredState`` is reported with the nearest real name, ``RequireState``."""
    path = write(tmp_path, '[[policy]]\nuse = "adk_lattice.policy:RequiredState"\n')
    (finding,) = findings(path)
    assert "has no attribute 'RequiredState'; did you mean 'RequireState'?" in finding


def test_a_token_cap_written_as_text_names_the_field(tmp_path: Path) -> None:
    """``output_tokens = "2000"`` fails naming output_tokens and the value."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:TokenBudget"\n'
        'args = { budgets = [{ scope = "session", output_tokens = "2000" }] }\n',
    )
    (finding,) = findings(path)
    assert "Budget output_tokens must be a non-negative integer or None, not '2000'" in finding


def test_redact_pii_restore_args_of_numbers_is_a_finding_saying_what_it_takes(
    tmp_path: Path,
) -> None:
    """``restore_args = [1]`` in a file is reported with the values it takes."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:RedactPII"\nargs = { restore_args = [1] }\n',
    )
    (finding,) = findings(path)
    assert "restore_args takes True, False or a list of tool names" in finding


def test_redact_pii_restore_args_none_is_a_clear_error() -> None:
    """``RedactPII(restore_args=None)`` says what it takes instead of a raw TypeError."""
    from adk_lattice.policy import RedactPII

    with pytest.raises(TypeError, match="restore_args takes True, False or a list of tool"):
        RedactPII(restore_args=None)  # type: ignore[arg-type]


def test_a_file_beside_the_config_answers_no_later_import_of_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the config loads, a module planted beside it is not importable by the app."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "desk_policy_planted.py").write_text(HANDLER, encoding="utf-8")
    marker = tmp_path / "ran"
    (conf / "planted_optional_dep.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8"
    )
    path = write(conf, '[[policy]]\nuse = "desk_policy_planted:DeskGuard"\n')
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    lattice = Lattice.from_config(path, on_config_error="raise")
    assert lattice.chain("before_tool") == ("DeskGuard",)
    with pytest.raises(ModuleNotFoundError):
        __import__("planted_optional_dep")
    assert not marker.exists()
