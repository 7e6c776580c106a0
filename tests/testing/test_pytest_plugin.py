"""The pytest plugin: opt-in fixtures for a scripted model, a runner and OTel capture."""

from __future__ import annotations

import asyncio
import os
import tomllib
from pathlib import Path

import pytest
import pytest_asyncio.plugin

# Imported here so in-process inner runs reuse these modules: pytester drops modules first
# imported inside a run, and a re-imported FakeModel class would not match ADK's caches.
import adk_lattice.testing.pytest_plugin

pytest_plugins = ["pytester"]
SRC = Path(adk_lattice.testing.pytest_plugin.__file__).parents[2]

PLUGIN = "adk_lattice.testing.pytest_plugin"
INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings =
    error
    ignore::UserWarning:google.adk.*
    ignore::DeprecationWarning:google.*
    ignore::DeprecationWarning:pydantic.*
    ignore::pydantic.warnings.PydanticDeprecatedSince20
"""


@pytest.fixture(scope="module", autouse=True)
def _warm_imports() -> None:
    """Run one turn here first: ADK imports lazily, and pytester would drop and redo those
    imports in every inner run."""
    from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse, capture_spans

    with capture_spans():
        runner = LatticeRunner(model=FakeModel([ScriptedResponse.text("warm")]))
        asyncio.run(runner.run("hi", streaming=True))


def run_inner(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, source: str, *, conftest: str = ""
) -> pytest.RunResult:
    """Run ``source`` as a test file in-process with the plugin loaded."""
    pytester.makeini(INI)
    if conftest:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_inner=source)
    # Without autoloading, each inner run skips re-importing every installed plugin; the two
    # it needs are passed as the module objects the entry points would load.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = [pytest_asyncio.plugin, adk_lattice.testing.pytest_plugin]
    return pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", plugins=plugins)


def test_fake_model_used_up_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test that uses every turn of fake_model's script passes."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
from adk_lattice.testing import ScriptedResponse

async def test_answer(fake_model, lattice_runner):
    fake_model.script.append(ScriptedResponse.text("Hello."))
    events = await lattice_runner.run("hi")
    assert lattice_runner.texts(events) == ["Hello."]
""",
    )
    result.assert_outcomes(passed=1)


def test_fake_model_reports_unused_turns_at_teardown(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scripted turn no call reached fails the test at teardown, naming the turn."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
from adk_lattice.testing import ScriptedResponse

def test_forgets(fake_model):
    fake_model.script.append(ScriptedResponse.call("issue_refund", amount=5))
""",
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*turn 0 was never requested: call issue_refund*"])


def test_fake_model_is_strict(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run needing more model calls than scripted fails with ScriptExhaustedError."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
import pytest
from adk_lattice.testing import ScriptExhaustedError

async def test_unscripted(lattice_runner):
    with pytest.raises(ScriptExhaustedError):
        await lattice_runner.run("hi")
""",
    )
    result.assert_outcomes(passed=1)


def test_lattice_runner_keeps_state_and_sessions_per_user(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run() creates each user's session with the given state and reuses it next turn."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
from adk_lattice.testing import ScriptedResponse

async def test_state(fake_model, lattice_runner):
    fake_model.script.extend([ScriptedResponse.text("a"), ScriptedResponse.text("b")])
    await lattice_runner.run("one", user_id="ann", state={"user:is_manager": True})
    await lattice_runner.run("two", user_id="ann", state={"n": 2})
    session = await lattice_runner.session("ann")
    assert session.state == {"user:is_manager": True, "n": 2}
    assert [e.author for e in session.events] == ["user", "agent", "user", "agent"]
""",
    )
    result.assert_outcomes(passed=1)


def test_lattice_runner_streams_partial_events(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run(streaming=True) returns the partial chunk events then the final one."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
from adk_lattice.testing import ScriptedResponse

async def test_stream(fake_model, lattice_runner):
    fake_model.script.append(ScriptedResponse(text_chunks=["Hel", "lo"]))
    events = await lattice_runner.run("hi", streaming=True)
    assert [e.partial for e in events] == [True, True, False]
    assert lattice_runner.texts(events) == ["Hello"]
""",
    )
    result.assert_outcomes(passed=1)


def test_lattice_fixture_override_configures_the_runner(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Overriding the lattice fixture in conftest puts that lattice on the runner's App."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
from adk_lattice.testing import ScriptedResponse

async def test_seen(fake_model, lattice_runner, recorder):
    fake_model.script.append(ScriptedResponse.text("hi"))
    await lattice_runner.run("hi")
    assert recorder.hooks_called() == ["before_model", "after_model"]
""",
        conftest="""
import pytest
from adk_lattice import Lattice
from adk_lattice.testing import RecordingHandler

@pytest.fixture
def recorder():
    return RecordingHandler(["before_model", "after_model"])

@pytest.fixture
def lattice(recorder):
    return Lattice(handlers=[recorder])
""",
    )
    result.assert_outcomes(passed=1)


def test_span_exporter_captures_only_the_tests_own_spans(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's span_exporter holds the spans of its own run and none of another's."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
import pytest
from adk_lattice.testing import ScriptedResponse

@pytest.mark.parametrize("turn", [1, 2])
async def test_spans(fake_model, lattice_runner, span_exporter, turn):
    fake_model.script.append(ScriptedResponse.text("hi"))
    await lattice_runner.run("hi")
    names = [s.name for s in span_exporter.get_finished_spans()]
    assert names.count("invoke_agent agent") == 1
""",
    )
    result.assert_outcomes(passed=2)


def test_metric_reader_captures_only_the_tests_own_metrics(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's metric_reader holds the measurements of its own run only."""
    result = run_inner(
        pytester,
        monkeypatch,
        """
import pytest
from adk_lattice.testing import ScriptedResponse

@pytest.mark.parametrize("turn", [1, 2])
async def test_metrics(fake_model, lattice_runner, metric_reader, turn):
    fake_model.script.append(ScriptedResponse.text("hi", input_tokens=3, output_tokens=1))
    await lattice_runner.run("hi")
    points = metric_reader.points("gen_ai.client.operation.duration")
    assert sum(p.count for p in points) == 1
""",
    )
    result.assert_outcomes(passed=2)


def test_no_fixture_requested_means_no_telemetry_installed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the plugin loaded but no fixture requested, no tracer provider is installed."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_inner="""
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

def test_untouched():
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)

def test_installed_on_request(span_exporter):
    assert isinstance(trace.get_tracer_provider(), TracerProvider)
"""
    )
    pythonpath = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", pythonpath)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("-p", "pytest_asyncio.plugin", "-p", PLUGIN, "-p", "no:cacheprovider", "-q")
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=2)


def test_entry_point_names_the_plugin_module() -> None:
    """pyproject registers the plugin module under pytest11, so pytest loads it."""
    pyproject = tomllib.loads((SRC.parent / "pyproject.toml").read_text())
    entry = pyproject["project"]["entry-points"]["pytest11"]["adk_lattice"]
    assert entry == PLUGIN
