"""Attention learns its bandwidth: one softmax attention unit trained on in-context regression tasks of slope L
finds the Nadaraya-Watson window a statistician would choose for them (Collins et al., 2024).

Settings: the tasks' Lipschitz constant L, the label noise σ, the context size n, the seed. Figures: the learned
window against L beside the NW oracle and leave-one-out bandwidths (``MAIN``), softmax and linear attention's
in-context error against L, one task of the current setting with the trained unit's prediction, and the full
key-query matrix M learned on tasks that vary along one direction of an 8-dimensional sphere next to bbᵀ.
Numbers: the window's trend, its ratio to the oracle, where linear attention does better or worse, M's alignment
with the direction and its error against the best M = w·I.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .. import incontext, incontext_direction
from ..figures import common
from ..figures.answer import mark_answer
from ..figures.style import PALETTE
from ..i18n import t
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param, seed_param

LIPSCHITZ = incontext.LIPSCHITZ
L = Param("ib.lipschitz", "select_slider", 2.0, "ib.lipschitz", "ib.lipschitz_help", options=LIPSCHITZ, fmt="g")
NOISE = Param("ib.noise", "select_slider", 0.3, "ib.noise", "ib.noise_help", options=(0.0, 0.1, 0.3, 0.6, 1.0),
              fmt="g")
N = Param("ib.n", "select_slider", 32, "ib.n", "ib.n_help", options=(8, 16, 32, 64, 128))
SEED = seed_param("ib.seed")
PARAMS = (L, NOISE, N, SEED)
FILE_NAME = ((NOISE, "noise{}"), (N, "n{}"))
MAIN = "learned_window"
FIGURES, figure = figure_table()
NEAR = 1.25          # the learned window is "at" the oracle's when the two are within 25 % of each other
ALIGNED = 0.7        # M "has found the direction" from this alignment with bbᵀ (M = c·I scores 1/√8 ≈ 0.35)


# --------------------------------------------------------------------------- figures
_POINTS: dict[tuple, dict] = {}      # (L, σ, n, seed) → ``incontext.grid_point``, shared by the server's sessions
_KEEP = 2_000                         # rows kept (a few hundred bytes each); the oldest go first


def grid_point(lipschitz: float, noise: float, n: int, seed: int) -> dict:
    """One row of the sweep, trained once per server (the page trains the missing ones behind a progress bar)."""
    key = (lipschitz, noise, n, seed)
    if key not in _POINTS:
        _POINTS[key] = incontext.grid_point(*key)
        while len(_POINTS) > _KEEP:
            _POINTS.pop(next(iter(_POINTS)))
    return _POINTS[key]


def missing(noise: float, n: int, seed: int) -> list[float]:
    """The L of the grid not yet trained at this σ, n and seed."""
    return [lip for lip in LIPSCHITZ if (lip, noise, n, seed) not in _POINTS]


def _sweep(noise: float, n: int, seed: int) -> dict:
    """For every L of the grid: the softmax unit and linear attention trained on the tasks, the oracle and the
    leave-one-out bandwidths."""
    rows = [grid_point(lip, noise, n, seed) for lip in LIPSCHITZ]
    table = {k: np.array([r[k] for r in rows]) for k in rows[0] if k not in ("noise", "n", "seed")}
    return {**table, "noise": noise, "n": n}


@figure("learned_window", _sweep, marks=("lipschitz", "answer"))
def _draw_window(r: dict, lang: str):
    """Mark ``lipschitz``: the current L; ``answer``: the question's answer, at the next L of the grid."""
    learned, oracle, loo = t("ib.learned", lang), t("ib.oracle", lang), t("ib.loo", lang)
    fig = common.lines(r["L"], {learned: r["window"], oracle: r["oracle"], loo: r["loo"]},
                       t("ib.window_title", lang, noise=r["noise"], n=r["n"]), t("ib.l_axis", lang),
                       t("ib.window_axis", lang), log_x=True, log_y=True, mode="lines+markers",
                       dashes={oracle: "dash", loo: "dot"}, colors={learned: PALETTE[0], oracle: "#222",
                                                                    loo: PALETTE[2]},
                       vlines=[(r["lipschitz"], t("ib.current", lang))] if r.get("lipschitz") else [])
    if r.get("answer"):
        i = min(int(np.flatnonzero(r["L"] == r["lipschitz"])[0]) + 1, len(r["L"]) - 1)
        mark_answer(fig, float(r["L"][i]), float(r["window"][i]), r["answer"], above=False)
    return fig


