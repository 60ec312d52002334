"""Predict, then reveal: on every page the answer the lesson reveals is the one an independent computation gives,
over the settings its question reads. Headless: each lesson's ``question``; how the page asks it is
tests/app/test_predict_ui.py's."""

import math

import numpy as np
import pytest
import torch

from explorer.bandwidth import select_bandwidth
from explorer.data import make_dataset
from explorer.i18n import t
from explorer.lessons import attention_heatmap as ah_lesson
from explorer.lessons import efficient_attention as ef_lesson
from explorer.lessons import kernel_regression as kr_lesson
from explorer.lessons import live_training as lt_lesson
from explorer.lessons import masking as mk_lesson
from explorer.lessons import scaling as sc_lesson
from explorer.lessons import softmax_kernel as sk_lesson
from explorer.lessons.params import defaults
from explorer.lessons.shared import DATASET, KERNEL, NOISE, N, data_of, presets
from tests.lessons.sweep import checks

D = make_dataset("sine_mix", 200, 0.3, 0)
X, Y = np.asarray(D.x, float), np.asarray(D.y, float)


def _loo_any(x, y, kernel, h):
    """Leave-one-out MSE of any kernel by a plain loop over the points, the weights written out in numpy (the
    Gaussian and Laplace ones from their log-weights less the largest, so a far point is no 0/0; inf when a point
    has no neighbour within a compact kernel's reach)."""
    errors = []
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        u = (x[i] - x[others]) / h
        if kernel in ("gaussian", "laplace"):
            logw = -u * u / 2 if kernel == "gaussian" else -np.abs(u)
            w = np.exp(logw - logw.max())
        else:
            w = {"boxcar": (np.abs(u) <= 1) * 1.0, "constant": np.ones_like(u),
                 "epanechnikov": np.clip(1 - u * u, 0, None), "triangular": np.clip(1 - np.abs(u), 0, None)}[kernel]
        if w.sum() == 0:
            return math.inf
        errors.append((w @ y[others] / w.sum() - y[i]) ** 2)
    return float(np.mean(errors))


def _kr_asked(values, clean=False):
    """(dataset name, kernel, x, y, the optimum, ``loo_question``'s answer, the lesson's question) at ``values``."""
    name, kernel = values[DATASET.key], values[KERNEL.key]
    data = data_of(values)
    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    optimum = select_bandwidth(x, y, kernel)
    asked = kr_lesson.loo_question(x, y, kernel, optimum, tuple(presets(name).values()))
    return name, kernel, x, y, optimum, asked, kr_lesson.question(asked, kernel, clean)


@checks(kr_lesson.question, together=(DATASET, KERNEL))
def test_kr_question_offers_choices_a_margin_apart_and_its_answer_holds(settings):
    """kr.predict_q / kr.predict_why / kr.predict_why_tie, at seeds 0-4, both datasets and every kernel: the offered
    bandwidths are the presets plus the LOO optimum only when it is 1.5x from each; the answer is the lowest
    leave-one-out error of a plain loop; every choice within 2 % of it counts as right, and the margin the page
    states (the next best's excess) is the loop's."""
    for values in settings:
        name, kernel, x, y, optimum, _, question = _kr_asked(values)
        rounded = float(f"{optimum:.2g}")
        far = kernel != "constant" and \
            all(abs(math.log(rounded / p)) >= math.log(1.5) for p in presets(name).values())
        offered = [c.values["h"] for c in question.choices]
        assert set(offered) == set(presets(name).values()) | ({rounded} if far else set())
        loop = np.array([_loo_any(x, y, kernel, h) for h in offered])
        assert loop[question.answer] == pytest.approx(loop.min(), rel=1e-9), values
        right = {i for i, v in enumerate(loop) if v <= loop.min() * 1.02}
        assert {question.answer, *question.also_right} == right, (values, loop)
        if kernel == "constant":                           # it ignores h: every choice scores the same
            assert question.why.key == "kr.predict_why_flat" and len(right) == len(loop)
            continue
        others = [v for i, v in enumerate(loop) if i not in right]
        assert question.why.key == ("kr.predict_why_tie" if len(right) > 1 else "kr.predict_why"), values
        if others and len(right) == 1:
            assert question.why.values["margin"] == pytest.approx(min(others) / loop.min() - 1, rel=1e-6)
            assert question.why.values["margin"] > 0.02               # right by more than the margin a tie allows


