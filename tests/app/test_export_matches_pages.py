"""The headless lecture set is the pages' figures: each exported figure, built in the normal style, carries
the same traces as the chart its page draws at its defaults."""

import json

import numpy as np
import pytest

from explorer.export import lecture_figures
from tests.app.helpers import _decode, assert_clean, chart_data, page

# exported figure -> (page, the chart's key on that page); the kernel profiles are exported with every kernel
# compared, as the page draws them when "Compare with other kernels" holds the other five
ALL_KERNELS = {"nw.compare": ["boxcar", "constant", "epanechnikov", "triangular", "laplace"]}
ON_PAGE = {"fit_h0.2": ("kernel_regression", "fit"), "loo_cv": ("kernel_regression", "loo"),
           "kernel_shapes": ("kernel_regression", "shapes"), "weights_heatmap": ("attention_heatmap", "heatmap"),
           "sigma_sweep": ("attention_heatmap", "sweep"), "softmax_vs_kernel": ("softmax_kernel", "side_by_side"),
           "masking": ("masking", "pair"), "logit_std": ("scaling", "std"), "logit_histogram": ("scaling", "hist"),
           "efficient_zoo": ("efficient_attention", "efficient_zoo"),
           "efficient_error": ("efficient_attention", "efficient_error"),
           "online_logits": ("efficient_attention", "online_logits"),
           "online_running": ("efficient_attention", "online_running"),
           "rnn_state": ("efficient_attention", "rnn_state")}


@pytest.fixture(scope="module")
def exported():
    return {name: build for name, _, build in lecture_figures(seed=0, lang="en", lecture=False)}


def _as_array(value) -> np.ndarray:
    arr = np.asarray(value, dtype=object).ravel()
    try:
        return np.array([np.nan if v is None else v for v in arr], dtype=float)
    except (TypeError, ValueError):
        return arr.astype(str)


def _same(a, b) -> None:
    fa, fb = _as_array(a), _as_array(b)
    if fa.dtype.kind == "f":
        # the page is sent float32 (explorer.ui.figure.single_precision), colour values under 1e-30 as 0
        np.testing.assert_allclose(fa, fb, rtol=1e-6, atol=1e-30, equal_nan=True)
    else:
        assert list(fa) == list(fb)


@pytest.mark.parametrize("name", sorted(ON_PAGE))
def test_exported_figure_has_the_traces_of_the_page_chart(name, exported):
    page_name, key = ON_PAGE[name]
    at = page(page_name, timeout=120)
    if name == "kernel_shapes":
        at.session_state["nw.compare"] = ALL_KERNELS["nw.compare"]
        at.run()
    assert_clean(at)
    shown = chart_data(at, key)
    made = [{k: _decode(v) for k, v in trace.items()} for trace in json.loads(exported[name]().to_json())["data"]]
    assert [t.get("name") for t in shown] == [t.get("name") for t in made]
    for a, b in zip(shown, made, strict=True):
        for axis in ("x", "y", "z"):
            assert (a.get(axis) is None) == (b.get(axis) is None), axis
            if a.get(axis) is not None:
                _same(a[axis], b[axis])


def test_every_lesson_has_a_page_that_draws_it():
    """Each lesson of LESSONS has its page script, and that script imports its own lesson module and frames itself
    with lesson_page (so what the export writes is what that page draws)."""
    import ast

    from explorer.lessons import LESSONS
    from tests.conftest import ROOT

    for item in LESSONS:
        tree = ast.parse((ROOT / "pages" / f"{item.name}.py").read_text())
        imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert ("explorer.lessons", item.name) in imported, item.name
        calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert "lesson_page" in calls, item.name
