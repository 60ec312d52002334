"""The README is a front door and the documentation holds: the site builds with --strict, every Python block in the
README and under docs/ runs, and the public API that the reference shows is documented with examples."""

import dataclasses
import importlib
import inspect
import json
import os
import re
import subprocess
import sys

import pytest

import explorer
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_the_readme_is_a_front_door_of_at_most_150_lines_opening_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "run"], ["make", "test"]]
    for link in re.findall(r"\]\((docs/[^)#]+)", text):             # every file the README sends people to
        assert (ROOT / link).exists(), link


def blocks(path):
    return FENCE.findall(path.read_text())


@pytest.mark.parametrize("path", [p for p in PAGES if blocks(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(path, tmp_path, monkeypatch):
    """A page's blocks run in order in one namespace, as a reader pastes them into one notebook."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for i, code in enumerate(blocks(path)):
        exec(compile(code, f"{path.name} block {i + 1}", "exec"), namespace)


def test_the_block_runner_finds_blocks_and_fails_on_a_broken_one(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n```bash\nmake run\n```\n\n```python\nassert x == 2\n```\n")
    found = blocks(page)
    assert found == ["x = 1\n", "assert x == 2\n"]
    with pytest.raises(AssertionError):
        namespace: dict = {}
        for code in found:
            exec(code, namespace)


@pytest.mark.parametrize("notebook", sorted((ROOT / "docs" / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_the_gallery_is_committed_without_outputs_and_draws_its_figures_offline(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    assert "plot.offline_html()" in "".join(code[0]["source"])          # before the first figure


def test_the_site_builds_offline_with_strict(tmp_path):
    pytest.importorskip("mkdocs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    reference = (tmp_path / "site" / "reference" / "estimator" / "index.html").read_text()
    assert 'id="explorer.estimator.NadarayaWatson"' in reference           # generated from the docstrings
    gallery = tmp_path / "site" / "notebooks" / "03_training_and_testing_heads" / "index.html"
    assert "Trainer.for_task" in gallery.read_text()
    assert "fonts.googleapis" not in (tmp_path / "site" / "index.html").read_text()   # nothing fetched to read it


# ---------------------------------------------------------------------------------------------- the API reference
REFERENCED = sorted({m for page in (ROOT / "docs" / "reference").glob("*.md")
                     for m in re.findall(r"^::: (\S+)", page.read_text(), re.M)})
SECTIONS = {"Parameters": "Parameters\n----------", "Returns": "Returns\n-------", "Examples": "Examples\n--------"}


def public_names(module_name: str) -> dict:
    """What the reference shows of a module: its ``__all__``, else its own public functions and classes."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, o in vars(module).items() if not n.startswith("_") and (inspect.isfunction(o) or
                 inspect.isclass(o)) and o.__module__ == module_name]
    return {n: getattr(module, n) for n in names if inspect.isfunction(getattr(module, n))
            or inspect.isclass(getattr(module, n))}


def missing(obj) -> list[str]:
    doc = inspect.cleandoc(obj.__doc__) if obj.__doc__ else ""
    wanted = ["Examples"] if inspect.isclass(obj) else ["Parameters", "Returns", "Examples"]
    if inspect.isfunction(obj) and not [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]:
        wanted.remove("Parameters")                      # nothing to describe
    examples = doc.partition(SECTIONS["Examples"])[2]
    return [s for s in wanted if SECTIONS[s] not in doc or (s == "Examples" and ">>>" not in examples)]


def public_members(cls) -> dict:
    """The methods and properties a class defines itself (not inherited) whose names do not start with ``_``."""
    out = {}
    for name, member in vars(cls).items():
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if not name.startswith("_") and inspect.isfunction(function):
            out[name] = (function, isinstance(member, property))
    return out


def missing_member(function, is_property: bool) -> list[str]:
    """What a method's docstring lacks: Parameters (when it takes any), Returns (unless it returns None) and
    Examples; a property, Returns and Examples."""
    wanted = missing(function)
    if is_property or inspect.signature(function).return_annotation in (None, "None"):
        wanted = [s for s in wanted if s != ("Parameters" if is_property else "Returns")]
    return wanted


def undocumented_fields(cls) -> list[str]:
    """A dataclass's fields that its docstring's Parameters or Attributes section does not name."""
    if not dataclasses.is_dataclass(cls):
        return []
    doc = inspect.cleandoc(cls.__doc__ or "")
    sections = re.findall(r"^(?:Parameters|Attributes)\n-+\n(.*?)(?=^\w+\n-+\n|\Z)", doc, re.S | re.M)
    named = {n.strip() for line in re.findall(r"^([\w, ]+) :", "\n".join(sections), re.M) for n in line.split(",")}
    return [f.name for f in dataclasses.fields(cls) if f.name not in named]


@pytest.mark.parametrize("module", REFERENCED)
def test_every_public_name_in_the_reference_has_a_numpydoc_docstring_with_an_example(module):
    names = public_names(module)
    assert names
    assert {n: m for n, obj in names.items() if (m := missing(obj))} == {}


@pytest.mark.parametrize("module", REFERENCED)
def test_every_public_method_and_dataclass_field_of_the_reference_is_documented(module):
    """Methods and properties a class defines (Parameters, Returns, Examples as for functions), and every field of
    a dataclass named in its docstring's Parameters or Attributes."""
    gaps = {}
    for name, obj in public_names(module).items():
        if inspect.isclass(obj):
            for member, (function, is_property) in public_members(obj).items():
                if m := missing_member(function, is_property):
                    gaps[f"{name}.{member}"] = m
            if fields := undocumented_fields(obj):
                gaps[f"{name} fields"] = fields
    assert gaps == {}


def test_the_member_walker_finds_what_is_missing():
    @dataclasses.dataclass
    class Config:
        """A config.

        Parameters
        ----------
        width, depth : int
            Sizes.

        Examples
        --------
        >>> Config(1, 2, 3).width
        1
        """
        width: int
        depth: int
        name: str = ""

        def grow(self, by: int) -> int:
            """One line only."""
            return self.width + by

        @property
        def area(self) -> int:
            """The area.

            Returns
            -------
            int

            Examples
            --------
            >>> Config(2, 3).area
            6
            """
            return self.width * self.depth

    assert undocumented_fields(Config) == ["name"]
    members = public_members(Config)
    assert set(members) == {"grow", "area"}
    assert missing_member(*members["grow"]) == ["Parameters", "Returns", "Examples"]
    assert missing_member(*members["area"]) == []


# ------------------------------------------------------------------------------- names of the package that exist
CHECKED = [p for p in [*sorted((ROOT / "explorer").rglob("*.py")), ROOT / "README.md", *PAGES[1:],
                       *sorted((ROOT / "docs" / "notebooks").glob("*.ipynb")), *sorted((ROOT / "pages").glob("*.py")),
                       ROOT / "app.py"] if p.name != "references.py"]


def test_every_name_of_the_package_in_the_code_and_the_docs_names_something():
    from explorer.references import broken

    assert {str(p.relative_to(ROOT)): b for p in CHECKED if (b := broken(p.read_text()))} == {}


def test_the_site_build_warns_about_a_name_that_names_nothing(caplog):
    """The hook (docs/hooks.py) that makes ``mkdocs build --strict`` fail on a renamed function's old name."""
    import importlib.util
    import logging
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = SimpleNamespace(file=SimpleNamespace(src_path="reference/plot.md"))
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        kept = hooks.on_page_content("<p>see <code>explorer.attention.masked_weights</code> and "
                                     "<code>explorer.attention.attention</code>(q, k)</p>", page, None, None)
    assert "explorer.attention.attention" in kept
    assert [r.getMessage() for r in caplog.records if r.name.startswith("mkdocs")] == [
        "reference/plot.md: 'explorer.attention.attention' names nothing in the explorer package (renamed or removed?)"]


# Public submodules the reference leaves out: the lessons' figure builders (explorer.plot is their public face,
# explorer.export gives the file functions). (The direct path of the regression, with no public names, is the private
# explorer._streaming.)
UNREFERENCED = {"explorer.figures"}


def test_the_reference_covers_every_public_submodule_but_one_and_the_check_can_fail():
    assert {f"explorer.{m}" for m in explorer.__all__} - set(REFERENCED) == UNREFERENCED

    def bare(x):
        """One line."""

    assert missing(bare) == ["Parameters", "Returns", "Examples"]

    def told(x):
        """One line.

        Parameters
        ----------
        x : int

        Returns
        -------
        int

        Examples
        --------
        Only words, no example.
        """

    assert missing(told) == ["Examples"]
