"""Position is a kernel: each way of telling a transformer where its tokens are puts a function of the offset i − j
on the attention logits, and that function decides what a head can find and how far past its training length it
still finds it.

Figures: the kernel the chosen scheme puts on i − j (``MAIN``: sinusoidal ``PE(i)·PE(j)``, RoPE's expected ``q·k``
with position interpolation's factor, ALiBi's bank of Laplace kernels beside the Kernel regression page's Laplace
kernel); the causal attention map each scheme gives from position alone; the experiment past the training length
(``explorer.training.extrapolation``: accuracy against length, per scheme, seeds 0-4) and the trained models'
attention maps at a longer length. Sentences: what each kernel does with distance, what each map's last row reads
off, the experiment's numbers, and the question "trained at 16, which schemes still work at 64?".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..attention import masked_weights
from ..figures import common
from ..figures.answer import mark_answer
from ..figures.style import NORMAL, Line, series_trace
from ..figures.style import figure as styled_figure
from ..i18n import Joined, Message, t
from ..kernels import get_kernel
from ..positional import SCHEMES, alibi_slopes, position_kernel, sinusoidal
from ..training import extrapolation as X
from ..training.model import POSITIONS
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param

SCHEME = Param("pos.scheme", "select", "rope", "ps.scheme", options=SCHEMES, names="scheme.")
D = Param("pos.d", "select_slider", 64, "ps.d", "ps.d_help", options=(8, 16, 32, 64, 128, 256))
BASE = Param("pos.base", "select_slider", 10000, "ps.base", "ps.base_help", options=(10, 100, 1000, 10000, 100000))
FACTOR = Param("pos.factor", "select_slider", 1, "ps.factor", "ps.factor_help", options=(1, 2, 4, 8))
HEADS = Param("pos.heads", "select_slider", 8, "ps.heads", "ps.heads_help", options=(1, 2, 4, 8, 16))
LENGTH = Param("pos.length", "select_slider", 32, "ps.length", "ps.length_help", options=(8, 16, 32, 64))
EVAL = Param("pos.eval", "select_slider", 64, "ps.eval", "ps.eval_help", options=X.LENGTHS)
PARAMS = (SCHEME, D, BASE, FACTOR, HEADS, LENGTH, EVAL)
FILE_NAME = ((SCHEME, "{}"), (D, "d{}"))
MAIN = "position_kernel"
FIGURES, figure = figure_table()
TRAIN_LENGTH = X.TRAIN_LENGTH
ASKED = 4 * X.TRAIN_LENGTH           # the length the question asks about: 4L
SHOWN = ("none", "sinusoidal", "rope", "alibi")      # the trained maps' panels (learned: only at 16, added there)


# --------------------------------------------------------------------------- the kernel on i - j
def _kernel(scheme: str, d: int, base: float, factor: float, heads: int, length: int) -> dict:
    offsets = np.arange(-(length - 1), length, dtype=float)
    values = position_kernel(scheme, offsets, d=d, base=base, n_heads=heads, factor=factor).numpy()
    out = {"scheme": scheme, "offsets": offsets, "values": values, "d": d, "factor": factor, "length": length}
    if scheme == "alibi":           # Kernel regression's Laplace kernel, exp(-|u|/h), at h = 1/m of the first head
        slopes = alibi_slopes(heads).numpy()
        profile = get_kernel("laplace").profile(torch.as_tensor(offsets * slopes[0])).numpy()
        out |= {"slopes": slopes, "laplace": profile}
    return out


@figure("position_kernel", _kernel)
def _draw_kernel(k: dict, lang: str):
    offsets, values, scheme = k["offsets"], k["values"], k["scheme"]
    if scheme == "alibi":
        series = {t("fig.pos_head", lang, head=h, m=m, width=1 / m): values[h] for h, m in enumerate(k["slopes"])}
    else:
        series = {t("fig.pos_kernel", lang): values}
    traces = [series_trace(offsets, y, name, i, NORMAL) for i, (name, y) in enumerate(series.items())]
    if scheme == "alibi":
        traces.append({"type": "scatter", "x": offsets, "y": k["laplace"], "mode": "lines",
                       "name": t("ps.laplace_curve", lang, h=1 / k["slopes"][0]),
                       "line": {"color": "#222222", "dash": "dot", "width": 3}})
    return styled_figure(traces, t(f"fig.pos_{scheme}_title", lang, d=k["d"], factor=k["factor"]),
                         t("fig.pos_offset", lang), t(f"fig.pos_{scheme}_y", lang), lines=[Line(0.0, "", "x")])


# --------------------------------------------------------------------------- attention from position alone
def position_logits(scheme: str, length: int, d: int, base: float, factor: float, heads: int) -> np.ndarray:
    """The (length, length) logits a head would have from position alone: sinusoidal ``PE(i)·PE(j)/√d``, RoPE's
    expected ``q·k/√d`` (``position_kernel``), ALiBi's first head ``-m_1·(i - j)`` (the causal mask is the caller's)."""
    i = np.arange(length)
    offset = (i[:, None] - i[None, :]).astype(float)
    if scheme == "sinusoidal":
        pe = sinusoidal(length, d, base, dtype=torch.float64).numpy()
        return pe @ pe.T / math.sqrt(d)
    if scheme == "rope":
        return position_kernel("rope", offset.ravel(), d=d, base=base, factor=factor).numpy().reshape(
            length, length) / math.sqrt(d)
    return -float(alibi_slopes(heads)[0]) * offset


def causal_weights(logits: np.ndarray) -> np.ndarray:
    """Softmax over the keys at or before each query (``explorer.attention.masked_weights``, masked before it)."""
    causal = torch.ones(logits.shape, dtype=torch.bool).tril()
    return masked_weights(torch.as_tensor(logits), causal).numpy()


def read_off(weights: np.ndarray) -> dict:
    """What the last row of a causal map says: its weight on the query itself, its mean distance back
    ``Σ_j w_j·(T-1-j)``, and the first distance back at which the weight rises again (None: it falls all the way)."""
    row = weights[-1][::-1]                       # distance 0, 1, 2, ... back
    distance = np.arange(len(row))
    rises = np.flatnonzero(np.diff(row) > 1e-12 * row.max())
    return {"self": float(row[0]), "reach": float(row @ distance), "rise": int(rises[0]) + 1 if rises.size else None}


def _maps(length: int, d: int, base: float, factor: float, heads: int) -> dict:
    weights = {s: causal_weights(position_logits(s, length, d, base, factor, heads)) for s in SCHEMES}
    return {"weights": weights, "read": {s: read_off(w) for s, w in weights.items()}, "length": length,
            "slope": float(alibi_slopes(heads)[0])}


@figure("position_maps", _maps)
def _draw_maps(m: dict, lang: str):
    titles = [t(f"scheme.{s}", lang) for s in SCHEMES]        # (each one's reach is in the sentences under it)
    return common.heatmap_grid([m["weights"][s] for s in SCHEMES], titles, None, None,
                               t("ps.maps_title", lang, length=m["length"]), t("fig.key_pos", lang),
                               t("fig.query_pos", lang), square=True, colorbar_title=t("fig.weight", lang), lang=lang)


# --------------------------------------------------------------------------- past the training length
def _lengths(asked: int) -> dict:
    settings, rows = X.load_table()
    return {"rows": rows, "summary": X.summary(rows), "settings": settings, "asked": asked}


@figure("lengths", _lengths, marks=("answer",))
def _draw_lengths(r: dict, lang: str):
    s, traces = r["summary"], []
    for i, scheme in enumerate(POSITIONS):
        points = [(n, s[scheme, n]) for n in X.LENGTHS if s[scheme, n]["mean"] is not None]
        x = [n for n, _ in points]
        y = [p["mean"] for _, p in points]
        traces.append(series_trace(x, y, t(f"scheme.{scheme}", lang), i, NORMAL, mode="lines+markers",
                                   error_y={"type": "data", "symmetric": False,
                                            "array": [p["high"] - p["mean"] for _, p in points],
                                            "arrayminus": [p["mean"] - p["low"] for _, p in points]}))
        if scheme == "learned":             # its one point, at 16, sits under the others': drawn larger and open
            traces[-1]["marker"].update(size=NORMAL.marker_size * 2.2, symbol="square-open")
    L = r["settings"]["train_length"]
    fig = styled_figure(traces, t("ps.lengths_title", lang, length=L), t("ps.eval_axis", lang),
                        t("ps.accuracy_axis", lang), log_x=True,
                        lines=[Line(L, t("ps.trained_at", lang, length=L), "x"),
                               Line(r["asked"], t("ps.asked_at", lang, length=r["asked"]), "x", dash="dot"),
                               Line(X.WORKS, t("ps.works_line", lang), "y", dash="dot"),
                               Line(1 / 16, t("ps.chance_line", lang), "y", color="#999999", dash="dot")],
                        xaxis={"tickvals": list(X.LENGTHS), "ticktext": [str(n) for n in X.LENGTHS]},
                        yaxis={"range": [0, 1.05]})
    if r.get("answer"):
        mark_answer(fig, r["asked"], s["rope", r["asked"]]["mean"], r["answer"], above=False)
    return fig


def _trained(length: int) -> dict:
    panels = [*(["learned"] if length <= X.TRAIN_LENGTH else []), *SHOWN]
    maps = {s: X.attention_maps(s, length) for s in panels}
    # each model's head that looks two back most within the training length: the one drawn
    head = {s: int(np.nanargmax(np.nanmean(m["on_back"][:, :X.TRAIN_LENGTH], axis=1))) for s, m in maps.items()}
    return {"length": length, "maps": maps, "head": head, "panels": panels}


@figure("trained_maps", _trained)
def _draw_trained(r: dict, lang: str):
    L, panels = X.TRAIN_LENGTH, r["panels"]
    mats = [r["maps"][s]["weights"][r["head"][s]] for s in panels]
    titles = [t("ps.trained_panel", lang, scheme=t(f"scheme.{s}", lang), head=r["head"][s]) for s in panels]
    edge = [] if r["length"] <= L else [[{"type": "scatter", "x": [-0.5, r["length"] - 0.5], "y": [L - 0.5, L - 0.5],
                                          "mode": "lines", "showlegend": False, "hoverinfo": "skip",
                                          "name": t("ps.edge_name", lang, length=L),
                                          "line": {"color": "white", "dash": "dot", "width": 2}}]] * len(panels)
    return common.heatmap_grid(mats, titles, None, None, t("ps.trained_title", lang, length=r["length"], back=X.BACK),
                               t("fig.key_pos", lang), t("fig.query_pos", lang), square=True, extra_traces=edge,
                               colorbar_title=t("fig.weight", lang), lang=lang)


def figures(values: Mapping[str, Any]) -> dict:
    """The page's figures at ``values``."""
    kernel = {k: values[p.key] for k, p in (("d", D), ("base", BASE), ("factor", FACTOR), ("heads", HEADS),
                                            ("length", LENGTH))}
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "position_kernel": {"scheme": values[SCHEME.key], **kernel},
        "position_maps": kernel, "lengths": {"asked": ASKED}, "trained_maps": {"length": values[EVAL.key]}})


