"""A figure as a file: PNG, SVG, self-contained HTML and CSV (the data behind it as one tidy table).

Below both the pages' export buttons (``explorer.ui.figure``) and the headless lecture export (``explorer.export``).
Plotly figures become PNG/SVG through kaleido, which drives a local Chrome/Chromium (``BROWSER_PATH``, or one
found on PATH). HTML embeds plotly.js, so the file opens offline.
"""

from __future__ import annotations

import csv
import functools
import html
import io
import os
import shutil
from pathlib import Path

import numpy as np

from .._checks import one_of
from ..outside import spreadsheet_cell
from .describe import describe, description, plain
from .placement import x_title

FORMATS = ("png", "svg", "html", "csv")
EXPORT_WIDTH = 1000          # CSS pixels; PNGs are rendered at twice this
MIME = {"png": "image/png", "svg": "image/svg+xml", "html": "text/html", "csv": "text/csv"}
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    """Path of a Chrome/Chromium for kaleido: ``BROWSER_PATH`` if set and present, else one on PATH.

    Returns
    -------
    str or None
        None where there is none (then PNG and SVG cannot be made here).

    Examples
    --------
    >>> browser = find_browser()
    >>> browser is None or Path(browser).exists()
    True
    """
    return _find_browser(os.environ.get("BROWSER_PATH"), os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _find_browser(path: str | None, _search_path: str) -> str | None:   # cached per environment
    if path and Path(path).exists():
        return path
    for name in _BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def image_formats_available(fig) -> bool:
    """Whether PNG/SVG can be made for this figure here (kaleido needs a browser).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    bool

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> image_formats_available(go.Figure()) == (find_browser() is not None)
    True
    """
    return find_browser() is not None


def figure_html(fig) -> str:
    """The figure as one offline HTML page: the chart, then its description in words (``describe``) beside it as
    the figure's caption, in the language it was drawn in.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    str

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> page = figure_html(go.Figure(go.Bar(x=["a", "b"], y=[1, 3]), layout={"title": {"text": "Votes"}}))
    >>> page.startswith("<!DOCTYPE html>"), "<title>Votes</title>" in page, "<figcaption" in page
    (True, True, True)
    """
    text, lang = description(fig) or describe(fig), description(fig, "lang") or "en"
    chart = fig.to_html(include_plotlyjs=True, full_html=False)
    return (f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}">\n<head><meta charset="utf-8">'
            f"<title>{html.escape(plain(fig.layout.title.text))}</title></head>\n<body>\n"
            f'<figure style="margin:0">\n{chart}\n<figcaption style="font:14px sans-serif;max-width:60em;'
            f'margin:0.5em 1em">{html.escape(text)}</figcaption>\n</figure>\n</body>\n</html>\n')


def to_bytes(fig, fmt: str, scale: float = 2.0) -> bytes:
    """The figure as ``fmt`` (one of ``FORMATS``).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    fmt : {"png", "svg", "csv", "html"}
        PNG and SVG need Chromium (``find_browser``); CSV and HTML do not.
    scale : float
        PNG only: pixels per layout pixel.

    Returns
    -------
    bytes

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> to_bytes(go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="line")), "csv").decode().splitlines()
    ['series,kind,x,y', 'line,scatter,1,3', 'line,scatter,2,4']
    """
    one_of(fmt, FORMATS, "format")
    if fmt == "csv":
        return figure_csv(fig).encode("utf-8")
    if fmt == "html":
        return figure_html(fig).encode("utf-8")
    browser = find_browser()
    if browser is None:
        raise ValueError("PNG and SVG export need Chrome or Chromium (set BROWSER_PATH to one); HTML and CSV "
                         "work without it.")
    os.environ.setdefault("BROWSER_PATH", browser)
    return fig.to_image(format=fmt, width=EXPORT_WIDTH, scale=scale if fmt == "png" else 1.0)


def figure_csv(fig) -> str:
    """The data behind a figure as one tidy table: a row per point (or per heatmap cell).

    Columns: ``series`` (the trace's name: its legend entry or panel title), ``kind``, then the x, y and (heatmaps)
    colour values, each headed by its axis or colour-bar title with its units (``x (input, arbitrary units)``,
    ``weight``; the colour column only when there is a heatmap). For a heatmap, x and y are the cell's column and
    row coordinates. Titles are written as the text they show (plotly's ``&lt;`` as ``<``); a text cell that a
    spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return first) starts with ``'``.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    str

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = go.Figure(go.Heatmap(z=[[0.25, 0.75]], colorbar={"title": {"text": "weight"}}))
    >>> figure_csv(fig).splitlines()                         # a row per cell; unnamed traces are numbered
    ['series,kind,x,y,weight', 'heatmap 1,heatmap,0,0,0.25', 'heatmap 1,heatmap,1,0,0.75']
    """
    out = io.StringIO()
    writer = csv.writer(out)
    has_z = any(t.type == "heatmap" for t in fig.data)
    writer.writerow(["series", "kind", *map(_fmt, _value_titles(fig)[:3 if has_z else 2])])
    for i, trace in enumerate(fig.data):
        name = _fmt(html.unescape(trace.name or f"{trace.type} {i + 1}"))
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=float)
            xs = np.arange(z.shape[1]) if trace.x is None else np.asarray(trace.x)
            ys = np.arange(z.shape[0]) if trace.y is None else np.asarray(trace.y)
            for r in range(z.shape[0]):
                for c in range(z.shape[1]):
                    writer.writerow([name, "heatmap", _fmt(xs[c]), _fmt(ys[r]), _fmt(z[r, c])])
        elif trace.type in ("scatter", "bar", "histogram"):
            xs = [] if trace.x is None else list(trace.x)
            ys = [] if trace.y is None else list(trace.y)
            if trace.type == "histogram":
                ys = [""] * len(xs)
            for x, y in zip(xs, ys, strict=False):
                if x is None and (y is None or y == ""):
                    continue                                  # legend-only traces
                writer.writerow([name, trace.type, _fmt(x), _fmt(y), *([""] if has_z else [])])
    return out.getvalue()


def _value_titles(fig) -> list[str]:
    """Headers of the x, y and colour columns: the first axis titles that say something, and the colour bar's."""
    def first(prefix: str, fallback: str) -> str:
        for key in sorted(k for k in fig.layout if k.startswith(prefix)):
            text = fig.layout[key].title.text
            if text:
                return html.unescape(text.replace("<br>", " "))
        return fallback

    colour = fig.layout.coloraxis.colorbar.title.text or next(
        (t.colorbar.title.text for t in fig.data if t.type == "heatmap" and t.colorbar.title.text), None)
    x = x_title(fig.layout.to_plotly_json()).replace("<br>", " ")
    return [html.unescape(x) or "x", first("yaxis", "y"), html.unescape(colour or "z")]


def _fmt(v) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else repr(float(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return spreadsheet_cell(str(v))
