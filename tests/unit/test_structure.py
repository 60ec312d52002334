"""The shape of the code: no import runs in a circle, the export is headless, pages draw lessons.

The import graph is read from the source with ``ast`` (module-level and function-level imports alike), so a cycle
hidden inside a function counts too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "explorer"
# an import inside a function is allowed only to keep torch or pandas off the first page, and says so
# the last: the start-up thread loads the compute stack only when it runs
DEFERRABLE = ("torch", "pandas", "explorer.ui.warmup", "sklearn")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom | ast.Import, here: str, is_package: bool) -> list[str]:
    """The explorer modules an import statement names (``from .x import y`` may name module ``x.y``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = here if is_package else here.rsplit(".", 1)[0]
    for _ in range(node.level - 1):
        base = base.rsplit(".", 1)[0]
    target = f"{base}.{node.module}" if node.level and node.module else base if node.level else node.module
    return [target, *(f"{target}.{a.name}" for a in node.names)]


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the explorer modules it imports (anywhere in its source)."""
    files = {module_name(p, root.parent): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= {t for t in _resolve(node, name, path.name == "__init__.py") if t in files and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    pkg = tmp_path / "explorer"
    (pkg / "ui").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ui" / "__init__.py").write_text("")
    (pkg / "ui" / "a.py").write_text("from . import b\n")
    (pkg / "ui" / "b.py").write_text("def f():\n    from .a import g\n")      # hidden in a function: still one
    assert find_cycle(import_graph(pkg)) == ["explorer.ui.a", "explorer.ui.b", "explorer.ui.a"]
    (pkg / "ui" / "b.py").write_text("from .. import ui\n")                    # the package, not a module
    assert find_cycle(import_graph(pkg)) is None


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


def test_imports_inside_functions_only_defer_torch_pandas_or_the_warm_up_and_say_so():
    bad = []
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text().split("\n")
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else \
                        [f"{sub.module}.{a.name}" for a in sub.names]
                    line = lines[sub.lineno - 1]
                    deferred = all(any(n == d or n.startswith(d + ".") for d in DEFERRABLE) for n in names)
                    if getattr(sub, "level", 0) or not deferred or "#" not in line:
                        bad.append(f"{path.relative_to(ROOT)}:{sub.lineno}: {line.strip()}")
    assert bad == []


def test_the_export_imports_neither_streamlit_nor_the_ui():
    code = ("import sys, explorer.export as e; e.lecture_figures(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'streamlit' or m.startswith('explorer.ui')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "pages").glob("*.py")))
def test_a_page_draws_its_lesson_without_reaching_past_it(page):
    """A page script draws its lesson's figures (no figure builders of its own) and reads settings through its
    controls, not session state."""
    tree = ast.parse((ROOT / "pages" / page).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("explorer.figures") for m in imported), imported
    subscripts = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Subscript)
                  and ast.unparse(n.value) == "st.session_state"]
    assert subscripts == []


def test_no_module_of_the_package_or_a_page_is_over_450_lines():
    long = {str(p.relative_to(ROOT)): n for p in [*PACKAGE.rglob("*.py"), *(ROOT / "pages").glob("*.py")]
            if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}


def test_figure_names_are_unique_across_lessons():
    """A figure's name is its export file's name and how ``find_figure`` finds it."""
    from explorer.lessons import LESSONS

    names = [name for item in LESSONS for name in item.module.FIGURES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
