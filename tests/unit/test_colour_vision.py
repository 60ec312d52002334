"""Colour that survives colour-vision deficiency, measured on every lesson figure as it is drawn.

Each figure is built at its lesson's defaults, in the light and dark themes and in lecture mode; its series' colours
are read from the figure's own JSON (not from the palette constant), laid over the page's background (a colour
with transparency is seen mixed with it), passed through Machado, Oliveira & Fernandes' (2009) simulation of
deuteranopia, protanopia and tritanopia at full severity (colorspacious), and compared in CAM02-UCS (Luo, Cui &
Li 2006), where a difference of about 1 is just noticeable between two large patches side by side.

The threshold, ``MIN_DISTANCE`` = 10, is ten of those steps: Stone, Szafir & Setlur (2014) and Szafir (2018,
"Modeling color difference for visualization design") measured that thin lines and small marks need several times
the difference of large patches before most viewers tell two colours apart.

Two series of one colour are one family, told apart by their dash or marker by design (the KV-cache figure's totals
and their attention parts): those pairs are exempt from the colour distance, and must differ in another cue.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

colorspacious = pytest.importorskip("colorspacious")

from explorer.figures.dark import DARK_BACKGROUND, ON_DATA, dark  # noqa: E402
from explorer.figures.describe import plain  # noqa: E402
from explorer.figures.ink import rgba as _rgba  # noqa: E402
from explorer.figures.style import LECTURE, NORMAL, PALETTE, prepared  # noqa: E402
from explorer.lessons import LESSONS  # noqa: E402
from explorer.lessons.params import defaults  # noqa: E402

MIN_DISTANCE = 10.0
DEFICIENCIES = {"normal vision": None,
                **{name: {"name": "sRGB1+CVD", "cvd_type": kind, "severity": 100}
                   for name, kind in (("deuteranopia", "deuteranomaly"), ("protanopia", "protanomaly"),
                                      ("tritanopia", "tritanomaly"))}}


@cache
def _seen(rgb: tuple[float, float, float], deficiency: str) -> np.ndarray:
    """Where a colour (sRGB in [0, 1]) lands in CAM02-UCS for a viewer with ``deficiency``."""
    x = np.asarray(rgb)
    if DEFICIENCIES[deficiency] is not None:
        x = np.clip(colorspacious.cspace_convert(x, DEFICIENCIES[deficiency], "sRGB1"), 0, 1)
    return colorspacious.cspace_convert(x, "sRGB1", "CAM02-UCS")


def distance(a, b, deficiency: str) -> float:
    return float(np.linalg.norm(_seen(a, deficiency) - _seen(b, deficiency)))


def _over(colour: str, opacity: float, background: tuple) -> tuple[float, float, float]:
    r, g, b, alpha = _rgba(colour)
    a = alpha * opacity
    return tuple(round(a * c + (1 - a) * bg, 4) for c, bg in zip((r, g, b), background, strict=True))


def series(fig) -> list[dict]:
    """Each series a viewer tells apart in ``fig``'s legend: its name, colour as seen on the figure's background,
    its colour as written, and the cues besides colour (dash, marker symbol, bar pattern, lines or markers)."""
    out = fig.to_plotly_json()
    paper = out["layout"].get("plot_bgcolor") or "white"
    background = _rgba(DARK_BACKGROUND if paper in ("rgba(0,0,0,0)", DARK_BACKGROUND) else "#ffffff")[:3]
    found = []
    for trace in out["data"]:
        if trace["type"] not in ("scatter", "bar") or trace.get("meta") == ON_DATA \
                or trace.get("showlegend") is False:
            continue
        mode = trace.get("mode", "")
        part = "line" if trace["type"] == "scatter" and "lines" in mode else "marker"
        colour = (trace.get(part) or {}).get("color")
        if not isinstance(colour, str) or _rgba(colour) is None:
            continue                    # a colour per point (a colour scale, or bars named by their axis labels)
        marker = trace.get("marker") or {}
        cues = ((trace.get("line") or {}).get("dash") if "lines" in mode else None,
                marker.get("symbol") if "markers" in mode else None,
                (marker.get("pattern") or {}).get("shape") or None, trace["type"], "lines" in mode, "markers" in mode)
        found.append({"name": trace.get("name"), "colour": colour, "cues": cues,
                      "seen": _over(colour, trace.get("opacity", 1.0), background)})
    return found


def lesson_figures():
    for item in LESSONS:
        mod = item.module
        for name, spec in mod.figures(defaults(mod.PARAMS)).items():
            yield f"{item.name}.{name}", spec


FIGURES = dict(lesson_figures())


@cache
def drawn(name: str):
    """The figure ``name`` in English, built once per test process (each theme styles a copy)."""
    return FIGURES[name].figure("en")

THEMES = {
    "light": lambda fig: prepared(fig, NORMAL),
    "dark": lambda fig: dark(prepared(fig, NORMAL), "rgba(0,0,0,0)"),       # as a dark page draws it
    "lecture": lambda fig: prepared(fig, LECTURE),
}


def too_close(found: list[dict]) -> list[str]:
    problems = []
    for a, b in itertools.combinations(found, 2):
        if a["colour"] == b["colour"]:
            if a["cues"] == b["cues"]:
                problems.append(f"{a['name']!r} and {b['name']!r}: one colour and no other cue")
            continue
        for deficiency in DEFICIENCIES:
            d = distance(a["seen"], b["seen"], deficiency)
            if d < MIN_DISTANCE:
                problems.append(f"{a['name']!r} ({a['colour']}) and {b['name']!r} ({b['colour']}): "
                                f"ΔE {d:.1f} with {deficiency}")
    return problems


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", FIGURES)
def test_every_pair_of_series_stays_apart_under_each_colour_vision_deficiency(name, theme):
    fig = THEMES[theme](drawn(name))
    assert too_close(series(fig)) == []


def test_the_measurement_sees_the_old_palette_fail():
    """The check itself: matplotlib's tab10 red and green (the old second and third series) merge under
    deuteranopia, a pair of identical-looking lines without another cue is caught, and the palette passes."""
    from explorer.figures.style import figure, line_trace
    old = figure([line_trace([0, 1], [0, 1], "a", "#d62728", NORMAL), line_trace([0, 1], [1, 0], "b", "#2ca02c",
                                                                                   NORMAL)], "t", "x", "y")
    assert any("deuteranopia" in p for p in too_close(series(old)))
    twins = figure([line_trace([0, 1], [0, 1], "a", PALETTE[0], NORMAL),
                    line_trace([0, 1], [1, 0], "b", PALETTE[0], NORMAL)], "t", "x", "y")
    assert too_close(series(twins)) == ["'a' and 'b': one colour and no other cue"]
    rgb = [_rgba(c)[:3] for c in PALETTE]
    assert min(distance(a, b, d) for a, b in itertools.combinations(rgb, 2) for d in DEFICIENCIES) >= 10.9


@pytest.mark.parametrize("name", FIGURES)
def test_no_two_series_are_told_apart_by_colour_alone(name):
    """The second cue: two series of a figure differ in dash, marker symbol, bar pattern or kind of mark, so that
    a viewer who cannot see the colour difference (or a grey printout) still can."""
    found = series(prepared(drawn(name), NORMAL))
    same = [(a["name"], b["name"]) for a, b in itertools.combinations(found, 2) if a["cues"] == b["cues"]]
    assert same == []


def test_the_seventh_and_eighth_kernel_curves_still_differ_from_the_first():
    """The kernel comparison at its widest (three bandwidths and five other kernels): colours repeat past six,
    marker and dash do not."""
    from explorer.kernels import KERNELS
    from explorer.lessons import kernel_regression as kr
    values = {**defaults(kr.PARAMS), kr.COMPARE.key: [k for k in KERNELS if k != "gaussian"][:5],
              kr.OVERLAY.key: True}
    found = series(prepared(kr.figures(values)["fit"].figure("en"), NORMAL))
    curves = [s for s in found if s["cues"][4]]
    assert len(curves) >= 8
    assert len({s["cues"] for s in curves}) == len(curves)


DIVERGING = {"masking.grad_heatmap", "live_training.qk_circuit", "efficient_attention.rnn_state",
             "icl_bandwidth.direction_matrix"}


@pytest.mark.parametrize("name", sorted(DIVERGING & set(FIGURES)))
def test_a_diverging_map_shows_its_sign_on_the_colour_bar_and_in_the_hover(name):
    """A red-blue map: its colour bar runs from a negative value to its positive twin (the same depth of colour is
    the same size of either sign), the hover text gives the signed value, and its two ends stay apart under every
    deficiency."""
    from plotly.colors import get_colorscale, sample_colorscale
    fig = prepared(FIGURES[name].figure("en"), NORMAL)
    out = fig.to_plotly_json()
    maps = [t for t in out["data"] if t["type"] == "heatmap"]
    assert maps
    for trace in maps:
        axis = out["layout"].get("coloraxis", {}) if trace.get("coloraxis") else {}
        lo, hi = trace.get("zmin", axis.get("cmin")), trace.get("zmax", axis.get("cmax"))
        assert lo is not None and lo < 0 < hi and lo == pytest.approx(-hi)
        assert "%{z" in trace.get("hovertemplate", "")
        scale = trace.get("colorscale", axis.get("colorscale"))
        scale = get_colorscale(scale) if isinstance(scale, str) else scale
        ends = [_rgba(c)[:3] for c in sample_colorscale(scale, [0.0, 1.0])]
        assert all(distance(ends[0], ends[1], d) >= MIN_DISTANCE for d in DEFICIENCIES)


def _luminance(rgb) -> float:
    """WCAG 2's relative luminance, written out from the definition (not the app's ``contrast``)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _ratio(a, b) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def texts(fig) -> list[tuple[str, str, tuple, tuple]]:
    """Every text colour the figure sets, with what it is drawn on: (what, colour, its rgb, the background's rgb).
    A label with an opaque box of its own is read on the box; everything else on the page's background."""
    out = fig.to_plotly_json()
    layout = out["layout"]
    paper = layout.get("plot_bgcolor") or "white"
    page = _rgba(DARK_BACKGROUND if paper in ("rgba(0,0,0,0)", DARK_BACKGROUND) else "#ffffff")[:3]
    found = []

    def add(what, colour, on=None):
        if isinstance(colour, str) and _rgba(colour) is not None:
            box = _rgba(on) if isinstance(on, str) else None
            background = _over(on, 1.0, page) if box is not None and box[3] > 0.5 else page
            found.append((what, colour, _over(colour, 1.0, background), background))

    add("font", (layout.get("font") or {}).get("color"))
    add("title", ((layout.get("title") or {}).get("font") or {}).get("color"))
    add("legend", ((layout.get("legend") or {}).get("font") or {}).get("color"))
    for note in layout.get("annotations") or []:
        add(f"label {plain(note.get('text'))[:30]!r}", (note.get("font") or {}).get("color"), note.get("bgcolor"))
    for trace in out["data"]:
        if "text" in (trace.get("mode") or "") or trace.get("textfont"):
            add(f"text of {trace.get('name')!r}", (trace.get("textfont") or {}).get("color"))
    return found


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", FIGURES)
def test_every_text_the_figure_colours_reaches_wcag_aa(name, theme):
    """WCAG 1.4.3 (AA): 4.5:1 for the text the app colours inside a figure (its fonts, the labels of reference
    lines drawn in their line's colour, answer labels), on the background it is drawn on."""
    fig = THEMES[theme](drawn(name))
    low = [f"{what} {colour}: {_ratio(rgb, bg):.2f}" for what, colour, rgb, bg in texts(fig) if _ratio(rgb, bg) < 4.5]
    assert low == []


def test_the_contrast_check_sees_a_label_in_a_lines_own_colour():
    """The check itself: a reference line's label in the palette's vermillion (3.9:1 on white) would fail; the
    figure draws it darker, in the same hue."""
    from explorer.figures.style import Line, figure, line_trace
    fig = figure([line_trace([0, 1], [0, 1], "a", PALETTE[0], NORMAL)], "t", "x", "y",
                 lines=[Line(0.5, "collapse", "y", PALETTE[1], "dot")])
    (label,) = [item for item in texts(fig) if item[0].startswith("label")]
    assert _ratio(_rgba(PALETTE[1])[:3], (1.0, 1.0, 1.0)) < 4.5 <= _ratio(label[2], label[3])