# --------------------------------------------------------------------------- what the page says
@says("ps.kernel_sinusoidal", "ps.sin_ripples", "ps.sin_falls", "ps.kernel_rope", "ps.rope_plain",
      "ps.rope_stretched", "ps.kernel_alibi")
def kernel_text(k: Mapping) -> Say:
    """What the drawn kernel does with distance, in the drawn curve's own numbers."""
    offsets, values = k["offsets"], k["values"]
    if k["scheme"] == "alibi":
        widths = 1 / k["slopes"]
        return Say("ps.kernel_alibi", heads=len(widths), narrow=widths.min(), wide=widths.max(),
                   gap=float(np.abs(k["laplace"] - values[0]).max()))
    centre = float(values[offsets == 0][0])
    beyond = values[offsets > 0]                    # offsets 1, 2, ...
    if k["scheme"] == "sinusoidal":
        rises = np.flatnonzero(np.diff(beyond) > 0)
        if rises.size:                              # the first dip, then the highest point after it
            dip = int(rises[0])
            at = dip + int(np.argmax(beyond[dip:]))
            shape = Message("ps.sin_ripples", dip=float(beyond[dip]), dip_at=dip + 1, peak=float(beyond[at]),
                            at=at + 1, share=float(beyond[at]) / centre)
        else:
            shape = Message("ps.sin_falls", low=float(beyond[-1]), at=len(beyond))
        return Say("ps.kernel_sinusoidal", centre=centre, shape=shape)
    stretch = Message("ps.rope_plain") if k["factor"] == 1 else Message("ps.rope_stretched", factor=k["factor"])
    return Say("ps.kernel_rope", centre=centre, far=int(offsets[-1]), end=float(beyond[-1]),
               share=float(beyond[-1]) / centre, stretch=stretch)


