"""Generic figure builders shared by the pages: heatmaps, heatmap grids, line charts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .style import HEAT_SCALE, NORMAL, Line, Style, figure, grid_axes, line_trace, series_look

MAX_DISPLAY_CELLS = 250_000


def hover(names: Sequence[str], fields: Sequence[str], lang: str = "en") -> str:
    """Hover text in the figure's own language: one line per value, "name: value" with the language's colon
    (the names are the figure's own axis or colour-bar titles, so they are already translated); ``fields`` are
    plotly's references, e.g. ``"%{x:.3f}"``."""
    colon = t("punct.colon", lang)
    lines = [f"{name.replace('%', '%%')}{colon}{field}" for name, field in zip(names, fields, strict=True)]
    return "<br>".join(lines) + "<extra></extra>"


def _hover(x_title: str, y_title: str, z_title: str, lang: str = "en") -> str:
    return hover((x_title, y_title, z_title), ("%{x}", "%{y}", "%{z:.4g}"), lang)


def downsample(z: np.ndarray, rows: np.ndarray, cols: np.ndarray, max_cells: int = MAX_DISPLAY_CELLS):
    """Block-average a matrix (and its axis coordinates) until it has at most ``max_cells`` cells.

    Returns ``(z, rows, cols, factor)``; ``factor`` is 1 when nothing was done. Only the picture is
    reduced: callers compute on the full matrix.
    """
    z = np.asarray(z, dtype=float)
    factor = 1
    while z.shape[0] * z.shape[1] > max_cells:
        factor *= 2
        m, n = (z.shape[0] // 2) * 2, (z.shape[1] // 2) * 2
        z = z[:m, :n].reshape(m // 2, 2, n // 2, 2).mean(axis=(1, 3))
        rows, cols = _pool1(rows), _pool1(cols)
    return z, rows, cols, factor


def _pool1(a: np.ndarray) -> np.ndarray:
    m = (len(a) // 2) * 2
    return np.asarray(a[:m], dtype=float).reshape(-1, 2).mean(axis=1)


def heatmap(z: np.ndarray, x: Sequence | None, y: Sequence | None, title: str, x_title: str, y_title: str,
            zmax: float | None = None, colorbar_title: str = "weight", style: Style = NORMAL,
            height: int | None = None, colorscale: str | Sequence = HEAT_SCALE, zmin: float = 0.0,
            reverse_y: bool = True, extra_traces: Sequence[dict] = (), lang: str = "en") -> go.Figure:
    """A single heatmap; colour scale from ``zmin`` (0 for weights) with a titled colour bar; hover text in
    ``lang``."""
    z = np.asarray(z, dtype=float)
    trace = {"type": "heatmap", "z": z, "x": x, "y": y, "zmin": zmin, "name": colorbar_title,
             "zmax": zmax if zmax is not None else float(np.nanmax(z)) or 1.0, "colorscale": colorscale,
             "colorbar": {"title": {"text": colorbar_title}},
             "hovertemplate": _hover(x_title, y_title, colorbar_title, lang)}
    fig = figure([trace, *extra_traces], title, x_title, y_title, style, height, reverse_y=reverse_y)
    # cells at positions 0, 1, 2, ...: a tick on each of a few (plotly puts some at 0.5, 1.5 on three cells)
    if x is None and z.shape[1] <= 12:
        fig.update_xaxes(dtick=1)
    if y is None and z.shape[0] <= 12:
        fig.update_yaxes(dtick=1)
    return fig


def heatmap_grid(mats: Sequence[np.ndarray], titles: Sequence[str], x: Sequence | None, y: Sequence | None,
                 title: str, x_title: str, y_title: str, cols: int | None = None,
                 zmax: float | None = None, colorbar_title: str = "weight", style: Style = NORMAL,
                 height: int | None = None, extra_traces: Sequence[Sequence[dict]] = (),
                 square: bool = False, lang: str = "en") -> go.Figure:
    """Small multiples on one shared colour scale (0 to the largest value of all panels).

    ``extra_traces[i]`` are drawn on panel i (their axis references are filled in); ``square``: cells are
    square (each panel's y unit tied to its x unit).
    """
    n = len(mats)
    cols = cols or n
    rows = -(-n // cols)
    zmax = zmax if zmax is not None else max(float(np.nanmax(m)) for m in mats) or 1.0   # all zero: scale 0..1
    height = height or max(300, 280 * rows)
    axes, annotations, refs = grid_axes(n, cols, x_title, y_title, titles, style, height=height)
    for i, (_, yr) in enumerate(refs):       # the panels share their rows: labelled once, left of each row's first
        if i % cols:                         # (a later panel's labels would sit on the panel before it)
            axes["yaxis" + yr[1:]]["showticklabels"] = False
    # cells at positions 0, 1, 2, ...: integer ticks (plotly's own put some at -0.5, 0.5, 1.5 on two cells, and a
    # panel's last label then runs into the next panel's first), every position on a few cells, every other on more
    for axis, cells, given in (("xaxis", max(np.shape(m)[1] for m in mats), x), ("yaxis", max(np.shape(m)[0] for m in
                                                                                            mats), y)):
        if given is None and cells <= 12:
            for xr, yr in refs:
                axes[axis + (xr if axis == "xaxis" else yr)[1:]].update(tick0=0, dtick=1 if cells <= 6 else 2)
    if square:
        for xr, yr in refs:
            axes["yaxis" + yr[1:]].update(scaleanchor=xr, constrain="domain")
            axes["xaxis" + xr[1:]].update(constrain="domain")
    traces = []
    for i, m in enumerate(mats):
        xr, yr = refs[i]
        traces.append({"type": "heatmap", "z": np.asarray(m, dtype=float), "x": x, "y": y, "coloraxis": "coloraxis",
                       "name": titles[i],
                       "xaxis": xr, "yaxis": yr, "hovertemplate": _hover(x_title, y_title, colorbar_title, lang)})
        for extra in (extra_traces[i] if i < len(extra_traces) else ()):
            traces.append({**extra, "xaxis": xr, "yaxis": yr})
    layout = {**axes, "annotations": annotations, "coloraxis": {"colorscale": HEAT_SCALE, "cmin": 0.0, "cmax": zmax,
                                                                "colorbar": {"title": {"text": colorbar_title}}}}
    # the panel titles are annotations in the layout, so the figure's title is placed above them as it is built
    return figure(traces, title, "", "", style, height, layout=layout)


def lines(x: Sequence, series: Mapping[str, Sequence], title: str, x_title: str, y_title: str,
          log_x: bool = False, log_y: bool = False, hlines: Sequence[tuple[float, str]] = (),
          vlines: Sequence[tuple[float, str]] = (), mode: str = "lines", style: Style = NORMAL,
          height: int | None = None, dashes: Mapping[str, str] | None = None,
          colors: Mapping[str, str] | None = None) -> go.Figure:
    """One line per series, with optional labelled horizontal/vertical reference lines."""
    looks = [series_look(i) for i in range(len(series))]
    traces = [line_trace(x, y, label, (colors or {}).get(label, look["color"]), style,
                         (dashes or {}).get(label, look["dash"]), mode, look["symbol"])
              for look, (label, y) in zip(looks, series.items(), strict=True)]
    refs = [Line(v, lab, "y", dash="dot") for v, lab in hlines] + [Line(v, lab, "x") for v, lab in vlines]
    return figure(traces, title, x_title, y_title, style, height, lines=refs, log_x=log_x, log_y=log_y)
