"""The class's votes on a page's question: one group of bars per choice, one bar per round shown."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ..i18n import t
from .style import BAR_PATTERNS, NORMAL, PALETTE, Style, figure


def rounds_figure(choices: Sequence[str], rounds: Sequence[Sequence[int]], answer: int | None, lang: str = "en",
                  style: Style = NORMAL, height: int | None = None, compact: bool = False) -> go.Figure:
    """Share of the class on each choice (0 to 100 %), one horizontal bar per round (round 1 above round 2),
    each labelled with its count; ``answer`` (once revealed) is named in bold with a tick. Horizontal, so that
    the choices' words fit a phone and a popover. A round without votes is drawn at 0. ``compact``: beside the QR
    code on a projector, the bars get the height: no title, the axis's unit in its ticks, the rounds' legend (with
    their counts) above the plot, ``compact_height`` px tall."""
    traces = []
    for r, counts in enumerate(rounds):
        total = sum(counts)
        share = [100.0 * c / total if total else 0.0 for c in counts]
        traces.append({"type": "bar", "orientation": "h", "y": list(choices), "x": share,
                       "name": t("poll.round_n", lang, n=r + 1, total=total),
                       "marker": {"color": PALETTE[r], "pattern": {"shape": BAR_PATTERNS[r]}},
                       "text": [str(c) for c in counts], "textposition": "outside", "cliponaxis": False,
                       "constraintext": "none",           # (the count at the font's size, not shrunk to the bar)
                       "textfont": {"size": style.font_size + (2 if compact else 0)},    # (read off a projector)
                       "hovertemplate": f"%{{y}}{t('punct.colon', lang)}%{{x:.0f}} % (%{{text}})<extra></extra>",
                       "showlegend": True})
    ticks = [f"<b>{c} ✓</b>" if i == answer else c for i, c in enumerate(choices)]
    rows = len(choices) * max(len(rounds), 1)
    xaxis = {"range": [0, 112], "ticksuffix": " %"}
    yaxis = {"tickvals": list(choices), "ticktext": ticks, "autorange": "reversed", "automargin": True}
    if compact:
        return figure(traces, "", "", "", style, compact_height(len(choices), len(rounds)), xaxis=xaxis, yaxis=yaxis,
                      layout={"barmode": "group", "showlegend": True, "margin": {"l": 10, "r": 20, "t": 34, "b": 30},
                              "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0}})
    return figure(traces, t("poll.figure_title", lang), t("poll.share_axis", lang), "", style,
                  height or 120 + 30 * rows, xaxis=xaxis, yaxis=yaxis,
                  layout={"barmode": "group", "showlegend": True, "margin": {"l": 10, "r": 20, "t": 40, "b": 80},
                          "legend": {"orientation": "h", "y": -0.35, "yanchor": "top", "x": 0}})


def compact_height(n_choices: int, n_rounds: int) -> int:
    """px of the compact chart: its axis, the rounds' legend and a bar of 28 px for one round, 20 px each for two."""
    return 40 + 30 + (28 if n_rounds < 2 else 20) * n_choices * max(n_rounds, 1)
