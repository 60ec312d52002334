"""A figure in words: the text alternative a screen reader reads for a chart, and the HTML export writes beside it.

``describe(fig, lang)`` reads the figure itself (its title, axis titles and data), so the words follow the data
whatever the settings: what kind of chart it is, what its axes are, and for each series where it is lowest and
highest (a line), its largest cell (a heatmap) or its tallest bar. ``with_description`` keeps the text in the
figure's ``layout.meta`` (``DESCRIPTION``), where the page and the HTML export read it.
"""

from __future__ import annotations

import base64
import html
import re

import numpy as np

from ..i18n import t

DESCRIPTION = "description"      # the key of the text in a figure's layout.meta
MAX_SERIES = 6                   # series described one by one; the rest are counted


def plain(text) -> str:
    """A title or label as plain text: line breaks as spaces, tags dropped, entities read.

    Parameters
    ----------
    text : str or None

    Returns
    -------
    str

    Examples
    --------
    >>> plain("Logit std<br>at <i>d</i> = 64 &amp; up")
    'Logit std at d = 64 & up'
    """
    text = re.sub(r"<br\s*/?>", " ", str(text or ""))
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def short(title: str, default: str) -> str:
    """An axis title without its gloss in brackets ("x (input, arbitrary units)" -> "x"), to name a value by.

    Parameters
    ----------
    title : str
    default : str
        What to say when nothing is left.

    Returns
    -------
    str

    Examples
    --------
    >>> short("x (input, arbitrary units)", "x"), short("", "y")
    ('x', 'y')
    """
    name = re.split(r"\s*[(（=]", title, maxsplit=1)[0].strip()
    return name or default


