"""Kernel regression: fit noisy data with Nadaraya-Watson and see what the bandwidth does.

Figures: the fit (the chosen kernel at the bandwidth, and at the overlaid ones; compared kernels at the first
bandwidth), the kernels' profiles, and the leave-one-out error against h. Numbers: whether the presets earn their
labels, the question's choices, how the kernels' optimal widths compare.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..bandwidth import flat_below, loo_cv_scores, select_bandwidth, silverman_bandwidth
from ..figures import regression as rfig
from ..i18n import Joined, Message, t
from ..kernels import KERNELS, equivalent_bandwidth, ignores_h
from ..outside import Outside, plotly_text
from ..regression import defined_mse, nadaraya_watson
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param
from .shared import BANDWIDTH, BANDWIDTHS, DATASET, KERNEL, NOISE, SHARED, data_of, dataset_label, presets

COMPARE = Param("nw.compare", "multiselect", [], "kr.compare", options=tuple(KERNELS), names="kernel.")
SAME_WIDTH = Param("nw.same_width", "toggle", True, "kr.same_width", "kr.same_width_help")
OVERLAY = Param("nw.overlay", "toggle", False, "kr.overlay")
OVERLAY_H = Param("nw.overlay_h", "multiselect", lambda v: list(presets(v.get(DATASET.key, DATASET.default)).values()),
                  "kr.overlay_h", options=tuple(BANDWIDTHS), fmt="g")
PARAMS = (*SHARED, COMPARE, SAME_WIDTH, OVERLAY, OVERLAY_H)
FILE_NAME = ((KERNEL, "{}"), (BANDWIDTH, "h{}"))
LOO_BANDWIDTHS = np.logspace(-2, np.log10(20), 41)
MAIN = "fit"
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
def _shapes(kernels: tuple[str, ...]) -> dict:
    return {"kernels": list(kernels)}


@figure("kernel_shapes", _shapes)
def _draw_shapes(d: dict, lang: str):
    return rfig.kernel_shapes_figure(d["kernels"], lang=lang)


def _fit(data: Mapping, dataset: str, kernels: tuple[str, ...], bandwidths: tuple[float, ...],
         same_width: bool) -> dict:
    """The first (chosen) kernel at every bandwidth, each compared kernel at the first bandwidth only (at most
    3 + 5 curves, one colour each); compared kernels at the first kernel's effective width when asked."""
    curves = []
    for i, k in enumerate(kernels):
        for b in bandwidths if i == 0 else bandwidths[:1]:
            hk = equivalent_bandwidth(b, k, reference=kernels[0]) if same_width else b
            est = nadaraya_watson(data["x_grid"], data["x"], data["y"], k, hk).numpy()
            mse = defined_mse(est, data["true"])[0] if data["true"] is not None else None
            curves.append({"kernel": k, "h": hk, "estimate": est, "mse": mse,
                           "undefined": int(np.isnan(est).sum())})
    return {**data, "dataset": dataset, "curves": curves}


def upload_axes(data: Mapping, lang: str) -> tuple[str, str] | None:
    """An upload's axis titles: its column names, as plotly text (a name is shown as written, never as HTML), and
    "standardised" when the values were; None when the data are not an upload."""
    if "columns" not in data:
        return None
    suffix = t("fig.standardised", lang) if data["standardised"] else ""
    return tuple(f"{plotly_text(Outside(name))}{suffix}" for name in data["columns"])


def curve_label(curve: Mapping, lang: str) -> str:
    return t("fig.curve_label", lang, kernel=t(f"kernel.{curve['kernel']}", lang), h=curve["h"])


@figure("fit", _fit)
def _draw_fit(d: dict, lang: str):
    return rfig.fit_figure(d["x"], d["y"], d["x_grid"], d["true"], {curve_label(c, lang): c["estimate"]
                                                                  for c in d["curves"]},
                           title=t("kr.fit_title", lang, dataset=dataset_label(d["dataset"], lang)), lang=lang,
                           axes=upload_axes(d, lang))


