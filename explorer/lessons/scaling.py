"""Scaling: why attention divides q·k by √d: the logits' spread grows like √d, and what it does to softmax.

Figures: the logit std against d, scaled and unscaled (``MAIN``); softmax's largest weight, entropy and Jacobian
norm against d; the regime map of the logits' scale; and a histogram of the logits at the chosen d.
Numbers: how the spread grows (the law the question asks for).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import scaling
from ..figures import common
from ..figures import scaling as sfig
from ..figures.answer import mark_answer
from ..i18n import Message, t
from ..scaling import scaling_summary
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param, seed_param

D_RANGE = tuple(2 ** i for i in range(11))
D = Param("scale.d", "select_slider", 128, "sc.d", options=D_RANGE)
N = Param("scale.n", "select_slider", 256, "sc.n", "sc.n_help", options=(32, 64, 128, 256, 512))
SEED = seed_param("scale.seed")
PARAMS = (D, N, SEED)
FILE_NAME = ((D, "d{}"),)
MAIN = "logit_std"
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
def _scaling(n: int, seed: int) -> dict:
    return {"n": n, "unscaled": scaling.logit_stats(list(D_RANGE), n, scaled=False, seed=seed),
            "scaled": scaling.logit_stats(list(D_RANGE), n, scaled=True, seed=seed),
            "regime": scaling.regime_vs_scale(np.logspace(-1, 2, 61), n, seed)}


@figure("logit_std", _scaling, marks=("d", "answer"))
def _draw_std(r: dict, lang: str):
    ds, d = r["unscaled"]["d"].to_numpy(), r["d"]
    unscaled, scaled = t("fig.unscaled", lang), t("fig.scaled", lang)
    sqrt_d, one = t("sc.theory_sqrt", lang), t("sc.theory_one", lang)
    fig = common.lines(ds, {unscaled: r["unscaled"]["logit_std"], scaled: r["scaled"]["logit_std"],
                            sqrt_d: np.sqrt(ds), one: np.ones_like(ds, dtype=float)},
                       t("sc.std_title", lang), t("sc.d_axis", lang), t("sc.std_axis", lang), log_x=True, log_y=True,
                       mode="lines+markers", dashes={sqrt_d: "dot", one: "dot"}, colors={sqrt_d: "#222", one: "#777"},
                       vlines=[(d, f"d = {d}")])
    if r.get("answer"):                   # the unscaled curve, where its growth reads best: half way up
        i = len(ds) // 2
        mark_answer(fig, float(ds[i]), float(r["unscaled"]["logit_std"].iloc[i]), r["answer"])
    return fig


def _samples(d: int, seed: int) -> dict:
    return {"d": d, "unscaled": scaling.logit_samples(d, 64, False, seed).numpy(),
            "scaled": scaling.logit_samples(d, 64, True, seed).numpy()}


@figure("logit_histogram", _samples)
def _draw_samples(s: dict, lang: str):
    return sfig.logit_histogram(s["unscaled"], s["scaled"], s["d"], lang=lang)


def _by_d(r: dict, column: str, title: str, axis: str, lang: str, height: int, hlines=()):
    """One table column against d, unscaled and scaled."""
    un, sc = r["unscaled"], r["scaled"]
    return common.lines(un["d"].to_numpy(), {t("sc.unscaled", lang): un[column], t("sc.scaled", lang): sc[column]},
                        t(title, lang), t("sc.d_axis", lang), t(axis, lang), log_x=True, mode="lines+markers",
                        hlines=list(hlines), height=height)


@figure("max_weight", _scaling)
def _draw_max_weight(r: dict, lang: str):
    return _by_d(r, "max_weight", "sc.maxw_title", "sc.maxw_axis", lang, 380)


@figure("softmax_entropy", _scaling)
def _draw_entropy(r: dict, lang: str):
    log_n = math.log(r["n"])
    return _by_d(r, "entropy", "sc.entropy_title", "sc.entropy_axis", lang, 380,
                 [(log_n, t("sc.log_n", lang, value=log_n))])


@figure("grad_norm", _scaling)
def _draw_grad_norm(r: dict, lang: str):
    return _by_d(r, "softmax_grad_norm", "sc.grad_title", "sc.grad_axis", lang, 420)


@figure("regime", _scaling)
def _draw_regime(r: dict, lang: str):
    return sfig.regime_figure(r["regime"], r["unscaled"], r["scaled"], lang=lang)


def figures(values: Mapping[str, Any]) -> dict:
    """The page's figures at ``values``."""
    d, seed = values[D.key], values[SEED.key]
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "logit_std": ({"n": values[N.key], "seed": seed}, {"d": d}),
        **{name: {"n": values[N.key], "seed": seed} for name in ("max_weight", "softmax_entropy", "grad_norm",
                                                                  "regime")},
        "logit_histogram": {"d": d, "seed": seed}})


