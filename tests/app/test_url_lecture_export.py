"""Shareable links (URL round trip), bad link values, lecture mode, and export formats."""

import csv
import io
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.export import figure_csv, find_browser, to_bytes
from explorer.figures.common import heatmap
from explorer.figures.regression import fit_figure
from tests.app.helpers import ROOT, assert_clean

# page -> (URL values to open with, the session-state values they must produce)
LINKS = {
    "kernel_regression": ({"nw.bandwidth": "0.05", "nw.kernel": "laplace", "data.name": "d2l", "data.n": "60",
                           "nw.overlay": "1"},
                          {"nw.bandwidth": 0.05, "nw.kernel": "laplace", "data.name": "d2l", "data.n": 60,
                           "nw.overlay": True}),
    "attention_heatmap": ({"heat.n_queries": "250", "heat.sweep": "0.1,1", "nw.bandwidth": "10"},
                          {"heat.n_queries": 250, "heat.sweep": [0.1, 1.0], "nw.bandwidth": 10.0}),
    "softmax_kernel": ({"sk.d": "64", "sk.spread": "0.5", "sk.tau_sqrt_d": "0"},
                       {"sk.d": 64, "sk.spread": 0.5, "sk.tau_sqrt_d": False}),
    "masking": ({"mask.length": "12", "mask.kind": "padding", "mask.valid": "5", "mask.wrong": "multiply_logits"},
                {"mask.length": 12, "mask.kind": "padding", "mask.valid": 5, "mask.wrong": "multiply_logits"}),
    "scaling": ({"scale.d": "16", "scale.n": "64"}, {"scale.d": 16, "scale.n": 64}),
    "live_training": ({"train.task": "sort", "train.heads": "4", "train.lr": "0.001"},
                      {"train.task": "sort", "train.heads": 4, "train.lr": 0.001}),
    "efficient_attention": ({"ef.m": "256", "ef.kind": "positive", "ef.block": "50", "ef.step": "3"},
                            {"ef.m": 256, "ef.kind": "positive", "ef.block": 50, "ef.step": 3}),
    "icl_bandwidth": ({"ib.lipschitz": "4", "ib.noise": "0.3", "ib.n": "64"},
                      {"ib.lipschitz": 4.0, "ib.noise": 0.3, "ib.n": 64}),
}


def url_value(at, key):
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def open_with(name, params):
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("name", list(LINKS))
def test_a_link_restores_the_view_and_the_url_follows_the_controls(name):
    params, expected = LINKS[name]
    at = open_with(name, params)
    assert_clean(at)
    for key, value in expected.items():
        assert at.session_state[key] == value, key
    for key, raw in params.items():                     # the page writes its state back into the URL
        got = url_value(at, key)
        assert got == raw or float(got) == float(raw), key


@pytest.mark.parametrize("name, bad", [
    ("kernel_regression", {"nw.bandwidth": "0", "data.n": "abc", "nw.kernel": "epanechikov"}),
    ("masking", {"mask.length": "999", "mask.kind": "diagonal"}),
    ("live_training", {"train.lr": "1e9", "train.heads": "3", "train.mlp": "maybe"}),
    ("scaling", {"scale.d": "nan"}),
    ("efficient_attention", {"ef.m": "7", "ef.h": "0", "ef.kind": "laplace", "ef.step": "-1"}),
])
def test_bad_link_values_fall_back_to_defaults_with_a_notice(name, bad):
    default = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=120).run()
    at = open_with(name, bad)
    assert not at.exception and not at.error
    assert len(at.warning) >= 1 and "Ignored link values" in at.warning[0].value
    for key in bad:
        assert at.session_state[key] == default.session_state[key], key


