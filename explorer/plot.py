"""One-line figures for notebooks: the same styled plotly figures the lessons draw, keyword arguments only.

Each figure is a ``plotly.graph_objects.Figure``: show it by leaving it last in a cell, change it with plotly's own
methods, save it with ``fig.write_html`` or ``explorer.figures.files.to_bytes``. ``offline_html()`` makes the
figures of a notebook survive ``jupyter nbconvert --to html`` with the network off.

Examples
--------
>>> from explorer import plot
>>> fig = plot.fit(x=[0.0, 1.0, 2.0, 3.0], y=[0.0, 1.0, 0.0, 1.0], bandwidth=[0.3, 1.0])
>>> [trace.name for trace in fig.data]
['training points', 'h = 0.3', 'h = 1']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from . import lessons
from ._checks import integer_in
from .figures.common import heatmap, lines
from .figures.describe import with_description
from .figures.regression import fit_figure, kernel_shapes_figure
from .figures.style import LECTURE, restyle
from .figures.training import attention_maps_figure, entropy_figure
from .i18n import t
from .kernels import KERNELS
from .lessons.params import defaults
from .positional import alibi_slopes, position_kernel
from .regression import nadaraya_watson

__all__ = ["attention", "entropy", "fit", "heads", "kernels", "lesson", "offline_html", "positional"]

GRID_POINTS = 400              # points along x at which plot.fit draws each estimate


def _finish(fig: go.Figure, lang: str, lecture: bool) -> go.Figure:
    return with_description(restyle(fig, LECTURE) if lecture else fig, lang)


def fit(*, x, y, kernel: str | Sequence[str] = "gaussian", bandwidth: float | Sequence[float] = 0.5,
        true: Callable | None = None, title: str | None = None, lang: str = "en", lecture: bool = False) -> go.Figure:
    """Training points and the Nadaraya-Watson estimate, one line per kernel and bandwidth.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        The training data.
    kernel : str or sequence of str
        Kernel name(s) from ``explorer.kernels.KERNELS``.
    bandwidth : float or sequence of float
        One bandwidth h > 0 or several; every kernel is drawn at every bandwidth.
    true : callable, optional
        The noise-free function, drawn dashed (called on a numpy grid).
    title : str, optional
    lang : {"en", "zh"}
        The language of the legend and axis titles.
    lecture : bool
        Large type and thick lines (the dashboard's lecture mode).

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> import numpy as np
    >>> fig = fit(x=np.linspace(0, 6, 30), y=np.sin(np.linspace(0, 6, 30)), kernel=["gaussian", "boxcar"],
    ...           bandwidth=0.4, true=np.sin)
    >>> [trace.name for trace in fig.data]
    ['training points', 'true function', 'gaussian, h = 0.4', 'boxcar, h = 0.4']
    """
    x, y = np.asarray(x, dtype=float).reshape(-1), np.asarray(y, dtype=float).reshape(-1)
    kernels_ = [kernel] if isinstance(kernel, str) else list(kernel)
    bandwidths = list(np.atleast_1d(np.asarray(bandwidth, dtype=float)))
    grid = np.linspace(x.min(), x.max(), GRID_POINTS)
    digits = 3                        # a legend's bandwidths to three significant digits, more only where two
    while len({f"{h:.{digits}g}" for h in bandwidths}) < len(set(bandwidths)) and digits < 17:      # would read alike
        digits += 1
    estimates = {}
    for k in kernels_:
        for h in bandwidths:
            label = f"h = {h:.{digits}g}" if len(kernels_) == 1 else f"{k}, h = {h:.{digits}g}"
            estimates[label] = nadaraya_watson(grid, x, y, k, h).double().numpy()
    fig = fit_figure(x, y, grid, None if true is None else np.asarray(true(grid), dtype=float), estimates,
                     t("fig.nw_fit_title", lang) if title is None else title, lang=lang)
    return _finish(fig, lang, lecture)


def attention(*, weights, queries: Sequence | None = None, keys: Sequence | None = None,
              title: str | None = None, lang: str = "en", lecture: bool = False) -> go.Figure:
    """An attention matrix as a heatmap: one row per query, one column per key, colour from 0.

    Parameters
    ----------
    weights : array_like, shape (M, N)
        E.g. ``explorer.regression.nw_weights(...)``, or the weights of
        ``explorer.attention.dot_product_attention(...)`` (one head).
    queries, keys : sequence, optional
        Labels or positions of the rows and columns (default 0, 1, 2, ...).
    title : str, optional
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> from explorer.regression import nw_weights
    >>> fig = attention(weights=nw_weights([0.0, 1.0], [0.0, 0.5, 1.0], "gaussian", 0.5), keys=[0.0, 0.5, 1.0])
    >>> fig.data[0].type, fig.layout.xaxis.title.text
    ('heatmap', 'key')
    """
    z = np.asarray(weights.detach().cpu() if hasattr(weights, "detach") else weights, dtype=float)
    if z.ndim != 2:
        raise ValueError(f"weights must be a 2-dimensional (queries x keys) matrix, got shape {z.shape}.")
    title = t("fig.attention_title", lang) if title is None else title
    fig = heatmap(z, keys, queries, title, t("fig.key", lang), t("fig.query", lang),
                  colorbar_title=t("fig.weight", lang), lang=lang)
    return _finish(fig, lang, lecture)


def heads(*, trainer, lang: str = "en", lecture: bool = False) -> go.Figure:
    """Every head's attention map on the trainer's fixed held-out example (layers as rows, heads as columns).

    Parameters
    ----------
    trainer : explorer.training.Trainer
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> from explorer.training import Trainer
    >>> trainer = Trainer.for_task("induction", seed=0, n_layers=2, n_heads=2)
    >>> len(heads(trainer=trainer).data)             # 2 layers x 2 heads
    4
    """
    maps = [m.numpy() for m in trainer.attention_maps()]
    return _finish(attention_maps_figure(maps, lang=lang), lang, lecture)


def entropy(*, trainer, lang: str = "en", lecture: bool = False) -> go.Figure:
    """Each head's mean attention entropy (nats) against the training step, with the uniform ceiling.

    Parameters
    ----------
    trainer : explorer.training.Trainer
        One that has taken at least one step.
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> from explorer.training import Trainer
    >>> trainer = Trainer.for_task("induction", seed=0, n_layers=1, n_heads=2)
    >>> _ = trainer.step(3)
    >>> [trace.name for trace in entropy(trainer=trainer).data][:2]
    ['L0 H0', 'L0 H1']
    """
    import pandas as pd  # pandas: loaded when a training figure is drawn, as explorer.figures.training does

    if not trainer.history:
        raise ValueError("the trainer has no steps yet: call trainer.step(n) first.")
    cfg = trainer.config
    fig = entropy_figure(pd.DataFrame(trainer.history), cfg.n_layers, cfg.n_heads, trainer.task.entropy_ceiling(),
                         lang=lang)
    return _finish(fig, lang, lecture)


def kernels(*, names: Sequence[str] = tuple(KERNELS), lang: str = "en", lecture: bool = False) -> go.Figure:
    """The kernel profiles K(u) on u in [-3, 3].

    Parameters
    ----------
    names : sequence of str
        Kernel names (all six by default).
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> len(kernels(names=["gaussian", "epanechnikov"]).data)
    2
    """
    return _finish(kernel_shapes_figure(list(names), lang=lang), lang, lecture)


def positional(*, scheme: str, max_offset: int = 64, d: int = 64, base: float = 10000.0, n_heads: int = 8,
               factor: float = 1.0, lang: str = "en", lecture: bool = False) -> go.Figure:
    """Position as a kernel: what a position scheme makes of the offset i − j alone
    (``explorer.positional.position_kernel``), against the offset.

    Parameters
    ----------
    scheme : {"sinusoidal", "rope", "alibi"}
        Sinusoidal: ``PE(i)·PE(j)``, which oscillates and never decays. RoPE: the expected ``q·k`` of a query and key
        that are the same random vector, rotated to positions i and j (``factor`` > 1: position interpolation, the
        same curve wider). ALiBi: each head's factor ``exp(−m_h·|i − j|)`` on the softmax weights, a bank of Laplace
        kernels with bandwidths 1/m_h, one line per head.
    max_offset : int
        The offsets drawn: −max_offset to max_offset (1 to 100000).
    d, base : int, float
        The width (even) and base of the sinusoidal and RoPE frequencies.
    n_heads : int
        ALiBi's heads.
    factor : float
        RoPE's position interpolation factor.
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> fig = positional(scheme="alibi", n_heads=4, max_offset=8)
    >>> len(fig.data), float(fig.data[0].y[8]), fig.layout.xaxis.title.text      # (offset 0: a factor of 1)
    (4, 1.0, 'offset i − j (positions)')
    """
    max_offset = integer_in(max_offset, "max_offset", 1, 100_000)
    offsets = np.arange(-max_offset, max_offset + 1, dtype=float)
    values = position_kernel(scheme, offsets, d=d, base=base, n_heads=n_heads, factor=factor).numpy()
    if scheme == "alibi":
        series = {t("fig.pos_head", lang, head=h, m=m, width=1 / m): values[h]
                  for h, m in enumerate(alibi_slopes(n_heads).tolist())}
    else:
        series = {t("fig.pos_kernel", lang): values}
    fig = lines(offsets, series, t(f"fig.pos_{scheme}_title", lang, d=d, factor=factor), t("fig.pos_offset", lang),
                t(f"fig.pos_{scheme}_y", lang))
    return _finish(fig, lang, lecture)


def lesson(*, name: str, figure: str, settings: Mapping[str, Any] | None = None, lang: str = "en",
           lecture: bool = False) -> go.Figure:
    """A lesson's figure as its page draws it, at its default settings with ``settings`` changed.

    Parameters
    ----------
    name : str
        A lesson (``explorer.lessons.LESSONS``: kernel_regression, attention_heatmap, softmax_kernel, ...).
    figure : str
        One of the lesson's figures (``explorer.lessons.<name>.FIGURES``).
    settings : mapping, optional
        The page's controls that differ from their defaults, by key (``[p.key for p in
        explorer.lessons.<name>.PARAMS]``, the names a page's link uses, e.g. ``"scale.d"``); an unknown key or a
        value out of range is a ``ValueError`` saying what is allowed.
    lang : {"en", "zh"}
    lecture : bool

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> fig = lesson(name="scaling", figure="logit_std", settings={"scale.d": 256})
    >>> fig.layout.xaxis.title.text
    'head dimension d (log scale)'
    """
    module = lessons.lesson(name).module if name in {x.name for x in lessons.LESSONS} else None
    if module is None:
        raise ValueError(f"name must be one of {', '.join(x.name for x in lessons.LESSONS)}; got {name!r}.")
    params = {p.key: p for p in module.PARAMS}
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(params))
    if unknown:
        raise ValueError(f"{name} has no setting {', '.join(unknown)}; its settings are {', '.join(params)}.")
    if figure not in module.FIGURES:
        raise ValueError(f"figure must be one of {', '.join(module.FIGURES)} for {name}; got {figure!r}.")
    values = {**defaults(module.PARAMS), **{k: _checked(params[k], v) for k, v in settings.items()}}
    specs = module.figures(values)
    if figure not in specs:
        raise ValueError(f"{name}'s figure {figure!r} is not drawn at these settings (it is drawn at: "
                         f"{', '.join(specs)}).")
    return _finish(specs[figure].figure(lang), lang, lecture)


def _checked(param, value):
    """``value`` as the setting holds it, or a ``ValueError`` naming what the setting allows."""
    try:
        return param.check(value)
    except (TypeError, ValueError):
        if param.options is not None:
            shown = ", ".join(map(str, param.options[:8])) + (", ..." if len(param.options) > 8 else "")
            allowed = f"one of {shown} ({len(param.options)} values)"
        elif param.kind == "toggle":
            allowed = "True or False"
        else:
            allowed = f"a number from {param.lo:g} to {param.hi:g}"
        raise ValueError(f"{param.key} must be {allowed}; got {value!r}.") from None


def offline_html() -> str:
    """Make this notebook's figures show in ``jupyter nbconvert --to html`` with the network off.

    Sets plotly's default renderer to ``"plotly_mimetype+notebook"``: each figure carries plotly's own MIME type
    (what JupyterLab and VS Code draw) and an HTML version, and plotly.js (about 4.7 MB) is written once into the
    notebook, so the converted page needs no CDN. Colab keeps its own renderer. Call it once, before the first
    figure.

    Returns
    -------
    str
        The renderer now in use.

    Examples
    --------
    >>> import plotly.io as pio
    >>> before = pio.renderers.default
    >>> offline_html() in ("plotly_mimetype+notebook", "colab")
    True
    >>> pio.renderers.default = before
    """
    if "colab" not in str(pio.renderers.default):
        pio.renderers.default = "plotly_mimetype+notebook"
    return pio.renderers.default
