"""Where a figure's title and legend go, worked out on plain dicts (a layout and its traces): the figures are
assembled as dicts (``style.figure``) and placed before plotly builds them, and ``style.place_title`` /
``style.place_legend`` apply the same results to a built Figure. Pixel sizes as ``style`` draws them; a text's
width counts a CJK character as two Latin letters."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..i18n import text_width

DEFAULT_FONT = 13       # px: the font size and the figure height plotly draws when a layout sets none
DEFAULT_HEIGHT = 420    # (style.NORMAL's; tests/unit/test_figure_style.py checks they agree)


def wrap_text(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` units: breaks at spaces, and anywhere inside CJK text (which has none)."""
    lines, line = [], ""
    for token in _tokens(text):
        if line and text_width(line + token) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    return [*lines, line.rstrip()] if line.strip() else lines


def two_lines(text: str) -> str:
    """``text`` broken once, where its two lines come out most nearly equal in width (at a space, or inside CJK
    text): a rotated axis title that is longer than its plot, in two lines and never three.

    >>> two_lines("std of logits (log scale)")
    'std of logits<br>(log scale)'
    """
    tokens = _tokens(text)
    if len(tokens) < 2:
        return text
    cuts = range(1, len(tokens))
    parts = [("".join(tokens[:i]).rstrip(), "".join(tokens[i:]).lstrip()) for i in cuts]
    first, second = min(parts, key=lambda p: max(text_width(p[0]), text_width(p[1])))
    return f"{first}<br>{second}"


def _tokens(text: str) -> list[str]:
    out, word = [], ""
    for ch in text:
        if text_width(ch) == 2:
            if word:
                out.append(word)
                word = ""
            out.append(ch)
        elif ch == " ":
            out.append(word + " ")
            word = ""
        else:
            word += ch
    return [*out, word] if word else out


TITLE_PAD = 6           # px between the figure's top edge and its title
TITLE_LINE = 1.3        # a title line's height, in title font sizes


def _text(title) -> str:
    """A title's text, whether the layout spells it as a string or as ``{"text": …}``."""
    return title if isinstance(title, str) else (title or {}).get("text") or ""


def _size(part) -> float | None:
    return ((part or {}).get("font") or {}).get("size")


def deep_update(target: dict, update: dict) -> dict:
    """``target`` with ``update`` merged in, nested dicts key by key (as plotly's ``update`` merges properties)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_update(target[key], value)
        else:
            target[key] = value
    return target


def holds(target: dict, update: dict) -> bool:
    """Whether ``target`` already has every value of ``update`` (then applying it to a Figure changes nothing)."""
    return all(holds(target.get(k) or {}, v) if isinstance(v, dict) and isinstance(target.get(k, {}), dict)
               else target.get(k) == v for k, v in update.items())


def panel_titles_height(layout: dict) -> float:
    font = _size(layout) or DEFAULT_FONT
    panels = [a for a in layout.get("annotations") or () if a.get("yref") == "paper" and (a.get("y") or 0) >= 1
              and a.get("yanchor") == "bottom"]
    return max([(_size(a) or font) * 1.4 * (1 + str(a.get("text")).count("<br>")) for a in panels], default=0.0)


def title_placement(layout: dict, width: int | None = None) -> dict:
    """The layout update that ``place_title`` makes, worked out on a layout's dict."""
    title = layout.get("title")
    text = _text(title)
    font = _size(layout) or DEFAULT_FONT
    title_font = (_size(title) if isinstance(title, dict) else None) or round(font * 1.25)
    if text and "<br>" not in text and width and text_width(text) > width:
        lines = wrap_text(text, width)
        balanced = wrap_text(text, math.ceil(text_width(text) / len(lines)) + 4)      # lines of similar length
        text = "<br>".join(balanced if len(balanced) == len(lines) else lines)
    n_lines = text.count("<br>") + 1 if text else 0
    top = TITLE_PAD + n_lines * title_font * TITLE_LINE + (4 if n_lines else 0) + panel_titles_height(layout) + 2
    # plotly anchors a title's first line: with yanchor "bottom" its baseline sits at y and later lines hang below
    # (with "top", lines beyond the first climb above the figure's edge), so y puts the first line's top at the pad
    height = layout.get("height") or DEFAULT_HEIGHT
    return {"title": {"text": text, "yref": "container", "y": 1 - (TITLE_PAD + 0.95 * title_font) / height,
                      "yanchor": "bottom", "pad": {"t": 0, "b": 0}, "font": {"size": title_font}},
            "margin": {"t": max(round(top), 20)}}


def legend_rows(names: Sequence[str], font: float, width: float) -> int:
    """How many rows a horizontal legend of ``names`` takes in ``width`` px: plotly lays the entries (a 40 px
    sample plus the text) in a grid, as many columns as fit, each as wide as its widest entry."""
    entries = [40 + 0.6 * font * text_width(name) for name in names]
    for columns in range(len(entries), 0, -1):
        if sum(max(entries[j::columns]) for j in range(columns)) <= width:
            return math.ceil(len(entries) / columns)
    return len(entries)


X_TITLE = "x_title"      # the name of the annotation that titles a grid's x axes once, under all its panels


def x_title(layout: dict) -> str:
    """The figure's x-axis title: the first x axis's that says something, or a grid's shared one (``X_TITLE``)."""
    for key, axis in layout.items():
        if key.startswith("xaxis") and _text(axis.get("title")):
            return _text(axis.get("title"))
    return next((a.get("text") or "" for a in layout.get("annotations") or () if a.get("name") == X_TITLE), "")


def axis_band(font_size: float, has_x_title: bool) -> float:
    """px under the plot that the x axis's tick labels (and its title) take."""
    return font_size * (1.8 + (1.7 if has_x_title else 0)) + 12


def legend_placement(layout: dict, traces: Sequence[dict], width: float,
                     max_rows: int = 1) -> dict | None:
    """The layout update that ``place_legend`` makes (None: none), worked out on a layout's dict and its traces'
    (their ``name``, ``showlegend`` and ``type`` are read)."""
    legend = layout.get("legend") or {}
    y = legend.get("y")
    below = y == 0 if legend.get("yref") == "container" else (y is not None and y < 0)
    if not layout.get("showlegend") or not below:
        return None
    font = _size(legend) or _size(layout) or DEFAULT_FONT
    names = [t.get("name") for t in traces if t.get("name") and t.get("showlegend") is not False
             and t.get("type", "scatter") in ("scatter", "bar", "histogram")]
    if not names:
        return None
    packed = legend_rows(names, font, width)
    in_rows = packed <= max_rows
    rows = packed if in_rows else len(names)
    axis = axis_band(_size(layout) or DEFAULT_FONT, bool(x_title(layout)))
    return {"legend": {"orientation": "h" if in_rows else "v", "yref": "container", "y": 0, "yanchor": "bottom",
                       "x": 0, "xanchor": "left", "tracegroupgap": 0},
            "margin": {"b": round(axis + rows * font * 1.45 + 8)}}


def beside_colour_bars(fig) -> None:
    """Turn each colour bar's title to run up its right side: above the bar, plotly sets it a few px over the top
    tick's label (a weight's "1" sat under "weight"). Changes ``fig`` in place."""
    bars = [t.colorbar for t in fig.data if t.type == "heatmap" and t.colorbar is not None and t.showscale is not False]
    if "coloraxis" in fig.layout and fig.layout.coloraxis.colorbar is not None:
        bars.append(fig.layout.coloraxis.colorbar)
    for bar in bars:
        if bar.title.text:
            bar.title.side = "right"