def _loo(data: Mapping, kernels: tuple[str, ...], same_width: bool) -> dict:
    """Leave-one-out MSE against h for each kernel; with equal width, each drawn at the first kernel's h."""
    scores = {k: loo_cv_scores(data["x"], data["y"], k, LOO_BANDWIDTHS).numpy() for k in kernels}
    x_of = {k: LOO_BANDWIDTHS / (equivalent_bandwidth(1.0, k, reference=kernels[0]) if same_width else 1)
            for k in kernels}
    optimum = select_bandwidth(data["x"], data["y"], kernels[0])
    flat = None if ignores_h(kernels[0]) else flat_below(data["x"], data["y"], kernels[0], optimum)
    return {"bandwidths": LOO_BANDWIDTHS, "scores": scores, "x_of": x_of,
            "shift": same_width and len(kernels) > 1, "optimum": optimum, "flat": flat,
            "silverman": silverman_bandwidth(data["x"], kernels[0])}


@figure("loo_cv", _loo, marks=("current", "answer"))
def _draw_loo(d: dict, lang: str):
    """Marks: ``current`` (the bandwidth now), ``answer`` (the question, ``loo_question``, once revealed)."""
    name = {k: t(f"kernel.{k}", lang) for k in d["scores"]}
    first = next(iter(d["scores"]))            # the chosen kernel; one that ignores h has no optimum to mark
    return rfig.loo_cv_figure(d["bandwidths"], {name[k]: s for k, s in d["scores"].items()}, current=d["current"],
                              optimum=None if ignores_h(first) else d["optimum"], silverman=d["silverman"], lang=lang,
                              flat=None if ignores_h(first) else d["flat"],
                              x_by_series={name[k]: x for k, x in d["x_of"].items()} if d["shift"] else None,
                              answer=d.get("answer"))