@figure("icl_error", _sweep, marks=("lipschitz",))
def _draw_error(r: dict, lang: str):
    soft, lin, oracle = t("ib.softmax", lang), t("ib.linear", lang), t("ib.oracle_error", lang)
    return common.lines(r["L"], {soft: r["softmax_error"], lin: r["linear_error"], oracle: r["oracle_error"]},
                        t("ib.error_title", lang), t("ib.l_axis", lang), t("ib.error_axis", lang), log_x=True,
                        log_y=True, mode="lines+markers", dashes={oracle: "dash"},
                        colors={soft: PALETTE[0], lin: PALETTE[1], oracle: "#222"},
                        vlines=[(r["lipschitz"], t("ib.current", lang))] if r.get("lipschitz") else [])


def _example(lipschitz: float, noise: float, n: int, seed: int) -> dict:
    """One task of the setting: its context, the true function, and the trained unit's prediction at every angle."""
    sweep = _sweep(noise, n, seed)
    w = float(sweep["w"][LIPSCHITZ.index(lipschitz)])
    g = torch.Generator().manual_seed(40_000 + seed)
    a, b, k = incontext.tasks(1, lipschitz, g)
    theta = torch.rand(1, n, generator=g, dtype=torch.float64) * 2 * math.pi
    y = incontext.evaluate(a, b, k, theta) + noise * torch.randn(1, n, generator=g, dtype=torch.float64)
    grid = torch.linspace(0, 2 * math.pi, 361, dtype=torch.float64)
    batch = {"theta": theta.expand(len(grid), n), "y": y.expand(len(grid), n), "query": grid}
    pred = incontext.softmax_prediction(batch, torch.tensor(w, dtype=torch.float64))
    return {"theta": theta[0].numpy(), "y": y[0].numpy(), "grid": grid.numpy(),
            "true": incontext.evaluate(a, b, k, grid[None])[0].numpy(), "prediction": pred.numpy(), "w": w,
            "window": incontext.window(w), "lipschitz": lipschitz}


@figure("icl_example", _example)
def _draw_example(r: dict, lang: str):
    traces = {t("ib.true_f", lang): r["true"], t("ib.prediction", lang, h=r["window"]): r["prediction"]}
    fig = common.lines(r["grid"], traces, t("ib.example_title", lang, lipschitz=r["lipschitz"]),
                       t("ib.theta_axis", lang), t("ib.y_axis", lang), colors={t("ib.true_f", lang): "#222"},
                       dashes={t("ib.true_f", lang): "dash"})
    fig.add_scatter(x=r["theta"], y=r["y"], mode="markers", name=t("ib.context", lang),
                    marker={"color": PALETTE[3], "size": 7})
    return fig


@functools.lru_cache(maxsize=32)
def _direction(lipschitz: float, noise: float, n: int, seed: int) -> dict:
    """The full M trained on tasks along one direction (``incontext_direction.train_direction``), M and bbᵀ each
    scaled to a largest |entry| of 1 for the picture."""
    r = incontext_direction.train_direction(lipschitz, noise, n, seed)
    target = np.outer(r["direction"], r["direction"])
    return {**r, "M_shown": r["M"] / np.abs(r["M"]).max(), "target_shown": target / np.abs(target).max()}


@figure("direction_matrix", _direction)
def _draw_direction(r: dict, lang: str):
    d = r["d"]
    ticks = list(range(1, d + 1))
    fig = common.heatmap_grid([r["M_shown"], r["target_shown"]], [t("ib.m_panel", lang), t("ib.bb_panel", lang)],
                              ticks, ticks, t("ib.direction_title", lang, lipschitz=r["lipschitz"], d=d),
                              t("ib.coord_axis", lang), t("ib.coord_axis", lang), colorbar_title=t("ib.entry", lang),
                              square=True, height=340, lang=lang)
    fig.update_layout(coloraxis={"colorscale": "RdBu_r", "cmin": -1.0, "cmax": 1.0})
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(dtick=1)
    return fig