@says("ps.map_line", "ps.map_falls", "ps.map_rises")
def map_text(m: Mapping) -> list[Say]:
    """Each scheme's map read off at its last row: the weight on the query itself, the mean distance back, and
    whether the weights fall with every step back or rise again somewhere."""
    out = []
    for s in SCHEMES:
        r = m["read"][s]
        shape = Message("ps.map_falls") if r["rise"] is None else Message("ps.map_rises", at=r["rise"])
        out.append(Say("ps.map_line", scheme=Message(f"scheme.{s}"), own=r["self"], reach=r["reach"], shape=shape))
    return out


@says("ps.alibi_ratio")
def alibi_text(m: Mapping) -> Say:
    """ALiBi's map row by row: every step back multiplies the weight by e^(-m), measured on the drawn last row."""
    row = m["weights"]["alibi"][-1][::-1]
    ratio = row[1:] / row[:-1] if len(row) > 1 else np.array([1.0])
    return Say("ps.alibi_ratio", m=m["slope"], ratio=float(np.mean(ratio)), spread=float(np.ptp(ratio)),
               width=1 / m["slope"], tail=1 / math.expm1(m["slope"]))


def accuracy(summary: Mapping, scheme: str, length: int) -> Message:
    """A scheme's accuracy at a length as the sentences quote it: mean, lowest and highest seed."""
    s = summary[scheme, length]
    if s["mean"] is None:
        return Message("ps.no_row", scheme=Message(f"scheme.{scheme}"), length=X.TRAIN_LENGTH)
    return Message("ps.acc", scheme=Message(f"scheme.{scheme}"), mean=s["mean"], low=s["low"], high=s["high"])


