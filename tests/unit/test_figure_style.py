"""The figure helpers that keep a chart readable: title wrapping, log-axis ticks, the dark-theme copy."""

import math

import numpy as np
import pytest

from explorer.data import dataset_arrays
from explorer.figures.common import heatmap_grid
from explorer.figures.dark import ON_DATA, _is_dark, dark, luma
from explorer.figures.placement import DEFAULT_FONT, DEFAULT_HEIGHT, TITLE_LINE, TITLE_PAD, text_width, wrap_text
from explorer.figures.style import (
    LECTURE,
    NORMAL,
    figure,
    line_trace,
    log_ticks,
    panel_title_height,
    place_title,
    prepared,
    restyle,
)
from explorer.lessons import find_figure


@pytest.mark.parametrize("text, width", [
    ("Training loss (cross-entropy) and accuracy on held-out batches", 44),
    ("Per-head attention entropy (mean over queries) against training step", 30),
    ("每个头的注意力熵（对查询取平均）随训练步数的变化", 20),
    ("short", 44),
])
def test_wrapped_lines_fit_and_keep_every_word(text, width):
    lines = wrap_text(text, width)
    assert all(text_width(line) <= width for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert len(lines) <= math.ceil(text_width(text) / (width * 0.6))       # no line wasted on a short break


def test_a_wrapped_title_gets_room_above_the_plot_and_the_original_is_untouched():
    fig = figure([line_trace([1, 2], [1, 2], "a", "#1f77b4", style=NORMAL)],
                 "A title that is far longer than the chart it sits on is wide", "x", "y")
    wrapped = place_title(fig, 30)
    assert wrapped is not fig and "<br>" in wrapped.layout.title.text and "<br>" not in fig.layout.title.text
    lines = wrapped.layout.title.text.count("<br>") + 1
    title = wrapped.layout.title                       # hangs from the figure's top edge; the margin holds it
    assert title.yref == "container" and title.yanchor == "bottom"      # its first line hangs from y
    assert wrapped.layout.margin.t >= TITLE_PAD + lines * title.font.size * TITLE_LINE > fig.layout.margin.t - 1


def test_a_grid_title_ends_above_its_panel_titles_at_any_font_size():
    """The title's lines, then the panel titles, then the plot: the top margin holds them in that order, also after
    the lecture style made every font larger (in the browser and in exported files alike)."""
    mats = [np.eye(3), np.eye(3)]
    long_title = "Attention weights of 16 random queries (rows) over the keys (columns)"
    for fig in (heatmap_grid(mats, ["left panel", "right panel"], None, None, long_title, "key", "query"),
                restyle(heatmap_grid(mats, ["left", "right"], None, None, long_title, "key", "query"), LECTURE)):
        for width in (None, 30):
            placed = place_title(fig, width)
            lines = placed.layout.title.text.count("<br>") + 1
            title_bottom = TITLE_PAD + lines * placed.layout.title.font.size * TITLE_LINE
            panel_top = placed.layout.margin.t - panel_title_height(placed)
            assert panel_title_height(placed) > 0 and title_bottom < panel_top


@pytest.mark.parametrize("lo, hi", [(1e-18, 1.0), (1.0, 1024.0), (8.0, 1024.0), (1.0, 40.0), (0.01, 20.0)])
def test_log_axes_label_at_most_about_seven_ticks(lo, hi):
    ticks = log_ticks([{"x": np.geomspace(lo, hi, 30)}], "x")
    decades = math.log10(hi / lo)
    if decades < 2:                              # 1, 2, 5, 10, 20, ...: at most 3 per decade, in full
        assert len(ticks["tickvals"]) <= 3 * (math.ceil(decades) + 1)
        assert ticks["ticktext"] == [f"{v:g}" for v in ticks["tickvals"]]
        assert min(ticks["tickvals"]) <= lo * 1.5 and max(ticks["tickvals"]) >= hi / 1.5
    else:
        assert decades / ticks["dtick"] <= 7


@pytest.mark.parametrize("lo, hi", [(4.18176, 4.18778), (0.011, 0.013), (0.9, 1.1)])
def test_a_narrow_log_axis_shows_two_labelled_steps_around_its_data(lo, hi):
    """A loss at 4.18-4.19 on a log axis: plotly's own ticks were "4.18778, 4.18176..."; the axis spans the 1-2-5
    steps around the data, both labelled in full."""
    ticks = log_ticks([{"y": np.linspace(lo, hi, 5)}], "y")
    below, above = ticks["tickvals"]
    assert below <= lo and above >= hi and above / below <= 10 and ticks["ticktext"] == [f"{below:g}", f"{above:g}"]
    assert ticks["range"] == pytest.approx([math.log10(below), math.log10(above)])
    assert {round(v / 10 ** math.floor(math.log10(v)), 6) for v in (below, above)} <= {1.0, 2.0, 5.0}


def test_a_legend_below_the_plot_gets_a_bottom_margin_for_all_its_lines():
    from explorer.figures.style import LEGEND_ROW, place_legend

    traces = [line_trace([1, 2], [1, 2], f"a long legend entry number {i}", "#1f77b4", style=NORMAL) for i in range(5)]
    fig = figure(traces, "t", "x", "y")
    legend = fig.layout.legend
    assert sum(40 + 0.6 * NORMAL.font_size * text_width(t["name"]) for t in traces) > LEGEND_ROW
    assert legend.orientation == "v" and legend.yref == "container" and legend.y == 0
    assert fig.layout.margin.b >= 5 * NORMAL.font_size * 1.4 + 3 * NORMAL.font_size     # 5 lines + axis and title
    short = figure([line_trace([1, 2], [1, 2], name, "#1f77b4", style=NORMAL) for name in ("fit", "truth")], "t", "x",
                   "y")
    assert short.layout.legend.orientation == "h" and short.layout.margin.b < fig.layout.margin.b
    assert place_legend(fig).layout.margin.b == fig.layout.margin.b                 # placing twice changes nothing


def _figures():
    data = dataset_arrays("sine_mix", 200, 0.3, 0)
    yield find_figure("fit").figure("en", data=data, dataset="sine_mix", kernels=("gaussian",), bandwidths=(0.2,),
                                same_width=True)
    yield find_figure("masking").figure("en", length=8, d=16, kind="causal", valid=8, seed=0, wrong="post")
    yield find_figure("logit_std").figure("en", n=64, seed=0, d=128)


@pytest.mark.parametrize("fig", list(_figures()), ids=["fit", "masking", "logit_std"])
def test_the_dark_copy_changes_colours_only_and_leaves_nothing_dark_on_dark(fig):
    before = fig.to_plotly_json()
    out = dark(fig)
    assert fig.to_plotly_json() == before                    # the light figure (exports) is untouched
    assert _is_dark(out.layout.paper_bgcolor) and _is_dark(out.layout.plot_bgcolor)
    assert not _is_dark(out.layout.font.color)
    for a, b in zip(fig.data, out.data, strict=True):
        for field in ("x", "y", "z"):
            va, vb = getattr(a, field, None), getattr(b, field, None)
            if va is not None:
                np.testing.assert_array_equal(np.asarray(va, dtype=object), np.asarray(vb, dtype=object))
        for part in ("line", "marker") if b.meta != ON_DATA else ():        # marks on a heatmap's cells: below
            colour = getattr(getattr(b, part, None), "color", None)
            assert not (isinstance(colour, str) and _is_dark(colour)), (b.name, part, colour)
    for shape in out.layout.shapes:
        assert not _is_dark(shape.line.color)


@pytest.mark.parametrize("kind", ["causal", "padding", "causal + padding"])
def test_the_masked_cells_marks_stand_out_from_their_cells_in_the_dark_theme_too(kind):
    """The × on each masked cell of the gradient map is drawn on the cell, whose colour the dark theme keeps: in the
    dark copy every mark differs from the red-blue colour of its cell by at least 0.3 in luma (light grey marks on
    the near-white cells of a zero gradient were invisible, dark grey ones on a dark red cell nearly so), at
    sequence lengths 2, 8 and 32, every wrong mode, seeds 0-4."""

    from plotly.colors import sample_colorscale

    for length in (2, 8, 32):
        for wrong in ("post", "post_renorm", "multiply_logits"):
            for seed in range(5):
                fig = find_figure("grad_heatmap").figure("en", length=length, d=16, kind=kind,
                                                         valid=max(1, length * 2 // 3), seed=seed, wrong=wrong)
                cells, marks = dark(fig).data
                if marks.x is None or not len(marks.x):
                    continue
                z = np.asarray(cells.z, dtype=float)
                under = [(z[int(q), int(k)] - cells.zmin) / (cells.zmax - cells.zmin)
                         for k, q in zip(marks.x, marks.y, strict=True)]
                scale = [[float(v), c] for v, c in cells.colorscale]               # as plotly.js draws it
                inks = marks.marker.line.color                                   # an x-thin mark is its outline
                inks = [inks] * len(under) if isinstance(inks, str) else list(inks)
                for colour, ink in zip(sample_colorscale(scale, under), inks, strict=True):
                    assert abs(luma(colour) - luma(ink)) >= 0.3, (length, wrong, seed, colour, ink)


def test_luminance_threshold_against_known_colours():
    assert _is_dark("#000000") and _is_dark("#262730") and _is_dark("#555555")
    assert not any(_is_dark(c) for c in ("#ffffff", "#e0e0e0", "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"))


def test_placement_defaults_are_the_normal_style():
    """A layout without a font size or height is placed as plotly draws it: in the normal style's."""
    assert (DEFAULT_FONT, DEFAULT_HEIGHT) == (NORMAL.font_size, NORMAL.height)


@pytest.mark.parametrize("length", [2, 3, 12, 32])
def test_a_heatmap_of_positions_has_no_tick_between_two_cells(length):
    """A few cells at positions 0, 1, 2, ... are labelled one by one: no tick at 0.5 (plotly's own choice on three
    cells put them at -0.5, 0.5, 1.5, ...); many cells are left to plotly, whose ticks there are whole numbers."""
    fig = find_figure("grad_heatmap").figure("en", length=length, d=16, kind="causal", valid=length, seed=0,
                                             wrong="post")
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.dtick == (1 if length <= 12 else None), (length, axis.dtick)


def test_a_grid_says_its_x_title_once_under_all_columns_and_the_csv_still_names_it():
    """Two narrow panels side by side: each panel's own x title would run into its neighbour's (seen in lecture mode),
    so the title is one annotation centred under the grid, below the tick labels, with a bottom margin that holds it
    at any font size; a one-column grid keeps its axis title. The export's x column is headed by it either way."""
    from explorer.figures.files import figure_csv
    from explorer.figures.placement import X_TITLE

    mats = [np.eye(3), np.ones((3, 3)) / 3]
    for style in (NORMAL, LECTURE):
        wide = restyle(heatmap_grid(mats, ["a", "b"], None, None, "t", "key position", "query", style=style), style)
        axes = [k for k in wide.layout.to_plotly_json() if k.startswith("xaxis")]
        assert len(axes) == 2 and not any(wide.layout[k].title.text for k in axes)
        shared = [a for a in wide.layout.annotations if a.name == X_TITLE]
        assert len(shared) == 1 and shared[0].text == "key position" and shared[0].x == 0.5
        assert shared[0].yanchor == "top" and shared[0].yshift < -1.5 * style.font_size      # under the tick labels
        assert wide.layout.margin.b >= -shared[0].yshift + 1.3 * shared[0].font.size      # and the margin holds it
        assert figure_csv(wide).splitlines()[0] == "series,kind,key position,query,weight"
    tall = heatmap_grid(mats, ["a", "b"], None, None, "t", "key position", "query", cols=1)
    assert tall.layout.xaxis2.title.text == "key position" and not [a for a in tall.layout.annotations if a.name]


@pytest.mark.parametrize("d", [2, 4, 16, 128, 1024])
def test_the_legend_inside_a_plot_keeps_off_a_reference_line_and_its_label(d):
    """Scaling's main figure marks the chosen d with a labelled vertical line; at d = 2 the line and its "d = 2" label
    ran through the legend in the top-left corner. Wherever the legend goes inside the plot, the line is not in
    the quarter of the plot on that side (the legend box is about a third of the plot wide), nor its label, which
    runs right from the line, in the top-right corner."""
    from explorer.lessons import scaling

    spec = scaling.figures({**{p.key: p.default for p in scaling.PARAMS}, scaling.D.key: d})[scaling.MAIN]
    for style, height in ((NORMAL, None), (LECTURE, 450)):
        fig = prepared(spec.draw(spec.data(), "en"), style, 44, height)
        legend = fig.layout.legend
        if legend.yref != "paper":
            continue                                           # below the plot: nothing to keep off
        xs = [math.log10(v) for t in fig.data for v in t.x]
        lo, hi = min(xs), max(xs)
        u = (math.log10(d) - lo) / (hi - lo)
        if legend.xanchor == "left":
            assert u > 0.3, (d, legend.xanchor, legend.yanchor, u)
        elif legend.yanchor == "top":
            assert u < 0.5, (d, legend.xanchor, legend.yanchor, u)
        else:
            assert u < 0.7, (d, legend.xanchor, legend.yanchor, u)


@pytest.mark.parametrize("n", [1, 499, 500, 501, 2_345, 20_000])
def test_long_training_curves_are_thinned_evenly_with_both_ends_kept(n):
    """The loss and entropy curves draw at most MAX_POINTS steps of a long run (a tick resends them): evenly spaced
    over the whole run, the first and the latest step always among them."""
    import pandas as pd  # pandas: loaded where used, as in the module under test

    from explorer.figures.training import MAX_POINTS, _thin

    df = pd.DataFrame({"step": np.arange(1, n + 1), "loss": np.linspace(5, 0, n)})
    kept = _thin(df)["step"].to_numpy()
    assert len(kept) == min(n, MAX_POINTS)
    assert kept[0] == 1 and kept[-1] == n and np.all(np.diff(kept) > 0)
    if n > MAX_POINTS:           # no gap wider than an even spacing of the run, rounded up
        assert np.diff(kept).max() <= math.ceil((n - 1) / (MAX_POINTS - 1)) + 1