def figures(values: Mapping[str, Any]) -> dict:
    """The page's figures at ``values``."""
    sweep = {"noise": values[NOISE.key], "n": values[N.key], "seed": values[SEED.key]}
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "learned_window": (sweep, {"lipschitz": values[L.key]}),
        "icl_error": (sweep, {"lipschitz": values[L.key]}),
        "icl_example": {**sweep, "lipschitz": values[L.key]},
        "direction_matrix": {**sweep, "lipschitz": values[L.key]}})


# --------------------------------------------------------------------------- what the page says
TRENDS = ("widens", "stays", "narrows")
STAY = 1.05          # a step of the window within 5 % "stays"


def next_step(sweep: Mapping, lipschitz: float) -> dict:
    """What the window does from ``lipschitz`` to the next L of the grid (from the last, from the one before):
    the question's answer (0 widens, 1 stays within 5 %, 2 narrows) and the two windows."""
    i = min(LIPSCHITZ.index(lipschitz), len(LIPSCHITZ) - 2)
    before, after = float(sweep["window"][i]), float(sweep["window"][i + 1])
    ratio = after / before
    return {"answer": 1 if abs(math.log(ratio)) < math.log(STAY) else 2 if ratio < 1 else 0,
            "from_l": LIPSCHITZ[i], "to_l": LIPSCHITZ[i + 1], "before": before, "after": after, "ratio": ratio}


def summary(sweep: Mapping) -> dict:
    """The window's trend over the grid (narrowing by more than 5 % at every step; flat: within 5 % at every step),
    its ratio to the oracle's (range), and where linear attention loses."""
    window, ratio = np.asarray(sweep["window"]), np.asarray(sweep["window"]) / np.asarray(sweep["oracle"])
    steps = window[1:] / window[:-1]
    linear_worse = np.asarray(sweep["linear_error"]) > np.asarray(sweep["softmax_error"])
    return {"shrinks": bool(np.all(steps < 1 / STAY)), "flat": bool(np.all(np.abs(np.log(steps)) < math.log(STAY))),
            "factor": float(window[0] / window[-1]),
            "ratio_lo": float(ratio.min()), "ratio_hi": float(ratio.max()),
            "near": bool(np.all((ratio < NEAR) & (ratio > 1 / NEAR))),
            "linear_worse_from": next((float(sweep["L"][i]) for i in range(len(linear_worse))
                                       if linear_worse[i:].all()), None),
            "linear_always_worse": bool(linear_worse.all()),
            "loo_ratio_lo": float((np.asarray(sweep["loo"]) / np.asarray(sweep["oracle"])).min()),
            "loo_ratio_hi": float((np.asarray(sweep["loo"]) / np.asarray(sweep["oracle"])).max())}


@says("ib.predict_why", "ib.predict_why_clean", "ib.predict_why_limit", "ib.predict_why_widens")
def question(sweep: Mapping, lipschitz: float, noise: float) -> Question:
    """"From this L to the next, does the learned window widen, stay or narrow?", answered on the sweep drawn."""
    step = next_step(sweep, lipschitz)
    why = ("ib.predict_why" if step["answer"] == 2 else
           ("ib.predict_why_clean" if noise == 0 else "ib.predict_why_limit") if step["answer"] == 1 else
           "ib.predict_why_widens")
    return Question("ib.next", Say("ib.predict_q", a=step["from_l"], b=step["to_l"]),
                    tuple(Say(f"ib.trend_{trend}") for trend in TRENDS), step["answer"],
                    Say(why, a=step["from_l"], b=step["to_l"], before=step["before"], after=step["after"]))


@says("ib.window_text_shrinks", "ib.window_text_clean", "ib.window_text_not", "ib.oracle_near", "ib.oracle_far",
      "ib.loo_text")