def test_kr_loo_question_offers_the_presets_at_the_defaults():
    values = defaults(kr_lesson.PARAMS)
    asked = kr_lesson.loo_question(X, Y, "gaussian", select_bandwidth(X, Y, "gaussian"), (0.01, 0.2, 5.0))
    choices = [str(c) for c in kr_lesson.question(asked, "gaussian").choices]
    assert "h = 0.01" in choices and "h = 5" in choices and values[KERNEL.key] == "gaussian"


@checks(ah_lesson.question, over=(DATASET, N, NOISE, ah_lesson.N_QUERIES, KERNEL))
def test_ah_wide_rows_question_matches_the_weights(settings):
    """ah.predict_q / ah.predict_why / ah.shape_*: at h = 10 the rows are nearly flat (entropy above 95 % of log N,
    no weight near 1/2), computed here from numpy weights, for every kernel, at seeds 0-4 of both datasets and the
    n, noise and query sliders' ends; the lesson reveals that answer with those numbers."""
    from tests.lessons.test_attention_heatmap import _numpy_weights

    for values in settings:
        data = data_of(values)
        kernel, m, n = values[KERNEL.key], values[ah_lesson.N_QUERIES.key], len(data["x"])
        xq = np.linspace(data["x_grid"][0], data["x_grid"][-1], m)
        w = _numpy_weights(xq, data["x"], kernel, 10.0)
        entropy = float(-(w * np.log(w)).sum(1).mean())
        assert entropy > 0.95 * math.log(n) and w.max() < 0.5, values
        question = ah_lesson.question(ah_lesson.regimes_of(data, kernel, m), n, kernel)
        assert ah_lesson.ROW_SHAPES[question.answer] == "flat"
        assert question.why.values["ent"] == pytest.approx(entropy, abs=1e-9)


@checks(sk_lesson.question, over=(sk_lesson.D, sk_lesson.SPREAD))
def test_sk_gap_question_matches_the_two_weight_maps_it_reveals(settings):
    """sk.predict_q / sk.predict_why / sk.gap_*: the answer is the size class of the largest gap between the two
    weight maps drawn (computed here from them)."""
    for values in settings:
        res = sk_lesson.figures(values, {})["softmax_vs_kernel"].data()
        gap = float(np.abs(res["dot"] - res["gauss"]).max())
        assert sk_lesson.question(res, values[sk_lesson.SPREAD.key]).answer == \
            (0 if gap < 1e-9 else 1 if gap < 0.05 else 2), values
    res = sk_lesson.figures(defaults(sk_lesson.PARAMS), {})["softmax_vs_kernel"].data()
    assert str(sk_lesson.question(res, 0.0).choices[0]) == t("sk.gap_0")


@checks(mk_lesson.question, together=(mk_lesson.KIND, mk_lesson.VALID))
def test_mk_rows_question_matches_post_zeroing_by_hand(settings):
    """mk.predict_q / mk.predict_why / mk.rows_*: softmax over all keys, then zeroing the masked weights leaves a
    row summing to 1 exactly when it has no masked key (numpy, on the page's own logits)."""
    import torch.nn.functional as F

    from explorer import masking as M
    for values in settings:
        length, d, seed = values[mk_lesson.LENGTH.key], values[mk_lesson.D.key], values[mk_lesson.SEED.key]
        q, k, _ = M.example(length, d, seed)
        mask = M.make_mask(values[mk_lesson.KIND.key], length, mk_lesson.valid_length(values)).numpy()
        w = F.softmax(q @ k.T / math.sqrt(d), -1).numpy() * mask
        whole = np.isclose(w.sum(1), 1.0)
        by_hand = 0 if whole.all() else 2 if not whole.any() else 1
        question = mk_lesson.question(mk_lesson.figures(values)["masking"].data(), values[mk_lesson.KIND.key])
        assert question.answer == by_hand and question.why.values["whole"] == int(whole.sum()), values


