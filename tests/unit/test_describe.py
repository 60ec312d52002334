"""A figure in words: the text a screen reader reads for each chart, and the caption of the HTML export."""

import functools
import re

import numpy as np
import pytest

from explorer.figures.describe import describe, description, plain, with_description
from explorer.figures.files import to_bytes
from explorer.figures.style import NORMAL, figure, line_trace, prepared
from explorer.lessons import LESSONS, kernel_regression
from explorer.lessons.params import defaults

FIGURES = {f"{item.name}.{name}": spec for item in LESSONS
           for name, spec in item.module.figures(defaults(item.module.PARAMS)).items()
           if item.name != "live_training" or name in ("training_loss", "head_importance", "qk_circuit")}


@functools.cache
def data_of(name: str) -> dict:
    """The figure's data, computed once per test process for both languages (a timing figure times its code anew at
    every call: 5 s apiece for Efficient attention's)."""
    return FIGURES[name].data()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", FIGURES)
def test_every_lesson_figure_is_described_in_the_pages_language(name, lang):
    fig = prepared(FIGURES[name].draw(data_of(name), lang), NORMAL, 58)
    text = describe(fig, lang)
    assert plain(fig.layout.title.text) in text                        # what it is
    named = [plain(tr.name) for tr in fig.data if tr.name and tr.showlegend is not False and tr.meta != "on-data"]
    for series in named[:6]:
        assert series in text                                          # each series, by its legend name
    assert "<" not in text.replace("< ", "").replace("<=", "")        # words, not markup
    if lang == "zh":
        assert re.search("[\u4e00-\u9fff]", text) and "Line chart" not in text and "Heatmap" not in text


@pytest.mark.parametrize("seed", range(5))
def test_the_loo_chart_is_said_to_be_lowest_at_the_bandwidth_the_lesson_selects(seed):
    """The one thing to notice on the LOO chart, read from the words: its lowest point is the drawn bandwidth next to
    the LOO-CV optimum the page marks (refined between grid points by explorer.bandwidth, not read from the
    figure): within one step of the chart's log-spaced grid."""
    values = defaults(kernel_regression.PARAMS, seed)
    spec = kernel_regression.figures(values)["loo_cv"]
    data = spec.data()
    text = describe(spec.figure("en"), "en")
    first = text.split(". ")[2]                         # kind, axes, then the first series
    lowest = float(re.search(r"lowest [^ ]+ at bandwidth h = ([0-9.e+-]+)", first).group(1))
    step = float(np.diff(np.log(data["bandwidths"]))[0])
    assert abs(np.log(lowest) - np.log(data["optimum"])) <= step


def test_a_heatmap_names_its_largest_cell_and_a_bar_chart_its_tallest_bar():
    z = np.zeros((3, 4))
    z[2, 1] = 5.0
    heat = figure([{"type": "heatmap", "z": z, "x": [10, 20, 30, 40], "y": [1, 2, 3], "name": "w"}], "Map", "key",
                  "query")
    assert "w: 3 rows by 4 columns, values from 0 to 5, the largest at key = 20, query = 3." in describe(heat)
    bars = figure([{"type": "bar", "x": ["a", "b", "c"], "y": [1.0, 7.0, 2.0], "name": "rise"}], "Bars", "head",
                  "loss")
    assert describe(bars).startswith("Bar chart: Bars.") and "rise: the tallest bar is b (7)." in describe(bars)
    many = figure([line_trace([0, 1], [i, i + 1], f"s{i}", "#000000", NORMAL) for i in range(9)], "Lines", "x", "y")
    assert describe(many).endswith("And 3 more series.")


def test_the_html_export_carries_the_description_beside_the_chart_as_text():
    """Words from outside (an uploaded file's column name) are shown as the characters they are."""
    fig = figure([line_trace([0, 1, 2], [2.0, 0.5, 1.0], "fit", "#0072B2", NORMAL)], "NW fit", "<b>x</b>",
                 "y <script>alert(1)</script>")
    fig = with_description(fig, "zh")
    page = to_bytes(fig, "html").decode()
    assert '<html lang="zh">' in page
    caption = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", page, re.S).group(1)
    assert "折线图" in caption and "&lt;script&gt;" not in caption and "alert(1)" in caption
    assert "<script>alert" not in page and description(fig) == describe(fig, "zh")
    assert page.index("<figcaption") > page.index("plotly")           # after the chart
