"""Claims of the Scaling page, on its tables, over the sweep of its settings (every d and queries-per-d option's ends
and middle, seeds 0-4, and every n); the softmax Jacobian norms are recomputed here in numpy from the logits' own
draw. Headless: the lesson's functions, no page."""

import functools
import math

import numpy as np
import pytest

from explorer.lessons import scaling as SC
from explorer.lessons.params import defaults
from explorer.scaling import key_norm_range, logit_stats, regime_vs_scale, scaling_summary
from tests.lessons.sweep import checks

DS = [2 ** i for i in range(11)]
NS = SC.N.options                      # every option of the queries-per-d slider


EVERY_N = {"extra": {SC.N: NS}}          # every queries-per-d option, not only its ends and middle


@functools.cache
def _tables(n, seed):
    return logit_stats(DS, n, False, seed), logit_stats(DS, n, True, seed)


@functools.cache
def _lesson_tables(n, seed):
    """The lesson's data of its tables (they depend on n and the seed, not on d: d only marks them)."""
    values = {**defaults(SC.PARAMS), SC.N.key: n, SC.SEED.key: seed}
    return SC.figures(values)["logit_std"].data()


@functools.cache
def _replicated_draw(n, seed):
    """The figure's draw written out here: for each d of its table in order, n queries then n keys with N(0, 1)
    entries from one generator seeded with the page's seed. {d: (q, k)} as numpy arrays."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return {d: tuple(torch.randn(n, d, generator=gen, dtype=torch.float64).numpy() for _ in "qk") for d in DS}


def _softmax(logits):
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def test_the_key_norms_are_the_figures_own_not_a_second_draw():
    """At n = 32, seed 0, d = 128 the figure's 32 keys span 9.99 to 12.31; a separate draw of 256 keys (what the
    notice once quoted whatever n was) spans a wider range."""
    values = {**defaults(SC.PARAMS), SC.N.key: 32, SC.SEED.key: 0, SC.D.key: 128}
    said = SC.notice(_drawn(values)[0], 128)
    assert (round(said.values["kmin"], 2), round(said.values["kmax"], 2)) == (9.99, 12.31)
    other = key_norm_range(128, 256, 0)
    assert other[0] < said.values["kmin"] and other[1] > said.values["kmax"]


def _drawn(values):
    """The tables the page draws at ``values`` (the lesson's own data) and the ones computed here."""
    n, seed = values[SC.N.key], values[SC.SEED.key]
    return _lesson_tables(n, seed), _tables(n, seed)


@checks(SC.notice, SC.question, **EVERY_N)
def test_std_and_sharpening_lines_over_n_and_seeds(settings):
    """sc.notice lines 1-2 / sc.sharpen_from / sc.sharpen_never / sc.predict_why: unscaled std follows √d (log-log
    slope 0.5), scaled std is 1, scaled max weight barely moves; the page's 'from d on' is the smallest d from which
    every larger d keeps more than half its weight on one key; the question's answer is 'like √d', and its reason
    quotes the std at the chosen d."""
    for values in settings:
        tables, (un, sc) = _drawn(values)
        d = values[SC.D.key]
        assert np.allclose(tables["unscaled"]["logit_std"], un["logit_std"])
        slope = np.polyfit(np.log(DS), np.log(un["logit_std"]), 1)[0]
        assert abs(slope - 0.5) < 0.05
        question = SC.question(tables, d)
        assert question.answer == 1 and question.why.values["std"] == pytest.approx(
            float(un.set_index("d").loc[d, "logit_std"]))
        assert np.allclose(sc["logit_std"], 1, atol=0.3)          # (n = 32 at d = 1: 32² heavy-tailed products)
        mw = un.set_index("d")["max_weight"]
        tail = [e for e in DS if all(mw[f] > 0.5 for f in DS if f >= e)]
        sharpen = SC.notice(tables, d).values["sharpen"]
        if tail:
            assert sharpen.key == "sc.sharpen_from" and sharpen.values["d_half"] == tail[0], values
            # "on average" (the saturation chart's mean over rows), recomputed from the figure's own logits
            q, k = _replicated_draw(values[SC.N.key], values[SC.SEED.key])[tail[0]]
            mean_largest = _softmax(q @ k.T).max(axis=1).mean()
            assert mean_largest > 0.5 and sharpen.values["mw"] == pytest.approx(mean_largest, rel=1e-9)
            assert "on average" in str(sharpen) and "typical" not in str(sharpen)
        else:
            assert sharpen.key == "sc.sharpen_never", values
        rise = mw.iloc[-1] - mw.iloc[0]
        s = scaling_summary(un, sc)
        assert s["scaled_maxw"][1] - s["scaled_maxw"][0] < 0.25 * rise             # 'stays', against the rise


def _jacobian_norm(logits):
    """Mean over rows of ‖diag(p) − ppᵀ‖_F, written out: ‖·‖²_F = Σ p² − 2 Σ p³ + (Σ p²)²."""
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    s2, s3 = (p ** 2).sum(1), (p ** 3).sum(1)
    return float(np.sqrt(s2 - 2 * s3 + s2 ** 2).mean())


@checks(SC.grad_text, **EVERY_N)
def test_gradient_text_fills_every_clause_from_the_tables(settings):
    """sc.grad_text / sc.cross_from / sc.cross_never / sc.usual_more / sc.usual_less / sc.usual_mixed: the Frobenius
    norm formula above matches the table (on logits drawn here as the table draws them); unscaled it peaks at an
    interior d; 'below the scaled value from d on' is the smallest d from which every larger d is below (or 'stays
    above' when the last is not); at d = 64 and 128 the sentence says more or less as the numbers do; scaled,
    entropy barely moves. Over every n and seeds 0-4."""
    import torch
    seen = set()
    for values in settings:
        tables, (un, sc) = _drawn(values)
        said = SC.grad_text(tables)
        s = scaling_summary(un, sc)
        g_un, g_sc = un.set_index("d")["softmax_grad_norm"], sc.set_index("d")["softmax_grad_norm"]
        assert 1 < said.values["d_peak"] < 1024
        below = [d for d in DS if all(g_un[e] < g_sc[e] for e in DS if e >= d)]
        cross = said.values["cross"]
        assert cross.key == ("sc.cross_from" if below else "sc.cross_never"), values
        assert not below or cross.values["d_cross"] == below[0]
        seen.add(not below)
        (u64, s64), (u128, s128) = (float(g_un[64]), float(g_sc[64])), (float(g_un[128]), float(g_sc[128]))
        usual = said.values["usual"]
        assert usual.key == ("sc.usual_more" if u64 > s64 and u128 > s128 else
                             "sc.usual_less" if u64 < s64 and u128 < s128 else "sc.usual_mixed"), values
        assert usual.values["u64"] == pytest.approx(u64) and usual.values["s128"] == pytest.approx(s128)
        change = s["unscaled_entropy"][0] - s["unscaled_entropy"][1]
        assert s["scaled_entropy"][1] - s["scaled_entropy"][0] < 0.15 * change
        assert "—" not in str(said)
    assert seen == {True, False}                       # both endings occur over the options
    # the measure itself, on logits drawn here with the same N(0, 1) entries
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(256, 64, generator=gen, dtype=torch.float64) for _ in range(2))
    logits = (q @ k.T).numpy()
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    jac = np.stack([np.diag(r) - np.outer(r, r) for r in p[:8]])
    assert np.linalg.norm(jac, axis=(1, 2)).mean() == pytest.approx(_jacobian_norm(logits[:8]), rel=1e-12)


