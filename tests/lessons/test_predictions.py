"""Predict, then reveal: on every page the answer revealed is the one an independent computation gives, the
figure waits behind the question, and the switch follows lecture mode and the URL."""

import math
import re

import numpy as np
import pytest
import torch

from explorer.data import make_dataset
from explorer.i18n import t
from explorer.lessons import attention_heatmap as ah_lesson
from explorer.lessons import kernel_regression as kr_lesson
from tests.app.helpers import assert_clean, chart_data, page
from tests.lessons.sweep import SEEDS

D = make_dataset("sine_mix", 200, 0.3, 0)
X, Y = np.asarray(D.x, float), np.asarray(D.y, float)


def ask(name: str, key: str, pick: int = 0):
    """The page with Predict first on: the question's options, then the page after answering ``pick``."""
    at = page(name)
    at.session_state["ui.predict"] = True
    at.run()
    assert_clean(at)
    radio = at.radio(key=f"predict.{key}.pick")
    options = radio.options
    charts_before = {e.proto.id for e in at.get("plotly_chart")}
    radio.set_value(pick).run()
    at.button(key=f"predict.{key}.reveal").click().run()
    assert_clean(at)
    revealed = verdict_text(at)
    answer = re.search(r"The answer: \*\*(.+?)\*\*", revealed).group(1)
    new = {e.proto.id for e in at.get("plotly_chart")} - charts_before
    assert new, "revealing drew no new figure"
    return at, options, answer, revealed


def verdict_text(at) -> str:
    """The revealed verdict (its headline, then the sentence on why), as one text."""
    texts = [m.value for m in at.markdown]
    i = next(i for i, v in enumerate(texts) if "The answer: **" in v)
    return f"{texts[i]} {texts[i + 1]}"


def test_kr_loo_question_matches_a_brute_force_leave_one_out():
    """kr.predict_q / kr.predict_why: the offered bandwidth with the lowest leave-one-out MSE, each point predicted
    from the other 199 by a plain numpy loop."""
    _at, options, answer, _ = ask("kernel_regression", "kr.loo")

    def loo(h):
        errors = []
        for i in range(len(X)):
            others = np.arange(len(X)) != i
            w = np.exp(-(X[i] - X[others]) ** 2 / (2 * h * h))
            errors.append((w @ Y[others] / w.sum() - Y[i]) ** 2)
        return np.mean(errors)
    hs = [float(o.split("= ")[1]) for o in options]
    assert answer == options[int(np.argmin([loo(h) for h in hs]))]
    assert "h = 0.01" in options and "h = 5" in options                        # the presets are offered


def _loo_any(x, y, kernel, h):
    """Leave-one-out MSE of any kernel by a plain loop over the points (inf when a point has no neighbour)."""
    from explorer.kernels import KERNELS

    errors = []
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        w = KERNELS[kernel].profile(torch.tensor((x[i] - x[others]) / h)).numpy()
        if w.sum() == 0:
            return math.inf
        errors.append((w @ y[others] / w.sum() - y[i]) ** 2)
    return float(np.mean(errors))


@pytest.mark.sweep
@pytest.mark.parametrize("name", ["sine_mix", "d2l"])
def test_kr_question_offers_choices_a_margin_apart_and_its_answer_holds(name):
    """kr.predict_q / kr.predict_why / kr.predict_why_tie, at seeds 0-4 and every kernel: the offered bandwidths are
    the presets plus the LOO optimum only when it is 1.5x from each; the answer is the lowest leave-one-out error
    of a plain loop; every choice within 2 % of it counts as right, and the margin the page states (the next
    best's excess) is the loop's."""
    from explorer.bandwidth import select_bandwidth
    from explorer.data import DATASETS
    from explorer.kernels import KERNELS
    from explorer.lessons.shared import presets
    spec = DATASETS[name]
    for seed in SEEDS:
        d = make_dataset(name, spec.default_n, spec.default_noise, seed)
        x, y = np.asarray(d.x, float), np.asarray(d.y, float)
        for kernel in KERNELS:
            optimum = select_bandwidth(x, y, kernel)
            q = kr_lesson.loo_question(x, y, kernel, optimum, tuple(presets(name).values()))
            rounded = float(f"{optimum:.2g}")
            far = all(abs(math.log(rounded / p)) >= math.log(1.5) for p in presets(name).values())
            assert set(q["h"]) == set(presets(name).values()) | ({rounded} if far else set())
            loop = np.array([_loo_any(x, y, kernel, h) for h in q["h"]])
            best = int(np.argmin(loop))
            assert loop[q["best"]] == pytest.approx(loop[best], rel=1e-9), (seed, kernel)
            right = {i for i, v in enumerate(loop) if v <= loop.min() * 1.02}
            assert set(q["right"]) == right, (seed, kernel, loop)
            others = [v for i, v in enumerate(loop) if i not in right]
            if others:
                assert q["margin"] == pytest.approx(min(others) / loop.min() - 1, rel=1e-6)
                assert q["margin"] > 0.02                       # right by more than the margin a tie allows
    at = page("kernel_regression")                      # the page states the same answer and margin
    at.selectbox(key="data.name").set_value(name).run()
    at.session_state["ui.predict"] = True
    at.run()
    at.radio(key="predict.kr.loo.pick").set_value(0).run()
    at.button(key="predict.kr.loo.reveal").click().run()
    d = make_dataset(name, spec.default_n, spec.default_noise, 0)
    q = kr_lesson.loo_question(d.x, d.y, "gaussian", select_bandwidth(d.x, d.y, "gaussian"),
                             tuple(presets(name).values()))
    offered = [f"h = {h:g}" for h in q["h"]]
    want = t("kr.predict_why", h=offered[q["best"]], mse=q['scores'][q['best']], margin=q['margin'])
    assert want in verdict_text(at)