@checks(sc_lesson.question, over=(sc_lesson.D, sc_lesson.N))
def test_sc_growth_question_matches_sampled_logits(settings):
    """sc.predict_q / sc.predict_why / sc.law_*: the std of q·k for N(0, 1) entries, sampled here with numpy,
    grows with slope 1/2 on log-log axes, i.e. like √d: the lesson's answer."""
    rng = np.random.default_rng(1)
    ds = np.array([1, 4, 16, 64, 256, 1024])
    stds = [np.std((rng.normal(size=(4000, d)) * rng.normal(size=(4000, d))).sum(1)) for d in ds]
    slope = np.polyfit(np.log(ds), np.log(stds), 1)[0]
    assert abs(slope - 0.5) < 0.05
    for values in settings:
        tables = sc_lesson.figures(values)["logit_std"].data()
        assert str(sc_lesson.question(tables, values[sc_lesson.D.key]).mark()) == \
            t("fig.answer_is", answer=t("sc.law_1"))


@checks(ef_lesson.question, over=(DATASET, ef_lesson.H, ef_lesson.KIND))
def test_ef_gain_question_matches_the_error_curve_it_reveals(settings):
    """ef.predict_q / ef.predict_why / ef.gain_*: the slope fitted here to the drawn iid error curve gives the
    factor 4^(-slope) that the reason quotes (trigonometric features; it is nearest 2, the answer)."""
    for values in settings:
        err = ef_lesson.figures(values)["efficient_error"].data()
        factor = 4 ** -np.polyfit(np.log(err["m"]), np.log(err["iid"]), 1)[0]
        question = ef_lesson.question(err, values[ef_lesson.KIND.key])
        assert question.answer == 1
        if values[ef_lesson.KIND.key] == "trig":
            assert question.why.values["factor"] == pytest.approx(factor, rel=0.2)
            assert int(np.argmin([abs(math.log(factor / f)) for f in (4, 2, 1)])) == 1, values


@checks(lt_lesson.question, lesson=lt_lesson, over=())
def test_lt_head_question_matches_ablation_computed_here(settings):
    """lt.predict_q / lt.predict_why: after 100 steps of reverse, at seeds 0-4, the head whose removal raises the
    evaluation loss most, ablated here with explorer.training.ablate on the page's evaluation batch, and the rise
    the sentence quotes."""
    from explorer.training import Trainer, ablate
    from explorer.training.probes import EVAL_SEED, EVAL_SIZE

    for values in settings:
        trainer = Trainer.for_task(values[lt_lesson.TASK.key], seed=values[lt_lesson.SEED.key])
        trainer.step(100)
        batch = trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED))    # the page's batch
        loss = {h: float(trainer.task.loss(ablate(trainer.model, batch.inputs, [(0, h)] if h >= 0 else [],
                                                  attn_mask=batch.attn_mask), batch)) for h in (-1, 0, 1)}
        top = max((0, 1), key=loss.get)
        heads = lt_lesson.heads(trainer)
        question = lt_lesson.question(lt_lesson.ablation(trainer, [], "zero"), heads)
        assert heads[question.answer] == f"l0h{top}", values
        assert question.why.values["rise"] == pytest.approx(loss[top] - loss[-1], rel=1e-5)


@checks(kr_lesson.question, together=(KERNEL,), fixed={NOISE: 0.0},
        also=[{DATASET: "d2l", N: 10, NOISE: 0.0, KERNEL: k} for k in ("boxcar", "epanechnikov")])
def test_kr_question_at_noise_zero_offers_scored_choices_and_says_no_inf(settings):
    """kr.predict_why / kr.predict_why_clean / kr.predict_why_only / kr.predict_why_flat: on noise-free data (sine
    mix at n = 200, every kernel; D2L at n = 10 with compact kernels, where most bandwidths leave a point without a
    neighbour) the offered leave-one-out optimum has a score (rounded up where rounding down fell below the
    nearest-neighbour limit: sine mix seed 2, Epanechnikov, 0.0773 offered as 0.077 had none), the answer is the
    lowest score of a plain loop, the reason names no noise, and no sentence says inf."""
    from tests.lessons.sweep import assert_words

    for values in settings:
        name, kernel, x, y, optimum, asked, question = _kr_asked(values, clean=True)
        loop = np.array([_loo_any(x, y, kernel, h) for h in asked["h"]])
        assert loop[question.answer] == pytest.approx(loop.min(), rel=1e-9), values
        if kernel != "constant" and optimum >= 0.01:
            offered = [h for h in asked["h"] if h not in presets(name).values()]
            assert all(np.isfinite(_loo_any(x, y, kernel, h)) for h in offered), (values, offered)
        assert question.why.key != "kr.predict_why"                  # the noise reason, on noise-free data
        assert_words(question.why)
