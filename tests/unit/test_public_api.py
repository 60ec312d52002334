"""What the README and the documentation promise a notebook user: the names they give exist where they say, and
``import explorer`` gives its submodules without importing each one."""

import importlib
import re
import subprocess
import sys

import pytest

import explorer
from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAMES = sorted({name for path in DOCS
                for name in re.findall(r"`(explorer(?:\.[A-Za-z_][A-Za-z_0-9]*)+)", path.read_text())})


@pytest.mark.parametrize("dotted", NAMES)
def test_every_name_the_docs_give_exists_where_they_say(dotted):
    """A top-level submodule is reached from ``import explorer`` alone, as a notebook user types it; a module inside
    a subpackage (``explorer.ui.figure``) as ``import`` reaches it."""
    parts = dotted.split(".")
    obj = explorer
    for i, part in enumerate(parts[1:], start=2):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i]))
    assert obj is not None


def test_the_readme_names_the_bandwidth_functions_in_their_module():
    assert "explorer.bandwidth.select_bandwidth" in NAMES and "explorer.regression.select_bandwidth" not in NAMES


def test_import_explorer_loads_no_submodule_until_one_is_used():
    code = ("import sys, explorer; before = 'torch' in sys.modules or 'explorer.regression' in sys.modules; "
            "f = explorer.regression.nadaraya_watson; print(before, 'explorer.regression' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]
    with pytest.raises(AttributeError, match="no attribute 'regresion'"):
        explorer.regresion  # noqa: B018
    assert set(explorer.__all__) <= set(dir(explorer))
