"""Claims of the Scaling page, on its tables, over every queries-per-d option (32 to 512) and seeds 0-4; the
softmax Jacobian norms are recomputed here in numpy from the logits' own draw."""

import math

import numpy as np
import pytest

from explorer.i18n import t
from explorer.lessons import scaling as SC
from explorer.scaling import key_norm_range, logit_stats, regime_vs_scale, scaling_summary
from tests.app.helpers import assert_clean, page
from tests.lessons.sweep import SEEDS

DS = [2 ** i for i in range(11)]
NS = SC.N.options                      # every option of the queries-per-d slider


def _tables(n, seed):
    return logit_stats(DS, n, False, seed), logit_stats(DS, n, True, seed)


@pytest.mark.sweep
def test_std_and_sharpening_lines_over_n_and_seeds():
    """sc.notice lines 1-2 / sc.sharpen_from / sc.sharpen_never / sc.predict_why: unscaled std follows √d (log-log
    slope 0.5), scaled std is 1, scaled max weight barely moves; the page's 'from d on' is the smallest d from which
    every larger d keeps more than half its weight on one key; the question's answer is 'like √d'."""
    for n in NS:
        for seed in SEEDS:
            un, sc = _tables(n, seed)
            slope = np.polyfit(np.log(DS), np.log(un["logit_std"]), 1)[0]
            assert abs(slope - 0.5) < 0.05 and SC.growth_law(un["d"], un["logit_std"]) == 1
            assert np.allclose(sc["logit_std"], 1, atol=0.3)          # (n = 32 at d = 1: 32² heavy-tailed products)
            s = scaling_summary(un, sc)
            mw = un.set_index("d")["max_weight"]
            tail = [d for d in DS if all(mw[e] > 0.5 for e in DS if e >= d)]
            assert s["d_half"] == (tail[0] if tail else None), (n, seed)
            rise = mw.iloc[-1] - mw.iloc[0]
            assert s["scaled_maxw"][1] - s["scaled_maxw"][0] < 0.25 * rise             # 'stays', against the rise
    at = page("scaling")
    for seed in SEEDS:
        at.number_input(key="scale.seed").set_value(seed).run()
        assert_clean(at)
        s = scaling_summary(*_tables(256, seed))
        text = next(m.value for m in at.markdown if m.value.startswith("- Unscaled, the std"))
        assert t("sc.sharpen_from", d_half=s["d_half"], mw=s['mw_half']) in text


def _jacobian_norm(logits):
    """Mean over rows of ‖diag(p) − ppᵀ‖_F, written out: ‖·‖²_F = Σ p² − 2 Σ p³ + (Σ p²)²."""
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    s2, s3 = (p ** 2).sum(1), (p ** 3).sum(1)
    return float(np.sqrt(s2 - 2 * s3 + s2 ** 2).mean())


@pytest.mark.sweep
def test_gradient_text_fills_every_clause_from_the_tables():
    """sc.grad_text / sc.cross_from / sc.cross_never / sc.usual_more / sc.usual_less / sc.usual_mixed: the Frobenius
    norm formula above matches the table (on logits drawn here as the table draws them); unscaled it peaks at an
    interior d; 'below the scaled value from d on' is the smallest d from which every larger d is below (or 'stays
    above' when the last is not); at d = 64 and 128 the sentence says more or less as the numbers do; scaled,
    entropy barely moves. Over every n and seeds 0-4."""
    import torch
    seen = set()
    for n in NS:
        for seed in SEEDS:
            un, sc = _tables(n, seed)
            s = scaling_summary(un, sc)
            g_un, g_sc = un.set_index("d")["softmax_grad_norm"], sc.set_index("d")["softmax_grad_norm"]
            assert 1 < s["d_peak"] < 1024
            below = [d for d in DS if all(g_un[e] < g_sc[e] for e in DS if e >= d)]
            assert s["d_cross"] == (below[0] if below else None), (n, seed)
            seen.add(s["d_cross"] is None)
            for d in (64, 128):
                assert s["usual"][d] == (pytest.approx(g_un[d]), pytest.approx(g_sc[d]))
            change = s["unscaled_entropy"][0] - s["unscaled_entropy"][1]
            assert s["scaled_entropy"][1] - s["scaled_entropy"][0] < 0.15 * change
    assert seen == {True, False}                       # both endings occur over the options
    # the measure itself, on logits drawn here with the same N(0, 1) entries
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(256, 64, generator=gen, dtype=torch.float64) for _ in range(2))
    logits = (q @ k.T).numpy()
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    jac = np.stack([np.diag(r) - np.outer(r, r) for r in p[:8]])
    assert np.linalg.norm(jac, axis=(1, 2)).mean() == pytest.approx(_jacobian_norm(logits[:8]), rel=1e-12)
    at = page("scaling")
    for n in (32, 512):
        at.select_slider(key="scale.n").set_value(n).run()
        assert_clean(at)
        s = scaling_summary(*_tables(n, 0))
        text = next(m.value for m in at.markdown if m.value.startswith("**The measure.**"))
        want = t("sc.cross_from", d_cross=s["d_cross"]) if s["d_cross"] else t("sc.cross_never", d_max=1024)
        assert want in text and "—" not in text
        (u64, s64), (u128, s128) = s["usual"][64], s["usual"][128]
        key = "sc.usual_more" if u64 > s64 and u128 > s128 else "sc.usual_less" if u64 < s64 and u128 < s128 \
            else "sc.usual_mixed"
        assert t(key, u64=u64, s64=s64, u128=u128, s128=s128, more_d=64,
                 less_d=128)[:40] in text


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


@pytest.mark.sweep
def test_kernel_reading_needs_equal_key_norms():
    """sc.notice line 3: the page's keys have N(0, I) entries, whose norms differ (so the Gaussian-kernel reading
    holds only up to the per-key bias), at every d of the slider and seeds 0-4."""
    for d in SC.D.options:
        for seed in SEEDS:
            lo, hi = key_norm_range(d, 256, seed)
            assert hi > lo and (d == 1 or lo < math.sqrt(d) < hi)
    at = page("scaling")
    lo, hi = key_norm_range(128, 256, 0)
    text = next(m.value for m in at.markdown if m.value.startswith("- Unscaled, the std"))
    assert f"from {lo:.1f} to {hi:.1f} at d = 128" in text and "only when all keys have the same norm" in text
