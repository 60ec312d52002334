"""Claims of the "Softmax is a kernel" page, on the q, k, v and data its figures draw."""

import math

import numpy as np
import pytest
import torch

from explorer import attention as A
from explorer import bridge, lessons
from explorer.bridge import compare, random_qkv, temperature_sweep, topk_error_curve
from explorer.data import make_dataset, query_grid
from explorer.i18n import t
from explorer.learned import ParametricAttention, fit_parametric_attention, learn_bandwidth
from explorer.regression import nadaraya_watson, nw_weights, select_bandwidth
from tests.app.helpers import assert_clean, page

DEFAULT = {"d": 16, "n_keys": 24, "spread": 0.0, "seed": 0}       # the page's defaults (τ = √d)


@pytest.mark.parametrize("d", [1, 4, 16, 64, 256])
def test_equal_norms_agree_to_rounding_and_the_bias_repairs_unequal_ones(d):
    """sk.equal / sk.unequal / sk.notice line 1, over the d range of the slider."""
    tau = math.sqrt(d)
    q, k, v = random_qkv(d, 16, 24, 0.0, 0)
    c = compare(q, k, v, tau)
    assert c["max_diff"] < 1e-13
    q, k, v = random_qkv(d, 16, 24, 0.5, 0)
    c = compare(q, k, v, tau)
    assert c["max_diff"] > 1e-3 and c["max_diff_corrected"] < 1e-13
    assert t("sk.unequal", diff=f"{c['max_diff']:.3f}", fixed=f"{c['max_diff_corrected']:.1e}")


@pytest.mark.parametrize("d", [1, 2, 4, 5, 16, 64, 256])
def test_the_two_wrong_widths_and_their_effects(d):
    """sk.explain: σ = √(τ/2) is always too narrow; σ = √(d/2) is too wide at τ = √d for d > 4."""
    tau = math.sqrt(d)
    w = lessons.wrong_widths(d, tau)
    assert w["half_tau"] < w["sigma"] == pytest.approx(d ** 0.25)
    expected = "too_wide" if d > 4 else "same_width" if d == 4 else "too_narrow"
    assert w["half_d_effect"] == expected
    # and σ = √τ is the right one: Gaussian attention at √τ equals dot-product at τ on a sphere
    q, k, v = random_qkv(d, 8, 12, 0.0, 1)
    _, wd = A.dot_product_attention(q, k, v, tau)
    for sigma, same in ((w["sigma"], True), (w["half_tau"], False)):
        _, wg = A.gaussian_kernel_attention(q, k, v, sigma)
        assert torch.allclose(wd, wg, atol=1e-12) is same
    at = page("softmax_kernel")
    assert_clean(at)
    text = next(m.value for m in at.markdown if "Two values often quoted" in m.value)
    assert "σ = √(d/2) = 2.83 is too wide" in text and "σ = √(τ/2) = 1.41 is too narrow" in text


def test_doubling_the_temperature_widens_the_gaussian_by_root_two():
    """sk.notice line 2."""
    q, k, v = random_qkv(16, 16, 24, 0.0, 0)
    _, wd = A.dot_product_attention(q, k, v, 8.0)
    _, wg = A.gaussian_kernel_attention(q, k, v, math.sqrt(4.0) * math.sqrt(2))
    assert torch.allclose(wd, wg, atol=1e-12)


def test_dot_product_prefers_long_keys_and_the_kernel_does_not():
    """sk.notice line 3: with spread norms, the weight a key gets grows with its norm under dot-product
    attention; under the Gaussian kernel long keys are not favoured."""
    q, k, v = random_qkv(16, 256, 24, 0.5, 0)
    c = compare(q, k, v, 4.0)
    norms = c["key_norms"].numpy()
    dot_corr = np.corrcoef(norms, c["dot"].mean(0).numpy())[0, 1]
    gauss_corr = np.corrcoef(norms, c["gauss"].mean(0).numpy())[0, 1]
    assert dot_corr > 0.5 and gauss_corr < 0


