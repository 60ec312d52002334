"""One look for every figure: fonts, line widths, colours, and a lecture (projector) mode."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
HEAT_SCALE = "Viridis"


@dataclass(frozen=True)
class Style:
    font_size: int = 13
    line_width: float = 2.0
    marker_size: float = 6.0
    height: int = 420

    def scaled(self, factor: float) -> Style:
        return Style(round(self.font_size * factor), self.line_width * factor,
                     self.marker_size * factor, round(self.height * factor))


NORMAL = Style()
LECTURE = Style(font_size=20, line_width=4.0, marker_size=10.0, height=560)


def finish(fig: go.Figure, title: str, x_title: str, y_title: str, style: Style = NORMAL,
           height: int | None = None) -> go.Figure:
    """Apply titles, axis labels and the shared style to a figure, in place, and return it."""
    fig.update_layout(
        title={"text": title, "x": 0.01, "xanchor": "left", "xref": "container"},
        font={"size": style.font_size},
        height=height or style.height,
        margin={"l": 60, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0.0},
        template="plotly_white",
    )
    fig.update_xaxes(title_text=x_title, exponentformat="power")
    fig.update_yaxes(title_text=y_title, exponentformat="power")
    if sum(t.type == "scatter" and t.showlegend is not False for t in fig.data) > 1:
        fig.update_layout(margin={"b": 110}, height=(height or style.height) + 50)
    return fig