# --------------------------------------------------------------------------- what the page says
def growth_law(d, std) -> int:
    """How std grows with d, as the nearest of (like d, like √d, not at all) to the log-log slope."""
    slope = float(np.polyfit(np.log(np.asarray(d, float)), np.log(np.asarray(std, float)), 1)[0])
    return int(np.argmin([abs(slope - 1.0), abs(slope - 0.5), abs(slope)]))


def std_at(tables: Mapping, d: int) -> float:
    """The unscaled logits' std at ``d`` (the tile under the question, once answered)."""
    return float(tables["unscaled"].set_index("d").loc[d, "logit_std"])


@says("sc.predict_why")
def question(tables: Mapping, d: int) -> Question:
    """"How does the unscaled logits' std grow with d?", answered by the log-log slope of the table drawn."""
    un = tables["unscaled"]
    return Question("sc.growth", Say("sc.predict_q"), tuple(Say(f"sc.law_{i}") for i in range(3)),
                    growth_law(un["d"], un["logit_std"]),
                    Say("sc.predict_why", d=d, std=std_at(tables, d), root=math.sqrt(d)))


@says("sc.grad_text", "sc.cross_from", "sc.cross_never", "sc.usual_more", "sc.usual_less", "sc.usual_mixed")
def grad_text(tables: Mapping) -> Say:
    """What the Jacobian norm does against d, unscaled and scaled (its peak, where it falls below the scaled one,
    the usual head sizes, the ranges of the scaled rows)."""
    un, sc = tables["unscaled"], tables["scaled"]
    summary = scaling_summary(un, sc)
    d_max = int(un["d"].iloc[-1])
    (u64, s64), (u128, s128) = summary["usual"][64], summary["usual"][128]
    more = [x for x, (u, s_) in summary["usual"].items() if u > s_]
    usual = "sc.usual_more" if len(more) == 2 else "sc.usual_less" if not more else "sc.usual_mixed"
    return Say("sc.grad_text", inv_sqrt_n=1 / math.sqrt(tables["n"]), peak=summary["peak"], d_peak=summary["d_peak"],
               cross=Message("sc.cross_from", d_cross=summary["d_cross"]) if summary["d_cross"] else
               Message("sc.cross_never", d_max=d_max),
               usual=Message(usual, u64=u64, s64=s64, u128=u128, s128=s128, more_d=more[0] if more else "",
                             less_d=next((x for x in (64, 128) if x not in more), "")),
               ent_lo=summary["scaled_entropy"][0], ent_hi=summary["scaled_entropy"][1],
               mw_lo=summary["scaled_maxw"][0], mw_hi=summary["scaled_maxw"][1],
               ent_1=summary["unscaled_entropy"][0], ent_big=summary["unscaled_entropy"][1], d_max=d_max,
               g_last=summary["last"][0], g_last_sc=summary["last"][1])


@says("sc.notice", "sc.sharpen_from", "sc.sharpen_never")
def notice(tables: Mapping, d: int) -> Say:
    """What to notice: the std at d = 128 and scaled, where rows sharpen (on average: the max-weight figure draws
    the mean over rows), and the smallest and largest norm of the figure's own keys at the chosen d."""
    un, sc = tables["unscaled"], tables["scaled"]
    norms = un.set_index("d").loc[d, ["key_norm_min", "key_norm_max"]].astype(float).tolist()
    summary = scaling_summary(un, sc)
    sharpen = Message("sc.sharpen_from", d_half=summary["d_half"], mw=summary["mw_half"]) if summary["d_half"] \
        else Message("sc.sharpen_never", d_max=int(un["d"].iloc[-1]))
    return Say("sc.notice", std128=std_at(tables, 128), lo=summary["scaled_std"][0], hi=summary["scaled_std"][1],
               sharpen=sharpen, mw_lo=summary["scaled_maxw"][0], mw_hi=summary["scaled_maxw"][1], d=d,
               kmin=norms[0], kmax=norms[1], sqrt_d=math.sqrt(d))


def sentences(values: Mapping[str, Any]) -> list[Say]:
    """Everything the page says at ``values``, in its order."""
    d = values[D.key]
    tables = figures(values)["logit_std"].data()
    return flatten([question(tables, d).why, grad_text(tables), notice(tables, d)])