@pytest.mark.sweep
def test_ah_wide_rows_question_matches_the_weights():
    """ah.predict_q / ah.predict_why / ah.shape_*: at h = 10 the rows are nearly flat (entropy above 95 % of log N,
    no weight near 1/2), computed here from numpy weights for every kernel, at seeds 0-4 of both datasets and the
    n and query sliders' ends; the page reveals that answer with those numbers."""
    from tests.lessons.test_attention_heatmap import _cases, _numpy_weights, _queries

    for name, n, seed, m in _cases(SEEDS):
        d = make_dataset(name, n, 0.3, seed)
        xq = _queries(d, m).numpy()
        for kernel in ("gaussian", "boxcar", "epanechnikov", "triangular", "laplace", "constant"):
            w = _numpy_weights(xq, d.x, kernel, 10.0)
            entropy = float(-(w * np.log(w)).sum(1).mean())
            assert entropy > 0.95 * math.log(n) and w.max() < 0.5, (name, n, seed, m, kernel)
            r = ah_lesson.heatmap_regimes(d.x, kernel, xq)
            assert ah_lesson.ROW_SHAPES[ah_lesson.row_shape(r["entropy_large"], math.log(n), r["max_weight_large"])] \
                == "flat"
    for seed in SEEDS:
        at = page("attention_heatmap")
        at.number_input(key="data.seed").set_value(seed).run()
        at.session_state["ui.predict"] = True
        at.run()
        at.radio(key="predict.ah.wide.pick").set_value(0).run()
        at.button(key="predict.ah.wide.reveal").click().run()
        d = make_dataset("sine_mix", 200, 0.3, seed)
        w = _numpy_weights(_queries(d, 100).numpy(), d.x, "gaussian", 10.0)
        why = verdict_text(at)
        assert t("ah.shape_flat") in why and f"{float(-(w * np.log(w)).sum(1).mean()):.2f}" in why


def test_sk_gap_question_matches_the_two_weight_maps_it_reveals():
    """sk.predict_q / sk.predict_why / sk.gap_*: at spread 0 the two heatmaps drawn agree to rounding."""
    at, _options, answer, _ = ask("softmax_kernel", "sk.gap")
    dot, gauss = (np.asarray(tr["z"], float) for tr in chart_data(at, "side_by_side") if tr["type"] == "heatmap")
    assert np.abs(dot - gauss).max() < 1e-9 and answer == t("sk.gap_0")


@pytest.mark.parametrize("kind, valid, expected", [("causal", None, 1), ("padding", 6, 2), ("padding", 0, 2)])
def test_mk_rows_question_matches_post_zeroing_by_hand(kind, valid, expected):
    """mk.predict_q / mk.predict_why / mk.rows_*: softmax over all keys, then zeroing the masked weights leaves a
    row summing to 1 exactly when it has no masked key (numpy, on random logits of the page's size)."""
    at = page("masking")
    at.session_state["ui.predict"] = True
    at.session_state["mask.kind"] = kind
    if valid is not None:
        at.session_state["mask.valid"] = valid
    at.run()
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(8, 8))
    mask = np.tril(np.ones((8, 8), bool)) if kind == "causal" else np.arange(8)[None] < valid
    mask = np.broadcast_to(mask, (8, 8))
    w = np.exp(logits) / np.exp(logits).sum(1, keepdims=True) * mask
    whole = np.isclose(w.sum(1), 1.0)
    by_hand = 0 if whole.all() else 2 if not whole.any() else 1
    assert by_hand == expected
    at.radio(key="predict.mk.rows.pick").set_value(0).run()
    at.button(key="predict.mk.rows.reveal").click().run()
    revealed = next(m.value for m in at.markdown if "The answer: **" in m.value)
    assert f"**{t(f'mk.rows_{expected}')}**" in revealed


