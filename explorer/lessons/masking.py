"""Masking: mask the logits before softmax, not the weights after it, and see what each wrong way loses or leaks.

Figures, all of one random example: the correct and one wrong mode's weights side by side (``MAIN``), every mode's
row sums (the question's figure) and output norms, the leak probe's bars, the wrong mode's gradient. Sentences: the
question (do the rows still sum to 1?), what a post-softmax mask loses, one verdict per mode, which modes the leak
probe finds leaking, the gradient notes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import masking
from ..attention import MASK_MODES
from ..figures import masking as mfig
from ..figures.answer import mark_answer
from ..i18n import Joined, Message, t
from ..masking import MASK_TYPES
from .base import Question, Say, figure_table, flatten, says, specs
from .params import Param, seed_param

WRONG_MODES = tuple(m for m in MASK_MODES if m != "pre")
LENGTH = Param("mask.length", "slider", 8, "mk.length", "mk.length_help", lo=2, hi=32)
D = Param("mask.d", "slider", 16, "mk.d", "mk.d_help", lo=1, hi=256)
KIND = Param("mask.kind", "select", "causal", "mk.mask", options=MASK_TYPES, names="masktype.")
VALID = Param("mask.valid", "slider", 6, "mk.valid", "mk.valid_help", lo=0, hi=32)
WRONG = Param("mask.wrong", "select", "post", "mk.wrong", options=WRONG_MODES, names="modename.")
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


# --------------------------------------------------------------------------- what the page says
LEAK_TOL = 1e-9              # below this a difference is rounding


def row_sums_answer(row_sums) -> tuple[int, int]:
    """Do the rows still sum to 1? (0: every row, 1: only some, 2: none; how many do), on the rows drawn."""
    whole = np.isclose(np.asarray(row_sums, float), 1.0, atol=1e-6)
    return (0 if whole.all() else 2 if not whole.any() else 1), int(whole.sum())


@says("mk.predict_why")
def question(ex: Mapping, kind: str) -> Question:
    """"After post-softmax zeroing, does each row still sum to 1?", answered on the example's post rows."""
    sums = ex["post.row_sum"]
    expected, whole = row_sums_answer(sums)
    return Question("mk.rows", Say("mk.predict_q", kind=Message(f"masktype.{kind}")),
                    tuple(Say(f"mk.rows_{i}") for i in range(3)), expected,
                    Say("mk.predict_why", whole=whole, n=len(sums), low=float(np.min(sums))))


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


@says("mk.rows_text", "mk.rows_early", "mk.rows_early_not", "mk.rows_nothing_masked")
def rows_text(ex: Mapping) -> Say:
    """What post-softmax zeroing does to the rows drawn (and which rows lose most)."""
    lost = rows_lost(ex["post.row_sum"], ex["mask"])
    if lost["kind"] == "nothing":
        return Say("mk.rows_nothing_masked")
    early = Message("mk.rows_early" if lost["kind"] == "early" else "mk.rows_early_not", first=lost["first"],
                    last=lost["last"], lo=lost["lo"], hi=lost["hi"])
    return Say("mk.rows_text", early=early)


@says("mk.v_line", "mk.v_sdpa", "mk.v_sdpa_diff", "mk.v_rows", "mk.v_mass", "mk.v_leak", "mk.v_no_leak", "mk.v_grad")
def verdicts(ex: Mapping) -> list[Say]:
    """One line per mode: whether it matches SDPA, what its rows sum to, the weight it puts on masked keys, whether
    the leak probe finds it leaking, the gradient it puts on masked logits."""
    report = ex["report"].set_index("mode")
    lines = []
    for mode in MASK_MODES:
        r = report.loc[mode]
        parts = [Message("mk.v_sdpa") if r.max_diff_vs_sdpa < LEAK_TOL else
                 Message("mk.v_sdpa_diff", diff=r.max_diff_vs_sdpa)]
        if r.row_sum_error > LEAK_TOL:
            parts.append(Message("mk.v_rows", mean=r.mean_row_sum, low=r.min_row_sum, correct=r.correct_row_sum))
        if r.mass_on_masked > LEAK_TOL:
            parts.append(Message("mk.v_mass", mass=r.mass_on_masked))
        leaks = [Message("mk.v_leak", channel=Message(f"mk.channel_{c}"), leak=r[f"leak_{c}"])
                 for c in ("key", "value") if r[f"leak_{c}"] > LEAK_TOL]
        parts += leaks or [Message("mk.v_no_leak")]
        if r.grad_on_masked > LEAK_TOL:
            parts.append(Message("mk.v_grad", g=r.grad_on_masked))
        lines.append(Say("mk.v_line", mode=Message(f"modename.{mode}"), parts=Joined(parts, "punct.sep")))
    return lines


def leak_modes(report) -> dict:
    """Which modes the leak probe finds leaking through the key and through the value (display order)."""
    r = report.set_index("mode") if "mode" in report else report
    key = [m for m in r.index if r.loc[m, "leak_key"] > LEAK_TOL]
    value = [m for m in r.index if r.loc[m, "leak_value"] > LEAK_TOL]
    return {"key": key, "value": value}


@says("mk.leak_caption", "mk.leak_none_masked", "mk.leak_which", "mk.leak_which_key", "mk.leak_which_value",
      "mk.leak_which_none")
def leak_caption(ex: Mapping) -> Say:
    """The leak probe's caption: which modes leak through which channel (the probe perturbs the last position)."""
    if bool(np.asarray(ex["mask"])[:, -1].all()):
        return Say("mk.leak_caption", tone="caption", which=Message("mk.leak_none_masked"))
    leaks = leak_modes(ex["report"])
    names = {c: Joined([Message("mk.quoted", mode=Message(f"modename.{m}")) for m in leaks[c]])
             for c in ("key", "value")}
    key = "mk.leak_which" if leaks["key"] and leaks["value"] else "mk.leak_which_key" if leaks["key"] else \
        "mk.leak_which_value" if leaks["value"] else "mk.leak_which_none"
    return Say("mk.leak_caption", tone="caption", which=Message(key, key_modes=names["key"],
                                                                value_modes=names["value"]))


@says("mk.grad_text")
def grad_text() -> Say:
    """What the gradient map shows (true of every example: checked over the sweep)."""
    return Say("mk.grad_text")


@functools.lru_cache(maxsize=1)
def renorm_demo() -> tuple[float, float]:
    """The first row's sum under "pre" and under "post_renorm" when the masked logits lie 120 above the others
    (``masking.renorm_underflow``), which the gradient notes quote: the same on every run, computed once."""
    sums = masking.renorm_underflow()
    return sums["pre"], sums["post_renorm"]


@says("mk.grad_notes", fixed="the underflow demo: fixed logits, no setting involved")
def grad_notes() -> Say:
    pre, renorm = renorm_demo()
    return Say("mk.grad_notes", pre=pre, renorm=renorm)


@says("mk.notice")
def notice() -> Say:
    """What to notice (true of every example: checked over the sweep)."""
    return Say("mk.notice")


def sentences(values: Mapping[str, Any]) -> list[Say]:
    """Everything the page says at ``values``, in its order (the question's reason as shown after Reveal)."""
    ex = figures(values)["masking"].data()
    return flatten([question(ex, values[KIND.key]).why, rows_text(ex), verdicts(ex), leak_caption(ex), grad_text(),
                    grad_notes(), notice()])
