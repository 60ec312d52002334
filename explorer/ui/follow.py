"""The main figure follows the thumb: while a viewer drags a lesson's principal control, the main figure redraws
in the browser from frames sent with it, with no round trip to the server per frame; on release the page's
control takes the value, and the rest of the page (and the link) follow on the rerun that starts.

    fit = show_spec(specs["fit"], main=True, follow=Follow(L.BANDWIDTH, lambda v: L.figures(v, data), values(L)))

The frames are the lesson's figure itself, computed and drawn at up to ``MAX_STEPS`` values of the control (its
ends, values spread between them, and the current one), so what is drawn during a drag is what the page draws at
that value. Each frame carries only what changes from one value to the next (a fit's curve and its legend entry,
a heatmap's colours, a marker). Two thumbs play them: a slider under the figure (plotly's own, at most one frame
per screen refresh; not in lecture mode, where the figure has no room to spare), and the page's own control,
whose value Streamlit shows while it is dragged (the nearest frame is played). A small component (``_JS``) does
the second, and sets the page's control when the first is released.

A frame that moves only lines is animated by plotly (15-30 ms in Chromium here). A frame that redraws heatmaps or
labels would take plotly 30-70 ms to draw (Masking's pair of 16 × 16 heatmaps is the slowest), more than a frame of
a drag: so once the figure is drawn, the component draws each such frame ahead, off screen, one per turn of the
browser's event loop, and keeps it as a picture (an SVG copy of plotly's drawing, without the slider). A drag lays
the frame's picture over the figure (about a millisecond); once the thumb rests, plotly draws that frame itself and
the picture goes (tests/e2e/test_follow.py checks that both drawings are the same, path by path). Frames/s during a
drag are measured by that test and by ``make bench``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import numpy as np
import streamlit as st

from ..figures.placement import axis_band, x_title
from ..lessons.base import Spec
from ..lessons.params import Param
from .control import ON_CHANGE, option_text, rerun_whole_page
from .internals import WEB_JSON

MAX_STEPS = 12          # frames per figure: ~12 values across the control's range, built once per server
FRAME_ROWS = 25         # a followed heatmap's frames hold at most this many rows (the release redraws every row)
FRAME_CELLS = 40_000    # a heatmap is followed when a frame holds at most this many cells (12 frames: ~2 MB sent)
SLIDER_BAND = 2.6      # the slider's height under the figure (rail, ticks, labels), in its font's size
# layout a frame leaves as the page drew it: the slider's own, and where the legend and margins are (a longer
# legend entry at another value may move the legend; during a drag it stays put, under the slider)
SKIPPED_LAYOUT = ("sliders", "meta", "template", "height", "width", "margin", "legend")


@dataclass(frozen=True)
class Follow:
    """Which setting a main figure follows: ``param`` (a slider or select slider of the page), ``specs_at`` (the
    lesson's ``figures`` at other settings: values → specs), ``values`` (the settings now) and, for a slider the
    page narrows (``draw(hi=...)``), its narrowed ends."""
    param: Param
    specs_at: Callable[[Mapping[str, Any]], Mapping[str, Spec]]
    values: Mapping[str, Any]
    lo: float | None = None
    hi: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def current(self) -> Any:
        return self.values[self.param.key]

    def grid(self) -> list:
        """The values the frames are drawn at, without the current one (so a move of the setting reuses them)."""
        return steps(self.param, self.lo, self.hi)

    def others(self) -> dict:
        """Every setting but the followed one: what the frames depend on."""
        return {k: v for k, v in self.values.items() if k != self.param.key}


def steps(param, lo=None, hi=None, most: int = MAX_STEPS) -> list:
    """Up to ``most`` of the values a control takes, evenly spaced by position, both ends included."""
    if param.options is not None:
        values = list(param.options)
    else:
        first, last = param.range(lo, hi)
        step = param.step or 1
        values = [first + i * step for i in range(round((last - first) / step) + 1)]
    if len(values) <= most:
        return values
    picks = np.unique(np.round(np.linspace(0, len(values) - 1, most)).astype(int))
    return [values[i] for i in picks]


def same(a, b) -> bool:
    """Equal, for figure properties (arrays compared by value, NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _shape(fig: dict) -> list:
    return [t.get("type", "scatter") for t in fig["data"]]


def varying(figs: Sequence[dict]) -> tuple[dict[int, list], list] | None:
    """What differs between figures (as dicts) drawn at several values: per trace, the properties that are not
    the same in all of them, and the layout's entries that are not; None when the figures' traces are not of
    one kind and number (frames can only change traces, not add them) or when nothing differs."""
    first, *rest = figs
    if any(_shape(f) != _shape(first) for f in rest):
        return None
    props: dict[int, set] = {i: set() for i in range(len(first["data"]))}
    layout: set = set()
    for fig in rest:
        for i, (t, b) in enumerate(zip(fig["data"], first["data"], strict=True)):
            props[i].update(k for k in t.keys() | b.keys() if not same(t.get(k), b.get(k)))
        layout.update(k for k in fig["layout"].keys() | first["layout"].keys()
                      if k not in SKIPPED_LAYOUT and not same(fig["layout"].get(k), first["layout"].get(k)))
    if not any(props.values()) and not layout:
        return None
    return {i: sorted(p) for i, p in props.items() if p}, sorted(layout)


def frame(fig: dict, value, changes: tuple[dict[int, list], list]) -> dict | None:
    """The frame of the figure drawn at ``value``: the changing properties of its changing traces and layout
    (``varying``); None when its traces are not those of the frames."""
    props, layout = changes
    if len(fig["data"]) <= max(props, default=-1):
        return None
    out = {"name": str(value), "traces": list(props),
           "data": [{"type": fig["data"][i].get("type", "scatter"), **{k: fig["data"][i].get(k) for k in keys}}
                    for i, keys in props.items()]}
    if layout:
        out["layout"] = {k: fig["layout"].get(k) for k in layout}
    return out


def slider(param_key: str, values: Sequence, texts: Sequence[str], dumps: Sequence[str], active: int,
           font_size: int, dark_page: bool, top: float, redraw: bool = True) -> dict:
    """Plotly's slider under the figure (below the x axis's title): one step per frame, each playing its frame at
    once, labelled with the value as the page's control writes it (the figure's legend or marks say the rest);
    ``top``: px from the plot's bottom edge to the slider (below the x axis's labels).
    ``redraw`` False: a frame moves the traces' data only (plotly animates lines 3-5 times faster that way), and the
    component redraws the whole figure (legend, labels) once the thumb rests. ``redraw`` True: the steps do
    nothing themselves and the component shows each frame: its picture drawn ahead or, until that is ready, a
    ``Plotly.react`` of it (skipping to the latest step when the thumb outruns the drawing)."""
    play = {"mode": "immediate", "frame": {"duration": 0, "redraw": redraw}, "transition": {"duration": 0}}
    colours = {"bgcolor": "#3a3f4b", "activebgcolor": "#6b7280", "bordercolor": "#6b7280", "tickcolor": "#9ca3af",
               "font": {"color": "#e6e6e6", "size": font_size}} if dark_page else \
        {"font": {"size": font_size}}
    return {"name": f"follow:{param_key}", "active": active, "x": 0.0, "len": 1.0, "y": 0.0, "yanchor": "top",
            "pad": {"t": top, "b": 0, "l": 0, "r": 0}, "ticklen": 4, "currentvalue": {"visible": False},
            "steps": [{"label": text, "value": dump, **({"method": "animate", "args": [[str(v)], play]} if not redraw
                                                        else {"method": "skip", "args": []})}
                      for v, text, dump in zip(values, texts, dumps, strict=True)], **colours}


def attach(fig_dict: dict, follow: Follow, framed: Mapping[Any, dict], font_size: int, dark_page: bool,
           with_slider: bool = True) -> dict:
    """``fig_dict`` with its frames (value → frame, in the control's order) and, in ``layout.meta``, what the
    component needs to play them as the page's own control moves; with ``with_slider``, a slider under the figure
    too, set at the current value (lecture mode has no room for one: there the page's control is the thumb)."""
    param = follow.param
    values = list(framed)
    texts = [option_text(param, v) for v in values]
    active = next(i for i, v in enumerate(values) if same(v, follow.current))
    out = dict(fig_dict)
    layout = dict(out["layout"])
    first = next(iter(framed.values()))
    quick = "layout" not in first and all(t["type"] == "scatter" for t in first["data"])
    if with_slider:
        font = (layout.get("font") or {}).get("size") or font_size
        top = axis_band(font, bool(x_title(layout))) + 0.7 * font
        layout["sliders"] = [slider(param.key, values, texts, [param.dump(v) for v in values], active, font_size,
                                    dark_page, top, redraw=not quick)]
        # a band for the slider between the axis's labels and a legend under them (style.place_legend), which
        # sits at the figure's bottom edge: the plot gives up the band's height, the figure keeps its own
        margin = dict(layout.get("margin") or {})
        margin["b"] = (margin.get("b") or top) + 0.7 * font + SLIDER_BAND * font_size + 12
        layout["margin"] = margin
        legend = layout.get("legend") or {}
        if legend.get("yref", "paper") == "paper" and (legend.get("y") or 0) < 0:     # a legend under the plot
            layout["legend"] = {**legend, "yref": "container", "y": 0, "yanchor": "bottom"}   # goes under it
    layout["meta"] = {"follow": param.key, "box": widget_class(param.key), "frames": [str(v) for v in values],
                      "labels": texts, "values": [float(v) for v in values], "redraw": not quick, "current": active}
    out["layout"], out["frames"] = layout, [framed[v] for v in values]
    return out


def widget_class(key: str) -> str:
    """The CSS class Streamlit gives the element of the widget with state key ``key``."""
    return "st-key-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


# ----------------------------------------------------------------------------- the browser's side
# Two thumbs play the frames: the slider under the figure (plotly's own; a release sets the page's control) and the
# page's control itself, whose value label Streamlit updates while it is dragged (the nearest frame is played; the
# control sends its value on release as always). A frame that moved only the data is followed by a whole redraw
# (legend, labels) once the thumb rests. The code: explorer/ui/web/follow.mjs.
_released = st.components.v2.component(
    "explorer_follow", js=(files("explorer.ui") / "web" / "follow.mjs").read_text(encoding="utf-8"))


def component_key(param_key: str) -> str:
    return "follow-" + param_key.replace(".", "-")


def take_value(param: Param, raw) -> bool:
    """Set ``param`` to the value a released slider step names (its link spelling) and run what its move always
    runs (``control.ON_CHANGE``); False when it names none (the step is the page's own, so only a changed page could
    send one)."""
    try:
        value = param.parse(str(raw))
    except (TypeError, ValueError):
        return False
    st.session_state[param.key] = value
    callback = ON_CHANGE.get(param)
    if callback is not None:
        callback()
    return True


def listen(follow: Follow) -> None:
    """Mount the component that sets the followed setting when the figure's slider is released."""
    param = follow.param
    key = component_key(param.key)

    def released():
        result = st.session_state.get(key)
        raw = result.get("value") if isinstance(result, Mapping) else getattr(result, "value", None)
        if raw is not None and take_value(param, raw):
            rerun_whole_page()          # the page's own slider (outside the figure's part) shows the new value
    _released(key=key, data={"key": param.key, "internals": WEB_JSON}, on_value_change=released, height=0)