def test_sc_growth_question_matches_sampled_logits():
    """sc.predict_q / sc.predict_why / sc.law_*: the std of q·k for N(0, 1) entries, sampled here with numpy,
    grows with slope 1/2 on log-log axes, i.e. like √d."""
    _, _options, answer, _ = ask("scaling", "sc.growth")
    rng = np.random.default_rng(1)
    ds = np.array([1, 4, 16, 64, 256, 1024])
    stds = [np.std((rng.normal(size=(4000, d)) * rng.normal(size=(4000, d))).sum(1)) for d in ds]
    slope = np.polyfit(np.log(ds), np.log(stds), 1)[0]
    assert abs(slope - 0.5) < 0.05 and answer == t("sc.law_1")


def test_ef_gain_question_matches_the_error_curve_it_reveals():
    """ef.predict_q / ef.predict_why / ef.gain_*: the slope fitted here to the drawn iid error curve gives the
    factor 4^(-slope) that the answer names (about 2 for trigonometric features)."""
    at, options, answer, _ = ask("efficient_attention", "ef.gain")
    curve = next(tr for tr in chart_data(at, "efficient_error") if tr.get("mode") == "lines+markers")
    m, err = np.asarray(curve["x"], float), np.asarray(curve["y"], float)
    factor = 4 ** -np.polyfit(np.log(m), np.log(err), 1)[0]
    nearest = int(np.argmin([abs(math.log(factor / f)) for f in (4, 2, 1)]))
    assert answer == options[nearest] == t("ef.gain_1")


@pytest.mark.sweep
def test_lt_head_question_matches_ablation_computed_here():
    """lt.predict_q / lt.predict_why: after 100 steps of reverse, at seeds 0-4, the head whose removal raises the
    evaluation loss most, ablated here with explorer.training.ablate on the page's evaluation batch, and the rise
    the sentence quotes."""
    from explorer.training import ablate
    from explorer.training.probes import EVAL_SEED, EVAL_SIZE

    for seed in SEEDS:
        at = page("live_training")
        at.number_input(key="train.seed").set_value(seed).run()
        trainer = at.session_state["train.trainer"]
        trainer.step(100)
        at.session_state["ui.predict"] = True
        at.run()
        batch = trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED))    # the page's batch
        loss = {h: float(trainer.task.loss(ablate(trainer.model, batch.inputs, [(0, h)] if h >= 0 else [],
                                                  attn_mask=batch.attn_mask), batch)) for h in (-1, 0, 1)}
        top = max((0, 1), key=loss.get)
        at.radio(key="predict.lt.head.pick").set_value(0).run()
        at.button(key="predict.lt.head.reveal").click().run()
        revealed = verdict_text(at)
        assert f"**{t('fig.layer_head', layer=0, head=top)}**" in revealed, seed
        assert t("lt.predict_why", rise=loss[top] - loss[-1]) in revealed


def test_the_figure_waits_until_revealed_and_the_switch_follows_lecture_mode_and_the_url():
    """ui.predict_help: off by default, on by default in lecture mode, ?predict= overrides; the figure appears only
    after Reveal."""
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import ROOT

    at = page("scaling")
    assert not at.session_state["ui.predict"] and not at.radio           # off by default: nothing asked
    at = AppTest.from_file(str(ROOT / "pages" / "scaling.py"), default_timeout=60)
    at.query_params["lecture"] = "1"
    at.run()
    assert at.session_state["ui.predict"] and "std" not in " ".join(e.proto.id for e in at.get("plotly_chart"))
    at = AppTest.from_file(str(ROOT / "pages" / "scaling.py"), default_timeout=60)
    at.query_params["lecture"] = "1"
    at.query_params["predict"] = "0"
    at.run()
    assert not at.session_state["ui.predict"] and not at.radio
    _, _, _, revealed = ask("scaling", "sc.growth", pick=0)
    assert revealed.startswith("#### :orange[**Not quite** (you said like d).]")


@pytest.mark.parametrize("name, key", [("kernel_regression", "kr.loo"), ("attention_heatmap", "ah.wide"),
                                       ("softmax_kernel", "sk.gap"), ("icl_bandwidth", "ib.next"),
                                       ("masking", "mk.rows"), ("scaling", "sc.growth"),
                                       ("efficient_attention", "ef.gain"), ("live_training", "lt.head")])
def test_every_page_asks_in_chinese_too(name, key):
    at = page(name)
    at.session_state["ui.predict"] = True
    at.session_state["ui.lang"] = "zh"
    at.run()
    assert_clean(at)
    question = next(m.value for m in at.markdown if m.value.startswith("**先预测**："))
    assert re.search(r"[\u4e00-\u9fff]{4}", question)
    assert all(re.search(r"[\u4e00-\u9fff]|h = |L\d", o) for o in at.radio(key=f"predict.{key}.pick").options)