def kernels_of(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The chosen kernel, then the compared ones."""
    kernel = values[KERNEL.key]
    return (kernel, *(k for k in values[COMPARE.key] if k != kernel))


def figures(values: Mapping[str, Any], data: Mapping | None = None) -> dict:
    """The page's figures at ``values``; ``data``: the dataset's arrays (an upload's), else generated."""
    data = data_of(values) if data is None else data
    h, kernels, same = values[BANDWIDTH.key], kernels_of(values), values[SAME_WIDTH.key]
    overlaid = values[OVERLAY_H.key] if values[OVERLAY.key] else ()
    bandwidths = (h, *(b for b in overlaid if b != h))
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {
        "fit": {"data": data, "dataset": data.get("dataset", values[DATASET.key]), "kernels": kernels,
                "bandwidths": bandwidths,
                "same_width": same},
        "kernel_shapes": {"kernels": kernels},
        "loo_cv": ({"data": data, "kernels": kernels, "same_width": same}, {"current": h}),
    })


def lecture_set(values: Mapping[str, Any]) -> dict:
    """The exported figures: every kernel's profile, the fit at each of the dataset's three presets, the LOO curve."""
    data = data_of(values)
    out = {}
    for h in presets(values[DATASET.key]).values():
        out[f"fit_h{h:g}"] = figures({**values, BANDWIDTH.key: h}, data)["fit"]
    shapes = figures({**values, COMPARE.key: list(KERNELS)}, data)
    return {"kernel_shapes": shapes["kernel_shapes"], **out, "loo_cv": figures(values, data)["loo_cv"]}


# --------------------------------------------------------------------------- what the page says
def width_agreement(optima: dict[str, float]) -> dict:
    """How far apart the kernels' LOO-optimal bandwidths are, raw and in Gaussian units (each optimum times
    δ_Gauss/δ_K, the width it stands for): the smallest and largest in Gaussian units (``lo``, ``hi``), the ratio
    of largest to smallest in those units (``units``) and of the raw optima (``raw``), and whether putting them in
    Gaussian units brings them closer (``closer``)."""
    raw = list(optima.values())
    gauss = [h / equivalent_bandwidth(1.0, k) for k, h in optima.items()]
    units = max(gauss) / min(gauss)
    return {"lo": min(gauss), "hi": max(gauss), "units": units, "raw": max(raw) / min(raw),
            "closer": units < max(raw) / min(raw)}


def loo_optimum(x, y, kernel: str) -> float:
    """The leave-one-out optimal bandwidth of ``kernel`` on (x, y)."""
    return select_bandwidth(x, y, kernel)


def loo_ends(bandwidths, scores) -> dict:
    """What the LOO curve's caption quotes: the smallest bandwidth with a score and the largest, and each one's
    error as a multiple of the curve's minimum."""
    h, s = np.asarray(bandwidths, dtype=float), np.asarray(scores, dtype=float)
    ok = np.isfinite(s)
    best = s[ok].min()
    first = int(np.flatnonzero(ok)[0])
    return {"h_lo": h[first], "r_lo": s[first] / best, "h_hi": h[-1], "r_hi": s[-1] / best}


def snap_error(grid) -> float:
    """The largest relative distance from a value inside the grid's range to its nearest grid value
    on a log scale (half the largest log gap between neighbours)."""
    g = np.sort(np.asarray(grid, dtype=float))
    return float(np.sqrt(g[1:] / g[:-1]).max() - 1)


def fit_table(curves: list[dict], n_grid: int, lang: str = "en"):
    """The readout as a table, one row per curve of the fit figure: its label, the MSE against the true function
    (blank for an upload) and how many of the ``n_grid`` queries have no estimate."""
    import pandas as pd  # pandas: kept off the first page's imports (cold start)

    return pd.DataFrame([{t("kr.col_curve", lang): curve_label(c, lang),
                          t("kr.col_mse", lang): None if c["mse"] is None else round(float(c["mse"]), 4),
                          t("kr.col_undefined", lang): f"{c['undefined']} / {n_grid}"} for c in curves])


LOO_TIE = 0.02      # an offered bandwidth whose LOO error is within 2 % of the lowest one's counts as right too
SEPARATE = 1.5      # the LOO optimum is offered only when it is at least 1.5x away from every preset


def is_clean(data: Mapping, noise: float) -> bool:
    """Whether the data shown have no noise (a generated dataset at noise 0: an upload's noise is unknown)."""
    return data["true"] is not None and noise == 0


def _two_digits_up(h: float) -> float:
    """``h`` rounded up to two significant digits."""
    unit = 10.0 ** (math.floor(math.log10(h)) - 1)
    return float(f"{math.ceil(h / unit - 1e-9) * unit:.2g}")


def loo_question(x, y, kernel: str, optimum: float, presets) -> dict:
    """"Which of these bandwidths gives the lowest leave-one-out error?" on (x, y): the presets, plus the LOO
    optimum (2 significant digits) when it is at least ``SEPARATE`` times away from each of them, so that no two
    choices are a hair apart. Returns the bandwidths offered (``h``), their LOO MSE (``scores``), the index of the
    lowest (``best``), every index within ``LOO_TIE`` of it (``right``: a guess of any of them is right), and how
    much higher the best of the other choices is (``margin``, a fraction; inf when every choice ties)."""
    candidates = sorted({float(h) for h in presets})
    rounded = float(f"{optimum:.2g}")
    if not np.isfinite(loo_cv_scores(x, y, kernel, [rounded]).numpy()[0]):
        rounded = _two_digits_up(optimum)          # rounded down below the nearest-neighbour limit: no score there
    if not ignores_h(kernel) and all(abs(math.log(rounded / h)) >= math.log(SEPARATE) for h in candidates):
        candidates = sorted([*candidates, rounded])
    scores = loo_cv_scores(x, y, kernel, candidates).numpy()
    best = int(np.nanargmin(scores))
    right = [i for i, s in enumerate(scores) if s <= scores[best] * (1 + LOO_TIE)]
    others = [s for i, s in enumerate(scores) if i not in right and np.isfinite(s)]
    margin = float(min(others) / scores[best] - 1) if others else math.inf
    return {"h": candidates, "scores": scores, "best": best, "right": right, "margin": margin}


@says("kr.readout_line", "kr.readout", "kr.readout_upload", "kr.undefined")
def readouts(fit: Mapping) -> list[Say] | None:
    """One line per curve of the fit (at most two; more go in ``fit_table``): its error against the true function
    (none for an upload) and how many queries have no estimate."""
    if len(fit["curves"]) > 2:
        return None
    out = []
    for curve in fit["curves"]:
        label = Message("fig.curve_label", kernel=Message(f"kernel.{curve['kernel']}"), h=curve["h"])
        line = Message("kr.readout", label=label, mse=curve["mse"]) if fit["true"] is not None else \
            Message("kr.readout_upload", label=label)
        undefined = Message("kr.undefined", n=curve["undefined"], m=len(fit["x_grid"]),
                            kernel=Message(f"kernel.{curve['kernel']}")) if curve["undefined"] else ""
        out.append(Say("kr.readout_line", line=line, undefined=undefined))
    return out


@says("kr.loo_text")
def loo_text() -> Say:
    return Say("kr.loo_text")


@says("kr.predict_why", "kr.predict_why_clean", "kr.predict_why_tie", "kr.predict_why_flat", "kr.predict_why_only")
def question(asked: Mapping, kernel: str, clean: bool = False) -> Question:
    """"Which of these bandwidths gives the lowest leave-one-out error?" (``asked``: ``loo_question``'s answer;
    ``clean``: the data have no noise, so the reason is not noise)."""
    offered = [Message("kr.h_choice", h=h) for h in asked["h"]]
    best, scores = asked["best"], asked["scores"]
    unscored = [offered[i] for i, s in enumerate(scores) if not np.isfinite(s)]
    if ignores_h(kernel):
        why = Say("kr.predict_why_flat", mse=scores[best])
    elif len(asked["right"]) > 1:
        why = Say("kr.predict_why_tie", h=offered[best], tie=Joined([offered[i] for i in asked["right"]]),
                  pct=LOO_TIE)
    elif not np.isfinite(asked["margin"]):
        why = Say("kr.predict_why_only", h=offered[best], mse=scores[best], none=Joined(unscored))
    else:
        why = Say("kr.predict_why_clean" if clean else "kr.predict_why", h=offered[best], mse=scores[best],
                  margin=asked["margin"])
    right = tuple(range(len(offered))) if ignores_h(kernel) else tuple(asked["right"])
    return Question("kr.loo", Say("kr.predict_q", kernel=Message(f"kernel.{kernel}"), choices=Joined(offered)),
                    tuple(Say("kr.h_choice", h=h) for h in asked["h"]), best, why, right)


@says("kr.loo_ends")
def loo_ends_caption(loo: Mapping, kernel: str) -> Say:
    ends = loo_ends(loo["bandwidths"], loo["scores"][kernel])
    return Say("kr.loo_ends", tone="caption", **ends)


@says("kr.snap", "kr.snap_outside")
def snap_caption(grid, loo: Mapping | None = None, kernel: str = "gaussian") -> list[Say]:
    """The buttons snap to the slider's grid, within the bound on the largest gap; a value the buttons set that lies
    outside the grid's range (``loo``'s optimum and Silverman's h) is said to be moved to its end (the constant
    kernel's "optimum" is not offered: it ignores h)."""
    out = [Say("kr.snap", tone="caption", pct=snap_error(grid))]
    lo, hi = float(min(grid)), float(max(grid))
    for what, h in (() if loo is None else (("kr.optimum", loo["optimum"]), ("kr.silverman", loo["silverman"]))):
        if (what != "kr.optimum" or not ignores_h(kernel)) and not lo <= h <= hi:
            out.append(Say("kr.snap_outside", tone="caption", what=Message(what), h=h, lo=lo, hi=hi,
                           snapped=lo if h < lo else hi))
    return out


@says("kr.width_text", "kr.width_optima", "kr.width_optima_not_closer", "kr.width_optima_flat")
def width_text(optima: Mapping[str, float], flats: Mapping[str, float | None]) -> list[Say]:
    """One h is a different width per kernel; whether the kernels' LOO optima (``optima``, by kernel) agree better
    in Gaussian units than raw; not compared where some kernel's optimum sits on a flat stretch that reaches the
    search range's end (``flats``, by kernel: ``flat_below``), which makes it the search's end, not the data's
    choice."""
    flat = {k: edge for k, edge in flats.items() if edge is not None}
    if flat:
        return [Say("kr.width_text"), Say("kr.width_optima_flat", edge=max(flat.values()),
                                          kernels=Joined([Message(f"kernel.{k}") for k in flat]))]
    agree = width_agreement(optima)
    return [Say("kr.width_text"), Say("kr.width_optima" if agree["closer"] else "kr.width_optima_not_closer",
                                      lo=agree["lo"], hi=agree["hi"], units=agree["units"], raw=agree["raw"])]


@says("kr.width_row", fixed="the kernels' canonical bandwidths: constants, checked by integration")
def width_rows() -> list[Say]:
    """Each kernel's canonical bandwidth δ_K and the factor that carries a Gaussian h to it."""
    return [Say("kr.width_row", kernel=Message(f"kernel.{k}"), delta=KERNELS[k].canonical,
                factor=equivalent_bandwidth(1.0, k)) for k in KERNELS if KERNELS[k].canonical]


@says("kr.notice_first", "kr.notice_error", "kr.notice_first_upload", "kr.notice_first_flat",
      "kr.notice_first_plateau", "kr.notice_first_upload_plateau",
      "kr.notice_first_flat_upload", "kr.notice", "kr.notice_silverman")
def notice(data: Mapping, loo: Mapping, kernel: str, preset_mse: Mapping[float, float] | None) -> list[Say]:
    """What to notice: the presets' errors against the true function (``preset_mse``: bandwidth → error; None for
    an upload) and the leave-one-out pick (none for a kernel that ignores h), then what small and large h do."""
    if ignores_h(kernel):
        first = Say("kr.notice_first_flat", mse=next(iter(preset_mse.values()))) \
            if data["true"] is not None and preset_mse is not None else Say("kr.notice_first_flat_upload")
    elif data["true"] is not None and preset_mse is not None:
        errors = Joined([Message("kr.notice_error", mse=mse, h=h) for h, mse in preset_mse.items()])
        first = Say("kr.notice_first" if loo["flat"] is None else "kr.notice_first_plateau",
                    kernel=Message(f"kernel.{kernel}"), errors=errors, h=loo["optimum"], edge=loo["flat"])
    else:
        first = Say("kr.notice_first_upload" if loo["flat"] is None else "kr.notice_first_upload_plateau",
                    h=loo["optimum"], edge=loo["flat"])
    out = [first, Say("kr.notice")]
    if not ignores_h(kernel):                   # (the constant kernel's leave-one-out has no h to compare with)
        out.append(Say("kr.notice_silverman", silverman=loo["silverman"], h=loo["optimum"]))
    return out


def preset_errors(data: Mapping, kernel: str, bandwidths) -> dict[float, float]:
    """Each bandwidth's error against the true function on the data's query grid (defined points only)."""
    grid, x, y = (torch.as_tensor(data[k]) for k in ("x_grid", "x", "y"))
    return {h: defined_mse(nadaraya_watson(grid, x, y, kernel, h).numpy(), data["true"])[0] for h in bandwidths}


@says("kr.formula_text", fixed="the Gaussian NW weights are a softmax: an identity, tested on random data")
def formula_text() -> Say:
    return Say("kr.formula_text")


def sentences(values: Mapping[str, Any], data: Mapping | None = None) -> list[Say]:
    """Everything the page says at ``values``, in its order (the question's reason as shown after Reveal)."""
    data = data_of(values) if data is None else data
    specs_ = figures(values, data)
    kernel, name = values[KERNEL.key], values[DATASET.key]
    fit, loo = specs_["fit"].data(), specs_["loo_cv"].data()
    asked = loo_question(data["x"], data["y"], kernel, loo["optimum"], tuple(presets(name).values()))
    optima = {k: select_bandwidth(data["x"], data["y"], k) for k in KERNELS if KERNELS[k].canonical}
    flats = {k: flat_below(data["x"], data["y"], k, h) for k, h in optima.items()}
    preset_mse = preset_errors(data, kernel, presets(name).values()) if data["true"] is not None else None
    clean = is_clean(data, values[NOISE.key])
    return flatten([readouts(fit), loo_text(), question(asked, kernel, clean).why, loo_ends_caption(loo, kernel),
                    snap_caption(BANDWIDTHS, loo, kernel), width_text(optima, flats), width_rows(),
                    notice(data, loo, kernel, preset_mse), formula_text()])


@says("kr.same_width_help", fixed="what the toggle does: h × δ_K / δ of the chosen kernel, a formula")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("kr.same_width_help")]