def test_temperature_and_bandwidth_sweeps():
    """sk.temp_text / sk.notice line 4: small τ (small h) gives spiky rows, large τ (large h) uniform ones."""
    q, k, _ = random_qkv(16, 16, 24, 0.0, 0)
    sw = temperature_sweep(q, k, bridge.log_grid(0.01, 1000, 61))
    assert sw["max_weight"].iloc[0] > 0.95 and sw["entropy"].iloc[0] < 0.1
    assert sw["entropy"].iloc[-1] > 0.999 * math.log(24)
    d = make_dataset("sine_mix", 200, 0.3, 0)
    nw = bridge.nw_entropy_sweep(torch.tensor(query_grid(d))[::4], torch.tensor(d.x), "gaussian",
                                 bridge.log_grid(0.01, 20, 41))
    assert nw["max_weight"].iloc[0] > 0.6 and nw["entropy"].iloc[-1] > 0.99 * math.log(200)
    assert np.all(np.diff(sw["entropy"]) > -1e-12) and np.all(np.diff(nw["entropy"]) > -1e-12)
    at = page("softmax_kernel")
    text = next(m.value for m in at.markdown if m.value.startswith("Small τ"))
    assert f"{sw['max_weight'].iloc[0]:.2f} (τ = 0.01)" in text and f"{nw['max_weight'].iloc[0]:.2f} (h = 0.01)" in text


def test_topk_text():
    """sk.topk_text: the mass it quotes is the dense weight on each query's top-k keys; k_top = N is dense."""
    q, k, v = random_qkv(16, 16, 24, 0.0, 0)
    curve = topk_error_curve(q, k, v, 4.0)
    _, w = A.dot_product_attention(q, k, v, 4.0)
    kept = float(w.sort(-1, descending=True).values[:, :4].sum(-1).mean())
    assert float(curve.loc[curve["k_top"] == 4, "dense_mass_kept"].iloc[0]) == pytest.approx(kept)
    assert curve["max_abs_output_error"].iloc[-1] < 1e-14
    out, _ = A.topk_attention(q, k, v, 24, 4.0)
    assert torch.allclose(out, A.dot_product_attention(q, k, v, 4.0)[0], atol=1e-14)


def test_learned_bandwidth_text():
    """sk.learned_text: with LOO the learned h ends next to the grid optimum; without it h keeps falling."""
    d = make_dataset("sine_mix", 200, 0.3, 0)
    loo = learn_bandwidth(d.x, d.y, leave_one_out=True)
    self_ = learn_bandwidth(d.x, d.y, leave_one_out=False)
    h_opt = select_bandwidth(d.x, d.y, "gaussian")
    assert abs(math.log(loo["h"].iloc[-1] / h_opt)) < math.log(1.1)
    tail = self_["h"].to_numpy()[-50:]
    assert np.all(np.diff(tail) < 0) and tail[-1] < 0.3 * h_opt


def test_nw_form_reduces_to_nw_exactly_and_trains_local():
    """sk.param_text_nw / sk.nw_form_help / sk.hidden_help: with values = y and no output map a rank-2 q·k
    is the Gaussian kernel exactly; trained, the shown rows stay local; extra units stay at zero."""
    d = make_dataset("sine_mix", 200, 0.3, 0)
    x, y = torch.tensor(d.x), torch.tensor(d.y)
    g = torch.tensor(query_grid(d))
    head = ParametricAttention(2, float(x.mean()), float(x.std()), nw_form=True).double().set_gaussian(0.3)
    out, w = head(g, x, y)
    assert torch.allclose(w, nw_weights(g, x, "gaussian", 0.3), atol=1e-12)
    assert torch.allclose(out, nadaraya_watson(g, x, y, "gaussian", 0.3), atol=1e-12)
    with pytest.raises(ValueError):
        ParametricAttention(1, nw_form=True).set_gaussian(0.3)
    model, _ = fit_parametric_attention(d.x, d.y, hidden=4, seed=0, nw_form=True)
    assert float(model.W_q.weight[2:].abs().max()) == 0 and float(model.W_k.weight[2:].abs().max()) == 0
    at = page("softmax_kernel")
    text = next(m.value for m in at.markdown if m.value.startswith("**NW form.**"))
    dist = float(text.split("lies within ")[1].split(" of it")[0])
    assert dist < 0.2


def test_free_form_is_not_local():
    """sk.param_text_free: with learned values and an output map, the default fit puts a shown query's top
    weight far from it (the sentence quotes where)."""
    at = page("softmax_kernel")
    at.toggle(key="sk.nw_form").set_value(False).run()
    assert_clean(at)
    text = next(m.value for m in at.markdown if m.value.startswith("**Free form.**"))
    x = float(text.split("the query x = ")[1].split(" puts")[0])
    x_top = float(text.split("at x = ")[1].split(",")[0])
    assert abs(x - x_top) > 1.0
