"""The package's layout holds: no import cycle anywhere in src/, no folder of over 15 modules.

Imports are read from the source, function-local ones included (they run too, only later);
imports under ``if TYPE_CHECKING:`` are left out, since they never run. ``from . import x``
counts as an import of the submodule ``x`` when ``x`` is one, as Python resolves it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "adk_lattice"
MAX_MODULES = 15


def _modules(root: Path = SRC) -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in (root / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _typing_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                skipped.update(id(n) for child in node.body for n in ast.walk(child))
    return skipped


def _imports(module: str, path: Path, is_package: bool, known: set[str]) -> Iterator[str]:
    tree = ast.parse(path.read_text("utf-8"))
    skipped = _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            if len(subs) < len(node.names) and base in known:
                yield base
            yield from subs


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports."""
    modules = _modules(root)
    known = set(modules)
    return {
        name: set(_imports(name, path, is_package, known)) - {name}
        for name, (path, is_package) in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle() -> None:
    """No group of modules in src/ imports itself round, at import time or in a function."""
    graph = import_graph()
    found = cycles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in found]
    assert not found, f"import cycles: {detail}"


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    """Every folder of the package holds at most 15 modules (its __init__ aside)."""
    crowded = {
        folder.relative_to(SRC).as_posix(): count
        for folder in [SRC / PACKAGE, *(p for p in (SRC / PACKAGE).rglob("*") if p.is_dir())]
        if (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_MODULES
    }
    assert not crowded, f"folders over {MAX_MODULES} modules (split them by family): {crowded}"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"__init__.py": "", "a.py": "from . import b\n", "b.py": "from .a import x\n"},
            [[f"{PACKAGE}.a", f"{PACKAGE}.b"]],
            id="module-level",
        ),
        pytest.param(
            {
                "__init__.py": "",
                "a.py": "from .b import y\n",
                "b.py": "def f():\n    from .a import x\n",
            },
            [[f"{PACKAGE}.a", f"{PACKAGE}.b"]],
            id="function-local",
        ),
        pytest.param(
            {
                "__init__.py": "",
                "a.py": "from .b import y\n",
                "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import x\n",
            },
            [],
            id="typing-only",
        ),
        pytest.param(
            {
                "__init__.py": "",
                "p/__init__.py": "from .q import z\n",
                "p/q.py": "from ..a import x\n",
                "a.py": "from .p import z\n",
            },
            [[f"{PACKAGE}.a", f"{PACKAGE}.p", f"{PACKAGE}.p.q"]],
            id="through-a-package",
        ),
    ],
)
def test_the_cycle_check_finds_what_python_would_run(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    """The walk finds a cycle at module level, inside a function and through a package's
    __init__, and ignores imports that only type checkers see."""
    _write(tmp_path, files)
    assert cycles(import_graph(tmp_path)) == expected
