"""Masking: mask the logits before softmax, not the weights after it, and see what each wrong way loses or leaks.

Figures, all of one random example: the correct and one wrong mode's weights side by side (``MAIN``), every mode's
row sums (the question's figure) and output norms, the leak probe's bars, the wrong mode's gradient. Numbers:
whether the drawn rows still sum to 1, what a post-softmax mask loses, which modes the leak probe finds leaking.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import masking
from ..attention import MASK_MODES
from ..figures import masking as mfig
from ..figures.style import mark_answer
from ..i18n import t
from ..masking import MASK_TYPES
from .base import figure_table, specs
from .params import Param, seed_param

WRONG_MODES = tuple(m for m in MASK_MODES if m != "pre")
LENGTH = Param("mask.length", "slider", 8, "mk.length", "mk.length_help", lo=2, hi=32)
D = Param("mask.d", "slider", 16, "mk.d", "mk.d_help", lo=1, hi=256)
KIND = Param("mask.kind", "select", "causal", "mk.mask", options=MASK_TYPES, names="masktype.")
VALID = Param("mask.valid", "slider", 6, "mk.valid", "mk.valid_help", lo=0, hi=32)
WRONG = Param("mask.wrong", "select", "post", "mk.wrong", options=WRONG_MODES, names="mode.")
SEED = seed_param("mask.seed")
PARAMS = (LENGTH, D, KIND, VALID, WRONG, SEED)
FILE_NAME = ((KIND, "{}"), (LENGTH, "L{}"), (WRONG, "vs-{}"))
MAIN = "masking"
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
def _masking(length: int, d: int, kind: str, valid: int, seed: int, wrong: str) -> dict:
    """Every masking mode on one random example: weights, row sums, norms, gradients and the report."""
    q, k, v = masking.example(length, d, seed)
    mask = masking.make_mask(kind, length, valid)
    res, grads = masking.all_modes(q, k, v, mask), masking.gradients(q, k, v, mask)
    return {"mask": mask.numpy(), "wrong": wrong, "report": masking.report(q, k, v, mask, res, grads),
            **{f"{m}.{name}": x.numpy() for m, r in res.items() for name, x in r.items()},
            "grads": {m: g.numpy() for m, g in grads.items()}}


@figure("masking", _masking)
def _draw_masking(ex: dict, lang: str):
    wrong = ex["wrong"]
    return mfig.masked_pair(ex["pre.weights"], ex[f"{wrong}.weights"], ex["mask"],
                            (t("mk.pre_correct", lang), t(f"modename.{wrong}", lang)), lang=lang)




@figure("row_sums", _masking, marks=("answer",))
def _draw_row_sums(ex: dict, lang: str):
    """Mark ``answer``: the question's answer, at the post-softmax row that lost the most."""
    pos = np.arange(len(ex["mask"]))
    fig = mfig.mode_lines(pos, {m: ex[f"{m}.row_sum"] for m in MASK_MODES}, t("mk.rows_title", lang),
                          t("fig.query_pos", lang), t("mk.rows_y", lang), lang=lang)
    if ex.get("answer"):
        low = int(np.argmin(ex["post.row_sum"]))
        mark_answer(fig, low, float(ex["post.row_sum"][low]), ex["answer"], above=False)
    return fig


@figure("output_norms", _masking)
def _draw_output_norms(ex: dict, lang: str):
    pos = np.arange(len(ex["mask"]))
    return mfig.mode_lines(pos, {m: ex[f"{m}.output_norm"] for m in MASK_MODES}, t("mk.norm_title", lang),
                           t("fig.query_pos", lang), t("mk.norm_y", lang), lang=lang)


@figure("leak", _masking)
def _draw_leak(ex: dict, lang: str):
    report = ex["report"].set_index("mode")
    return mfig.leak_bars(list(MASK_MODES), {c: [report.loc[m, f"leak_{c}"] for m in MASK_MODES]
                                             for c in ("key", "value")}, LEAK_TOL, lang=lang)


@figure("grad_heatmap", _masking)
def _draw_grad_heatmap(ex: dict, lang: str):
    """The gradient of the wrong mode shown beside the correct one (``wrong``) on the logits."""
    wrong = ex["wrong"]
    return mfig.gradient_heatmap(ex["grads"][wrong], ex["mask"], t("mk.grad_title", lang,
                                                                     mode=t(f"modename.{wrong}", lang)), lang=lang)

def valid_length(values: Mapping[str, Any]) -> int:
    """How many keys a padding mask lets through: the slider's value, clamped to the length (a causal mask has
    no such setting: every key up to the query's own position)."""
    length = values[LENGTH.key]
    return length if values[KIND.key] == "causal" else min(values[VALID.key], length)


def figures(values: Mapping[str, Any]) -> dict:
    """The page's figures at ``values``."""
    example = {"length": values[LENGTH.key], "d": values[D.key], "kind": values[KIND.key],
               "valid": valid_length(values), "seed": values[SEED.key], "wrong": values[WRONG.key]}
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, {name: example for name in FIGURES})


# --------------------------------------------------------------------------- the numbers the page says
def row_sums_answer(row_sums) -> tuple[int, int]:
    """Do the rows still sum to 1? (0: every row, 1: only some, 2: none; how many do), on the rows drawn."""
    whole = np.isclose(np.asarray(row_sums, float), 1.0, atol=1e-6)
    return (0 if whole.all() else 2 if not whole.any() else 1), int(whole.sum())


def rows_lost(row_sums, mask) -> dict:
    """What the row-sum text says of "post": "nothing" (no key is masked), "early" (a causal mask: the first row
    keeps ``first`` of its weight, the last ``last``), or "same" (every row loses the same keys: sums from ``lo``
    to ``hi``)."""
    sums, mask = np.asarray(row_sums, dtype=float), np.asarray(mask, dtype=bool)
    out = {"first": sums[0], "last": sums[-1], "lo": sums.min(), "hi": sums.max()}
    if mask.all():
        return {**out, "kind": "nothing"}
    lost = (~mask).sum(1)
    return {**out, "kind": "early" if lost[0] > lost[-1] else "same"}


LEAK_TOL = 1e-9


@functools.lru_cache(maxsize=1)
def renorm_demo() -> tuple[float, float]:
    """The first row's sum under "pre" and under "post_renorm" when the masked logits lie 120 above the others
    (``masking.renorm_underflow``), which the gradient notes quote: the same on every run, computed once."""
    sums = masking.renorm_underflow()
    return sums["pre"], sums["post_renorm"]


def leak_modes(report) -> dict:
    """Which modes the leak probe finds leaking through the key and through the value (display order), and whether
    any query may not see the last position at all (``blind``)."""
    r = report.set_index("mode") if "mode" in report else report
    key = [m for m in r.index if r.loc[m, "leak_key"] > LEAK_TOL]
    value = [m for m in r.index if r.loc[m, "leak_value"] > LEAK_TOL]
    return {"key": key, "value": value}
