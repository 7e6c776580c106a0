"""``python -m adk_lattice lint``: readable findings and CI exit codes (0, 1, 2)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_lattice._config.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"

AGENTS = '''
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.tools.base_tool import BaseTool
from adk_lattice.testing import Ban, FakeModel


def lookup_charge(charge_id: str) -> dict:
    """Look up one charge by its id."""
    return {}


def mark_done(detail: str) -> dict:
    """Use this generously; put your findings in the result argument."""
    return {}


clean_agent = LlmAgent(name="clean", model=FakeModel(), tools=[lookup_charge])
noisy_agent = LlmAgent(name="noisy", model=FakeModel(), tools=[mark_done])
app = App(name="shop", root_agent=noisy_agent)
BANS = [Ban("charge", "test ban")]
NOT_AN_AGENT = 42


class Builtin(BaseTool):
    def __init__(self):
        super().__init__(name="builtin", description="Searches.")


builtin_agent = LlmAgent(name="b", model=FakeModel(), tools=[Builtin()])


def build_noisy():
    agent = LlmAgent(name="built", model=FakeModel(), tools=[mark_done])
    return App(name="built", root_agent=agent)


def build_with(model):
    return LlmAgent(name="x", model=model)


def build_broken():
    raise RuntimeError("no config")
'''

KEYS = 'KEYS = ["user:is_manager", "account_status"]\nMORE = ["user:isManager"]\nCOUNT = 3\n'
HANDLERS = 'def f(ctx):\n    return ctx.state.get("user:isManager")\n'
CLEAN_HANDLERS = 'def f(ctx):\n    return ctx.state.get("user:is_manager")\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "agents.py").write_text(AGENTS)
    (tmp_path / "shop" / "keys.py").write_text(KEYS)
    (tmp_path / "handlers").mkdir()
    (tmp_path / "handlers" / "policy.py").write_text(HANDLERS)
    (tmp_path / "temp_only").mkdir()
    (tmp_path / "temp_only" / "scratch.py").write_text('state["temp:seen"] = 1\n')
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "bad.py").write_text("def (:\n")
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "policy.py").write_text(CLEAN_HANDLERS)
    return tmp_path


def lint(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "adk_lattice", "lint", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_tools_clean_exits_0(project: Path) -> None:
    """A tree of neutral tools exits 0 and says clean."""
    result = lint(project, "tools", "shop.agents:clean_agent")
    assert (result.returncode, result.stdout) == (0, "lint tools: clean\n")


def test_tools_findings_exit_1_one_per_line(project: Path) -> None:
    """Findings are printed one per line with a count, and the exit status is 1."""
    result = lint(project, "tools", "shop.agents:noisy_agent")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("noisy/mark_done: banned phrase 'generously'")
    assert lines[1].startswith("noisy/mark_done: description refers to argument 'result'")
    assert lines[-1] == "lint tools: 2 finding(s)"


def test_state_findings_exit_1_with_suggestion(project: Path) -> None:
    """An undeclared state key is reported with file, line and suggestion; exit 1."""
    result = lint(project, "state", "handlers", "--keys", "shop.keys:KEYS")
    assert result.returncode == 1
    assert (
        "policy.py:2:26: undeclared state key 'user:isManager' "
        "(did you mean 'user:is_manager'?)" in result.stdout
    )


def test_state_clean_exits_0(project: Path) -> None:
    """Source using only declared keys exits 0."""
    result = lint(project, "state", "clean", "--keys", "shop.keys:KEYS")
    assert (result.returncode, result.stdout) == (0, "lint state: clean\n")


def test_usage_error_exits_2_with_message_on_stderr(project: Path) -> None:
    """A reference to a missing attribute exits 2 with the reason on stderr."""
    result = lint(project, "tools", "shop.agents:missing")
    assert result.returncode == 2
    assert "'missing' not found" in result.stderr


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run main() in-process from the project root, forgetting its modules afterwards."""
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))  # load() puts the project on it
    yield project
    for name in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
        del sys.modules[name]


def run_main(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["lint", *args], out=out), out.getvalue()


def test_tools_accepts_an_app(in_project: Path) -> None:
    """An App reference is linted through its root agent."""
    status, output = run_main("tools", "shop.agents:app")
    assert status == 1
    assert "noisy/mark_done" in output