CHOICES = (("sinusoidal", "rope", "alibi"), ("rope", "alibi"), ("rope",), ())


@says("ps.predict_why")
def question(r: Mapping) -> Question:
    """"Trained at 16, which schemes still get 3 answers in 4 right at 64?", answered from the shipped table (means
    over seeds 0-4)."""
    rows, s = r["rows"], r["summary"]
    asked = r["asked"]
    works = X.working(rows, asked)
    if works not in CHOICES:
        raise ValueError(f"no choice says {works}")
    return Question("ps.length", Say("ps.predict_q", length=X.TRAIN_LENGTH, asked=asked, works=X.WORKS),
                    tuple(Say(f"ps.choice_{i}") for i in range(len(CHOICES))), CHOICES.index(works),
                    Say("ps.predict_why", asked=asked, rope=accuracy(s, "rope", asked),
                        others=Joined([accuracy(s, p, asked) for p in ("sinusoidal", "alibi", "none")]),
                        alibi_home=s["alibi", X.TRAIN_LENGTH]["mean"], length=X.TRAIN_LENGTH))


@says("ps.lengths_text", "ps.longest_all", "ps.longest_some")
def lengths_text(r: Mapping) -> Say:
    """The experiment at the training length and at the longest: who works where, in the table's numbers."""
    s, longest = r["summary"], X.LENGTHS[-1]
    home = Joined([Message(f"scheme.{p}") for p in X.working(r["rows"], X.TRAIN_LENGTH)])
    rows = [row for row in r["rows"] if row["position"] == "rope" and row["eval_length"] == longest]
    passing = sum(float(row["accuracy"]) >= X.WORKS for row in rows)
    far = Message("ps.longest_all" if passing == len(rows) else "ps.longest_some", length=longest, n=passing,
                  seeds=len(rows), acc=accuracy(s, "rope", longest))
    return Say("ps.lengths_text", length=X.TRAIN_LENGTH, last=X.TRAIN_LENGTH - 1, steps=r["settings"]["steps"],
               home=home, none=accuracy(s, "none", X.TRAIN_LENGTH), alibi=accuracy(s, "alibi", X.TRAIN_LENGTH), far=far)


@says("ps.trained_line", "ps.trained_home")
def trained_text(r: Mapping) -> list[Say]:
    """For each drawn model: the share of its drawn head's weight on the key two back, for the queries inside the
    training length and past it (inside only, at 16)."""
    out, L = [], X.TRAIN_LENGTH
    for s in r["panels"]:
        on = r["maps"][s]["on_back"][r["head"][s]]
        inside = float(np.nanmean(on[:L]))
        if r["length"] <= L:
            out.append(Say("ps.trained_home", scheme=Message(f"scheme.{s}"), inside=inside, back=X.BACK))
        else:
            out.append(Say("ps.trained_line", scheme=Message(f"scheme.{s}"), inside=inside,
                           past=float(np.nanmean(on[L:])), length=L, back=X.BACK))
    return out


@says("ps.notice", fixed="how each scheme enters the model: the software's definitions (explorer.training.model)")
def notice() -> Say:
    """Where each scheme enters the model, and which make the logit a function of i − j by construction."""
    return Say("ps.notice")


def sentences(values: Mapping[str, Any]) -> list[Say]:
    """Everything the page says at ``values``, in its order."""
    f = figures(values)
    k, m, r, tr = (f[name].data() for name in ("position_kernel", "position_maps", "lengths", "trained_maps"))
    return flatten([kernel_text(k), map_text(m), alibi_text(m), question(r).why, lengths_text(r), trained_text(tr),
                    notice()])