def window_text(sweep: Mapping) -> list[Say]:
    """Under the window figure: its trend over L, how near the oracle it lands, and leave-one-out on one context."""
    s = summary(sweep)
    key = ("ib.window_text_shrinks" if s["shrinks"] else
           "ib.window_text_clean" if s["flat"] and sweep["noise"] == 0 else "ib.window_text_not")
    return [Say(key, factor=s["factor"], h=sweep["window"][0], h_last=sweep["window"][-1], lo=LIPSCHITZ[0],
                hi=LIPSCHITZ[-1]),
            Say("ib.oracle_near" if s["near"] else "ib.oracle_far", lo=s["ratio_lo"], hi=s["ratio_hi"],
                pct=NEAR - 1),
            Say("ib.loo_text", lo=s["loo_ratio_lo"], hi=s["loo_ratio_hi"], tlo=s["ratio_lo"], thi=s["ratio_hi"])]


@says("ib.linear_always", "ib.linear_from", "ib.linear_never")
def linear_text(sweep: Mapping) -> Say:
    """Where linear attention, trained the same way, does worse than softmax attention."""
    s = summary(sweep)
    return Say("ib.linear_always" if s["linear_always_worse"] else
               "ib.linear_from" if s["linear_worse_from"] else "ib.linear_never", l=s["linear_worse_from"])


def direction_summary(r: Mapping) -> dict:
    """Whether M found the direction (alignment from ``ALIGNED``) and whether its error is below the best M = w·I's,
    each decided on the numbers as the page prints them (two decimals, three significant digits), so the sentence
    never reads "0.70, below 0.7" or "0.168, below 0.168"."""
    shown = round(float(r["alignment"]), 2)
    return {"aligned": shown >= ALIGNED, "alignment": r["alignment"], "isotropic": r["isotropic_alignment"],
            "better": float(f"{r['error']:.3g}") < float(f"{r['isotropic_error']:.3g}"), "error": r["error"],
            "isotropic_error": r["isotropic_error"]}


@says("ib.direction_aligned", "ib.direction_not", "ib.direction_better", "ib.direction_worse")
def direction_text(r: Mapping) -> list[Say]:
    """Whether the full matrix M found the task's direction, and whether it beats the best single window."""
    a = direction_summary(r)
    return [Say("ib.direction_aligned" if a["aligned"] else "ib.direction_not", alignment=a["alignment"],
                isotropic=a["isotropic"], level=ALIGNED),
            Say("ib.direction_better" if a["better"] else "ib.direction_worse", error=a["error"],
                iso=a["isotropic_error"])]


@says("ib.notice", "ib.notice_oracle_near", "ib.notice_oracle_far", "ib.notice_direction",
      "ib.notice_direction_not")
def notice(sweep: Mapping, direction: Mapping) -> list[Say]:
    """What to notice: the window is learned and moves with σ and n; whether training lands next to the oracle
    here, and whether the full matrix found the tasks' direction here."""
    s, a = summary(sweep), direction_summary(direction)
    return [Say("ib.notice"),
            Say("ib.notice_oracle_near") if s["near"] else
            Say("ib.notice_oracle_far", lo=s["ratio_lo"], hi=s["ratio_hi"]),
            Say("ib.notice_direction" if a["aligned"] else "ib.notice_direction_not", alignment=a["alignment"])]


@says("ib.formula_text", fixed="the unit on unit vectors is Gaussian NW with h = 1/√w: an identity, checked at three w")
def formula_text() -> Say:
    return Say("ib.formula_text")


def train_missing(noise: float, n: int, seed: int, progress=None) -> None:
    """Train the grid points of this σ, n and seed the server has not trained yet; ``progress(i, of, L)`` is told
    before each (the page's progress bar)."""
    todo = missing(noise, n, seed)
    for i, point in enumerate(todo):
        if progress is not None:
            progress(i, len(todo), point)
        grid_point(point, noise, n, seed)


def sentences(values: Mapping[str, Any]) -> list[Say]:
    """Everything the page says at ``values``, in its order."""
    noise, n, seed = values[NOISE.key], values[N.key], values[SEED.key]
    train_missing(noise, n, seed)
    specs_ = figures(values)
    sweep = specs_["learned_window"].data()
    return flatten([question(sweep, values[L.key], noise).why, window_text(sweep), linear_text(sweep),
                    direction_text(specs_["direction_matrix"].data()),
                    notice(sweep, specs_["direction_matrix"].data()), formula_text()])


@says("ib.lipschitz_help", fixed="every task's largest slope is L by construction: checked by finite differences")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("ib.lipschitz_help")]