def test_regime_depends_on_the_scale_alone():
    """sc.grad_text: near-uniform rows give about 1/√n; the curve rises then shrinks at large scale; each
    unscaled d sits on the curve at s = its logit std."""
    curve = regime_vs_scale(np.logspace(-1, 2, 61), 256, 0)
    g = curve["softmax_grad_norm"].to_numpy()
    assert g[0] == pytest.approx(1 / math.sqrt(256), rel=0.1)
    assert 0 < int(g.argmax()) < len(g) - 1 and g[-1] < 0.5 * g.max()
    un = logit_stats([16, 256], 256, False, 0)
    at_s = regime_vs_scale(un["logit_std"], 256, 1)
    assert np.allclose(at_s["softmax_grad_norm"], un["softmax_grad_norm"], rtol=0.15)


@checks(SC.notice, extra={SC.D: SC.D.options})
def test_kernel_reading_needs_equal_key_norms(settings):
    """sc.notice line 3: the page's keys have N(0, I) entries, whose norms differ (so the Gaussian-kernel reading
    holds only up to the per-key bias), at every d of the slider and seeds 0-4; the notice quotes them."""
    for values in settings:
        d, n, seed = values[SC.D.key], values[SC.N.key], values[SC.SEED.key]
        norms = np.linalg.norm(_replicated_draw(n, seed)[d][1], axis=1)       # the figure's own keys at d
        lo, hi = norms.min(), norms.max()
        assert hi > lo and (d == 1 or lo < math.sqrt(d) < hi)
        said = SC.notice(_drawn(values)[0], d)
        assert (said.values["kmin"], said.values["kmax"]) == pytest.approx((lo, hi), rel=1e-12)
        assert f"from {lo:.1f} to {hi:.1f} at d = {d}" in str(said)
        assert "only when all keys have the same norm" in str(said)