def test_tools_custom_bans(in_project: Path) -> None:
    """--bans replaces the default bans with the referenced list."""
    status, output = run_main("tools", "shop.agents:clean_agent", "--bans", "shop.agents:BANS")
    assert status == 1
    assert "banned phrase 'charge': test ban" in output


def test_allow_unchecked_quiets_a_named_tool(in_project: Path) -> None:
    """--allow-unchecked NAME accepts a tool that exposes no declaration."""
    status, _ = run_main("tools", "shop.agents:builtin_agent")
    assert status == 1
    status, _ = run_main("tools", "shop.agents:builtin_agent", "--allow-unchecked", "builtin")
    assert status == 0


def test_state_ignore_prefix(in_project: Path) -> None:
    """--ignore-prefix skips keys under that prefix."""
    status, _ = run_main("state", "temp_only", "--keys", "shop.keys:KEYS")
    assert status == 1
    status, _ = run_main(
        "state", "temp_only", "--keys", "shop.keys:KEYS", "--ignore-prefix", "temp:"
    )
    assert status == 0


def test_tools_calls_a_factory(in_project: Path) -> None:
    """A function without arguments is called and its App or agent linted."""
    status, output = run_main("tools", "shop.agents:build_noisy")
    assert status == 1
    assert "built/mark_done" in output


def test_state_keys_from_several_references_are_united(in_project: Path) -> None:
    """--keys may be repeated; the declared set is the union."""
    status, _ = run_main(
        "state", "handlers", "--keys", "shop.keys:KEYS", "--keys", "shop.keys:MORE"
    )
    assert status == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tools", "shop.agents:build_with"), "needs arguments"),
        (("tools", "shop.agents:build_broken"), "raised RuntimeError('no config')"),
        (("state", "handlers", "--keys", "shop.keys:COUNT"), "not a collection of keys"),
        (("tools", "shop.nowhere:agent"), "cannot import 'shop.nowhere'"),
        (("tools", "shop.agents"), "not of the form pkg.module:attribute"),
        (("tools", "shop.agents:NOT_AN_AGENT"), "not an agent, an App or a function"),
        (("tools", "shop.agents:clean_agent", "--bans", "shop.keys:KEYS"), "sequence of"),
        (("state", "nowhere", "--keys", "shop.keys:KEYS"), "no such file or directory"),
        (("state", "broken", "--keys", "shop.keys:KEYS"), "invalid syntax"),
    ],
)
def test_usage_errors_exit_2(
    in_project: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    """Bad references, missing or unparsable paths exit 2 with a message on stderr."""
    status, _ = run_main(*args)
    assert status == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("args", [("state", "handlers"), ("frobnicate",), ()])
def test_bad_arguments_exit_2(in_project: Path, args: tuple[str, ...]) -> None:
    """Missing or unknown arguments are argparse usage errors with status 2."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    assert exit_.value.code == 2


def test_config_check_never_prints_an_env_value(tmp_path: Path) -> None:
    """A handler refusing an ``@env`` value is reported naming the variable, not its value."""
    (tmp_path / "lattice.toml").write_text(
        '[stores.m]\ntype = "memory"\n\n[[cache]]\nuse = "adk_lattice.cache:ResponseCache"\n'
        'args = { store = "@stores.m", scope = "@env.CACHE_SCOPE" }\n'
    )
    secret = "sk-live-'4f9\\x"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "CACHE_SCOPE": secret,
    }
    done = subprocess.run(
        [sys.executable, "-m", "adk_lattice", "config", "check", "lattice.toml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 1
    assert "not '@env.CACHE_SCOPE'" in printed or 'not "@env.CACHE_SCOPE"' in printed
    assert "sk-live" not in printed


def test_config_check_of_a_deeply_nested_file_is_one_finding(tmp_path: Path) -> None:
    """A file nested past the TOML parser's recursion limit is a finding (exit 1), no
    traceback."""
    (tmp_path / "deep.toml").write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    out = io.StringIO()
    code = main(["config", "check", str(tmp_path / "deep.toml")], out=out)
    assert code == 1
    assert "nested too deeply" in out.getvalue()