def data_array(value):
    """A data array as numpy when a figure's dict holds it base64-encoded (``{"dtype", "bdata", "shape"}``, as
    ``Figure.to_dict`` writes it); anything else as it is.

    Parameters
    ----------
    value : dict, list or array

    Returns
    -------
    numpy.ndarray or the value unchanged

    Examples
    --------
    >>> import base64
    >>> encoded = {"dtype": "f8", "bdata": base64.b64encode(np.array([1.5, 2.5]).tobytes()).decode()}
    >>> data_array(encoded).tolist(), data_array([1, 2])
    ([1.5, 2.5], [1, 2])
    """
    if isinstance(value, dict) and "bdata" in value:
        shape = [int(n) for n in str(value.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape)
    return value


def _values(value) -> np.ndarray | None:
    value = data_array(value)
    if value is None or isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(value)
    except ValueError:                  # ragged
        return np.asarray(value, dtype=object)


def _number(value) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return plain(value)
    return f"{v:.3g}"


def _floats(values: np.ndarray) -> np.ndarray:
    """``values`` as floats, NaN where one is not a number (a label, None)."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        pass
    out = np.full(values.shape, np.nan)
    for i, v in np.ndenumerate(values):
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            pass
    return out


def _axis_title(layout: dict, axis: str) -> str:
    return plain(((layout.get(axis) or {}).get("title") or {}).get("text", ""))


def _line(trace: dict, lang: str, x_name: str) -> str | None:
    x, y = _values(trace.get("x")), _values(trace.get("y"))
    if x is None or y is None or not len(y):
        return None
    ys = _floats(np.ravel(y))
    if not np.isfinite(ys).any():
        return None
    xs = np.ravel(x)
    lo, hi = int(np.nanargmin(ys)), int(np.nanargmax(ys))
    return t("alt.series", lang, name=plain(trace.get("name")) or "—", low=_number(ys[lo]), low_x=_number(xs[lo]),
             high=_number(ys[hi]), high_x=_number(xs[hi]), x_name=x_name)


def _bar(trace: dict, lang: str) -> str | None:
    horizontal = trace.get("orientation") == "h"
    cats, vals = (_values(trace.get("y")), _values(trace.get("x"))) if horizontal else \
        (_values(trace.get("x")), _values(trace.get("y")))
    if cats is None or vals is None or not len(vals):
        return None
    v = _floats(np.ravel(vals))
    if not np.isfinite(v).any():
        return None
    top = int(np.nanargmax(v))
    return t("alt.bars", lang, name=plain(trace.get("name")) or "—", top=_number(np.ravel(cats)[top]),
             value=_number(v[top]))


def _heatmap(trace: dict, lang: str, x_name: str, y_name: str) -> str | None:
    z = _values(trace.get("z"))
    if z is None or z.ndim != 2 or not z.size:
        return None
    zf = _floats(z)
    if not np.isfinite(zf).any():
        return None
    row, col = np.unravel_index(int(np.nanargmax(zf)), zf.shape)
    x, y = _values(trace.get("x")), _values(trace.get("y"))
    at_x = _number(np.ravel(x)[col]) if x is not None and len(np.ravel(x)) == zf.shape[1] else str(col)
    at_y = _number(np.ravel(y)[row]) if y is not None and len(np.ravel(y)) == zf.shape[0] else str(row)
    return t("alt.heatmap", lang, name=plain(trace.get("name")) or "—", rows=zf.shape[0], cols=zf.shape[1],
             low=_number(np.nanmin(zf)), high=_number(np.nanmax(zf)), x=at_x, y=at_y, x_name=x_name, y_name=y_name)


def describe(fig, lang: str = "en") -> str:
    """The figure in a few sentences of ``lang``: its kind and title, its axes, then each series' extremes.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or dict
    lang : {"en", "zh"}

    Returns
    -------
    str

    Examples
    --------
    >>> from explorer.figures.style import figure, line_trace, NORMAL
    >>> fig = figure([line_trace([0.1, 0.2, 0.5], [3.0, 1.0, 2.0], "LOO error", "#0072B2", NORMAL)],
    ...              "Leave-one-out error", "h", "mean squared error")
    >>> for sentence in describe(fig).split(". "):
    ...     print(sentence)
    Line chart: Leave-one-out error
    Horizontal axis: h; vertical axis: mean squared error
    LOO error: lowest 1 at h = 0.2, highest 3 at h = 0.1.
    """
    out = fig if isinstance(fig, dict) else fig.to_plotly_json()
    layout, data = out.get("layout", {}), out.get("data", [])
    kinds = {trace.get("type", "scatter") for trace in data}
    kind = "heatmap" if "heatmap" in kinds else "bar" if kinds == {"bar"} else "line"
    parts = [t(f"alt.kind_{kind}", lang, title=plain((layout.get("title") or {}).get("text", "")))]
    x_title, y_title = _axis_title(layout, "xaxis"), _axis_title(layout, "yaxis")
    if x_title or y_title:
        parts.append(t("alt.axes", lang, x=x_title or "—", y=y_title or "—"))
    said, marked = [], []
    for trace in data:
        if trace.get("showlegend") is False or trace.get("meta") == "on-data":
            continue
        kind_of = trace.get("type", "scatter")
        text = _heatmap(trace, lang, short(x_title, "x"), short(y_title, "y")) if kind_of == "heatmap" else \
            _bar(trace, lang) if kind_of == "bar" else _line(trace, lang, short(x_title, "x"))
        if text:
            said.append(text)
        elif plain(trace.get("name")):          # a legend entry of a reference line (no data of its own)
            marked.append(plain(trace.get("name")))
    if len(said) > MAX_SERIES:
        said = [*said[:MAX_SERIES], t("alt.more", lang, n=len(said) - MAX_SERIES)]
    if marked:
        said.append(t("alt.marked", lang, lines=t("punct.sep", lang).join(marked)))
    return " ".join(parts + said)


def with_description(fig, lang: str):
    """``fig`` with its ``describe`` text kept in ``layout.meta`` (changed in place, and returned).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    lang : {"en", "zh"}

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = with_description(go.Figure(go.Bar(x=["a", "b"], y=[1, 3]), layout={"title": {"text": "Votes"}}), "en")
    >>> description(fig) == describe(fig, "en"), description(fig, "lang")
    (True, 'en')
    """
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    fig.layout.meta = {**meta, DESCRIPTION: describe(fig, lang), "lang": lang}
    return fig


def description(fig, key: str = DESCRIPTION) -> str:
    """The text ``with_description`` kept in ``fig`` (``key`` "lang": its language), or ''.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or dict
    key : str

    Returns
    -------
    str

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> description(go.Figure())
    ''
    """
    meta = fig.layout.meta if hasattr(fig, "layout") else (fig.get("layout") or {}).get("meta")
    return meta.get(key, "") if isinstance(meta, dict) else ""
