"""The dark version of a figure: Streamlit's dark background, light text, and every near-black ink lightened.

Pages draw it when the viewer's theme is dark (``explorer.ui.figure``); an export is light unless asked.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import style
from .ink import luma, readable
from .ink import rgba as _rgba

DARK_BACKGROUND = "#0e1117"           # Streamlit's dark theme background
DARK_TEXT = "#fafafa"
DARK_AXIS = {"gridcolor": "#2c303a", "zerolinecolor": "#4a4f5a", "linecolor": "#8a8f99", "tickcolor": "#8a8f99"}
_LIGHT_INK = "#e0e0e0"                # what black and dark grey lines and labels become on the dark background
# A trace with this ``meta`` is drawn on the data (marks on a heatmap's cells), not on the page: its ink stays
ON_DATA = "on-data"


def _is_dark(colour) -> bool:
    """Whether a colour is too dark to read on a dark background: luma under 0.2, or a grey under 0.45 (a mid grey
    reads on white, hardly on near-black; the palette's colours stay as they are). Anything that is not one
    colour (an array of values for a colour scale, None) is not dark.

    >>> _is_dark("#222"), _is_dark("rgba(90,90,90,0.55)"), _is_dark("#1f77b4"), _is_dark([0.1, 0.5])
    (True, True, False, False)
    """
    rgba = _rgba(colour)
    if rgba is None:
        return False
    r, g, b, _ = rgba
    light = luma(colour)
    return light < 0.2 or (max(r, g, b) - min(r, g, b) < 0.1 and light < 0.45)

def _lightened(colour):
    """What a colour becomes on a dark page: a dark one turns light grey (keeping its transparency), a list of
    colours each in turn; anything else is returned as it is."""
    if not isinstance(colour, str) and np.ndim(colour):
        items = list(np.ravel(np.asarray(colour, dtype=object)))
        return [_lightened(c) for c in items] if all(isinstance(c, str) for c in items) else colour
    if not _is_dark(colour):
        return colour
    alpha = _rgba(colour)[3]
    return _LIGHT_INK if alpha >= 1 else f"rgba(224,224,224,{alpha:g})"


def _lighten_colour(obj) -> None:
    """Set ``obj.color`` to its dark-page version when that differs (arrays of values are left alone)."""
    colour = getattr(obj, "color", None)
    if colour is not None:
        light = _lightened(colour)
        if light is not colour:
            obj.color = light


def dark(fig: go.Figure, background: str = DARK_BACKGROUND) -> go.Figure:
    """A copy of ``fig`` for a dark page: ``background`` (on the page: transparent, so the app's own shows),
    light text and axes, black or dark grey lines, markers, labels and reference lines turned light grey.
    Data, every other colour and the traces marked ``ON_DATA`` are unchanged."""
    out = go.Figure(fig, _validate=style.VALIDATE)
    out.layout.paper_bgcolor = out.layout.plot_bgcolor = background
    out.layout.font.color = DARK_TEXT
    if out.layout.title.font.color:
        out.layout.title.font.color = DARK_TEXT
    for axis in out.layout:
        if axis.startswith(("xaxis", "yaxis")):
            out.layout[axis].update(DARK_AXIS)
    inside = out.layout.legend.yref == "paper" and 0 <= (out.layout.legend.y or 0) <= 1
    out.layout.legend.bgcolor = "rgba(14,17,23,0.8)" if inside else "rgba(0,0,0,0)"
    for item in (*out.layout.annotations, *out.layout.shapes):
        if getattr(item, "bgcolor", None) is not None and not _is_dark(item.bgcolor):
            item.bgcolor = "rgba(14,17,23,0.85)"           # a label's light box becomes a dark one
        if getattr(item, "arrowcolor", None) is not None:
            item.arrowcolor = _lightened(item.arrowcolor)
        if getattr(item, "font", None) is not None and item.font.color is not None:
            box = _rgba(getattr(item, "bgcolor", None))          # a label's own box, when it has an opaque one
            on = item.bgcolor if box is not None and box[3] > 0.5 else DARK_BACKGROUND
            item.font.color = readable(_lightened(item.font.color), on)
        if getattr(item, "line", None) is not None:
            item.line.color = _lightened(item.line.color)
    for trace in out.data:
        for part in ("line", "marker") if trace.meta != ON_DATA else ():
            obj = getattr(trace, part, None)
            if obj is None:
                continue
            _lighten_colour(obj)
            outline = getattr(obj, "line", None) if part == "marker" else None     # a marker's outline
            if outline is not None:
                _lighten_colour(outline)
        if trace.type == "heatmap" and trace.colorbar is not None:
            trace.colorbar.outlinecolor = DARK_AXIS["linecolor"]
    return out
