"""Guards for choices made for speed: what the first page imports, and figures built without validation."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FIRST_PAGE_MODULES = [
    "explorer.device", "explorer.i18n", "explorer.kernels", "explorer.regression", "explorer.figures.regression",
    "explorer.ui.cache", "explorer.ui.controls", "explorer.ui.figure", "explorer.ui.layout", "explorer.ui.state",
    "explorer.ui.control", "explorer.ui.page", "explorer.lessons.kernel_regression",
]


def test_first_page_does_not_import_pandas():
    # pandas costs ~0.5 s of the cold start; the explorer package imports it where it is used
    code = ("import importlib, sys\n"
            f"for m in {FIRST_PAGE_MODULES!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m == 'pandas' or m.startswith('pandas.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout[:300]


def test_figures_are_validated_under_test():
    # pages skip plotly's validation for speed; the suite turns it on so misspelt properties fail here
    import pytest

    from explorer.figures import style

    assert style.VALIDATE
    with pytest.raises(ValueError, match="lin"):
        style.figure([{"type": "scatter", "x": [1], "y": [1], "lin": {"width": 2}}], "t", "x", "y")