@pytest.mark.parametrize("name", list(LINKS))
def test_lecture_mode_renders_every_page(name):
    at = open_with(name, {"lecture": "1", "predict": "0"})      # the figures themselves (questions: test_predictions)
    assert_clean(at)
    assert at.session_state["ui.lecture"] is True
    assert url_value(at, "lecture") == "1"
    from explorer.figures.style import NORMAL
    sizes = [json.loads(el.proto.spec)["layout"]["font"]["size"] for el in at.get("plotly_chart")]
    assert sizes and all(size >= 1.4 * NORMAL.font_size for size in sizes)          # every figure's text larger


def sample_figures():
    x = np.linspace(0, 1, 7)
    return [fit_figure(x, x ** 2, x, x, {"est": x * 0.5}),
            heatmap(np.arange(6.0).reshape(2, 3), [0.1, 0.2, 0.3], [1.0, 2.0], "t", "key", "query")]


def test_html_export_is_self_contained():
    for fig in sample_figures():
        html = to_bytes(fig, "html").decode()
        assert "<html" in html and "Plotly" in html
        assert 'src="http' not in html and "src='http" not in html


def test_csv_export_round_trips_to_the_figure_data():
    line, heat = sample_figures()
    rows = list(csv.DictReader(io.StringIO(to_bytes(line, "csv").decode())))
    x_col, y_col = line.layout.xaxis.title.text, line.layout.yaxis.title.text      # columns named by the axes
    assert list(rows[0]) == ["series", "kind", x_col, y_col]
    est = [r for r in rows if r["series"] == "est"]
    np.testing.assert_allclose([float(r[y_col]) for r in est], line.data[2].y)
    np.testing.assert_allclose([float(r[x_col]) for r in est], line.data[2].x)
    cells = list(csv.DictReader(io.StringIO(figure_csv(heat))))
    assert list(cells[0]) == ["series", "kind", "key", "query", "weight"] and len(cells) == 6
    z = np.array([float(r["weight"]) for r in cells]).reshape(2, 3)
    np.testing.assert_array_equal(z, heat.data[0].z)


def test_no_exported_table_has_an_unnamed_series_or_column():
    from explorer.export import lecture_figures

    for name, _, build in lecture_figures(0, "en", lecture=False):
        rows = list(csv.reader(io.StringIO(figure_csv(build()))))
        header, series = rows[0], {r[0] for r in rows[1:]}
        assert not {"x", "y", "z"} & set(header[2:]), (name, header)
        assert not any(s.startswith(("trace", "heatmap ", "scatter ")) for s in series), (name, series)


@pytest.mark.browser
@pytest.mark.skipif(find_browser() is None, reason="PNG/SVG export needs Chrome/Chromium")
def test_png_and_svg_exports_are_valid_files():
    fig = sample_figures()[0]
    assert to_bytes(fig, "png")[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.fromstring(to_bytes(fig, "svg"))
    assert root.tag.endswith("svg")


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="format must be one of"):
        to_bytes(sample_figures()[0], "pdf")


@pytest.mark.parametrize("name", list(LINKS))
def test_every_page_renders_in_chinese_and_lecture_mode(name):
    at = open_with(name, {"lang": "zh", "lecture": "1", "predict": "0"})
    assert_clean(at)
    assert at.session_state["ui.lang"] == "zh"
    title = at.title[0].value
    assert re.search(r"[\u4e00-\u9fff]", title), title
    assert url_value(at, "lang") == "zh"
    specs = " ".join(json.dumps(json.loads(el.proto.spec), ensure_ascii=False) for el in at.get("plotly_chart"))
    assert re.search(r"[\u4e00-\u9fff]", specs)                             # axis titles/legends translated


@pytest.mark.parametrize("query, title", [({}, "Kernel regression"), ({"lang": "zh", "lecture": "1"}, "核回归")])
def test_the_whole_app_runs_with_its_sidebar(query, title):
    """app.py draws the language and lecture widgets before the page runs: the page must not touch them."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert_clean(at)
    at.switch_page("pages/kernel_regression.py").run()
    assert_clean(at)
    assert at.title[0].value == title
    if not query:
        at.toggle(key="ui.lecture").set_value(True).run()
        assert_clean(at)
        assert at.session_state["ui.lecture"] is True
