"""Claims of the "Softmax is a kernel" page, on the q, k, v and data its figures draw: over seeds 0-4, the d, key
count, spread and temperature controls at their ends and defaults, both datasets and the n slider's ends."""

import math

import numpy as np
import pytest
import torch

from explorer import attention as A
from explorer import bridge
from explorer.bandwidth import select_bandwidth
from explorer.bridge import compare, random_qkv, temperature_sweep, topk_error_curve
from explorer.data import DATASETS, make_dataset, query_grid
from explorer.learned import ParametricAttention, fit_parametric_attention
from explorer.lessons import softmax_kernel as SK
from explorer.lessons.shared import TEMPERATURES, N
from explorer.regression import nadaraya_watson, nw_weights
from tests.app.helpers import assert_clean, page
from tests.lessons.sweep import SEEDS, ends

DEFAULT = {"d": 16, "n_keys": 24, "spread": 0.0}         # the page's defaults (τ = √d)


def _settings():
    """(d, n_keys, spread, tau) at the defaults and with each control at its ends and middle, the others at their
    defaults; τ = √d, or the temperature slider's ends with the √d switch off."""
    out = [(DEFAULT["d"], DEFAULT["n_keys"], DEFAULT["spread"], None)]
    out += [(d, DEFAULT["n_keys"], DEFAULT["spread"], None) for d in ends(SK.D)]
    out += [(DEFAULT["d"], n, DEFAULT["spread"], None) for n in ends(SK.N_KEYS)]
    out += [(DEFAULT["d"], DEFAULT["n_keys"], s, None) for s in ends(SK.SPREAD)]
    out += [(DEFAULT["d"], DEFAULT["n_keys"], s, tau) for s in (0.0, 0.5)
            for tau in (TEMPERATURES[0], TEMPERATURES[-1])]
    return out


def _numpy_pair(q, k, tau):
    """Dot-product weights at τ and Gaussian-kernel weights at σ = √τ, written out in numpy (log domain)."""
    q, k = q.numpy(), k.numpy()
    dot = q @ k.T / tau
    gauss = -((q[:, None, :] - k[None, :, :]) ** 2).sum(-1) / (2 * tau)
    soft = lambda z: np.exp(z - z.max(1, keepdims=True)) / np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)  # noqa: E731
    return soft(dot), soft(gauss), soft(gauss + (k * k).sum(1)[None, :] / (2 * tau))


@pytest.mark.sweep
def test_the_two_kernels_agree_exactly_when_all_keys_have_one_norm():
    """sk.equal / sk.unequal / sk.notice line 1 / sk.predict_why: dot-product attention at τ and Gaussian-kernel
    attention at σ = √τ (numpy) agree to rounding when every key has the same norm and differ when the norms
    spread, by the largest gap the page quotes; with the per-key bias −‖k‖²/(2τ) they agree again. The revealed
    answer is the gap's size class."""
    for d, n_keys, spread, tau in _settings():
        tau = math.sqrt(d) if tau is None else tau
        for seed in SEEDS:
            q, k, v = random_qkv(d, 16, n_keys, spread, seed)
            c = compare(q, k, v, tau)
            dot, gauss, fixed = _numpy_pair(q, k, tau)
            assert np.abs(c["dot"].numpy() - dot).max() < 1e-12 and np.abs(c["gauss"].numpy() - gauss).max() < 1e-12
            gap = float(np.abs(dot - gauss).max())
            assert c["max_diff"] == pytest.approx(gap, abs=1e-12)
            assert float(np.abs(dot - fixed).max()) < 1e-9 and c["max_diff_corrected"] < 1e-9
            norms = np.linalg.norm(k.numpy(), axis=1)
            if spread == 0:
                assert np.ptp(norms) < 1e-12 and gap < 1e-12
            else:
                assert np.ptp(norms) > 1e-3
                assert SK.gap_size(gap) == (0 if gap < 1e-9 else 1 if gap < 0.05 else 2)
    at = page("softmax_kernel")
    for seed in SEEDS:
        at.number_input(key="sk.seed").set_value(seed).run()
        assert_clean(at)
        assert any(s.value.startswith("All keys have norm √d = 4.00") for s in at.success)


@pytest.mark.sweep
def test_the_right_width_and_the_two_wrong_ones():
    """sk.explain: over the d and temperature sliders' ends and middle (and each seed's q, k): Gaussian attention at
    σ = √τ equals dot-product at τ on a sphere, σ = √(τ/2) does not and is narrower; σ = √(d/2) is wider, narrower
    or equal exactly as the sentence says (at τ = √d: wider for every d > 4)."""
    for d in (*ends(SK.D), 4, 5):
        for tau in (math.sqrt(d), TEMPERATURES[0], TEMPERATURES[-1]):
            w = SK.wrong_widths(d, tau)
            assert w["sigma"] == pytest.approx(math.sqrt(tau)) and w["half_tau"] < w["sigma"]
            half_d = math.sqrt(d / 2)
            assert w["half_d_effect"] == ("same_width" if math.isclose(half_d, w["sigma"]) else
                                          "too_wide" if half_d > w["sigma"] else "too_narrow")
            if tau == math.sqrt(d) and d > 4:
                assert w["half_d_effect"] == "too_wide"
            for seed in SEEDS:
                q, k, v = random_qkv(d, 8, 12, 0.0, seed)
                _, wd = A.dot_product_attention(q, k, v, tau)
                _, right = A.gaussian_kernel_attention(q, k, v, w["sigma"])
                _, narrow = A.gaussian_kernel_attention(q, k, v, w["half_tau"])
                assert torch.allclose(wd, right, atol=1e-12)                    # σ = √τ is the same attention
                assert bool((A.entropy(narrow) <= A.entropy(right) + 1e-9).all())   # √(τ/2) only ever sharper
    at = page("softmax_kernel")
    text = next(m.value for m in at.markdown if "Two values often quoted" in m.value)
    assert "σ = √(d/2) = 2.83 is too wide" in text and "σ = √(τ/2) = 1.41 is too narrow" in text


def test_doubling_the_temperature_widens_the_gaussian_by_root_two():
    """sk.notice line 2."""
    q, k, v = random_qkv(16, 16, 24, 0.0, 0)
    _, wd = A.dot_product_attention(q, k, v, 8.0)
    _, wg = A.gaussian_kernel_attention(q, k, v, math.sqrt(4.0) * math.sqrt(2))
    assert torch.allclose(wd, wg, atol=1e-12)


@pytest.mark.sweep
def test_dot_product_gives_long_keys_more_weight_than_the_kernel():
    """sk.notice line 3: with spread norms, a key's mean weight tracks its norm more under dot-product attention than
    under the Gaussian kernel (correlations computed here), over seeds 0-4 and the d, key-count and spread ends."""
    for d, n_keys, spread, tau in _settings():
        if spread == 0 or n_keys < 3:
            continue
        tau = math.sqrt(d) if tau is None else tau
        for seed in SEEDS:
            q, k, _ = random_qkv(d, 16, n_keys, spread, seed)
            dot, gauss, _ = _numpy_pair(q, k, tau)
            norms = np.linalg.norm(k.numpy(), axis=1)
            assert np.corrcoef(norms, dot.mean(0))[0, 1] > np.corrcoef(norms, gauss.mean(0))[0, 1], (d, n_keys, seed)


@pytest.mark.sweep
def test_smaller_temperature_and_bandwidth_sharpen_the_rows():
    """sk.temp_text / sk.notice line 4: over seeds 0-4 and the d / key-count ends, the rows' entropy falls as τ
    falls and reaches log N at large τ; over both datasets, the n slider's ends and seeds 0-4 it falls as h falls
    and reaches log N at large h; the page quotes the sweeps' left ends."""
    for d, n_keys, spread, _ in _settings():
        for seed in SEEDS:
            q, k, _ = random_qkv(d, 16, n_keys, spread, seed)
            sw = temperature_sweep(q, k, bridge.log_grid(0.01, 1000, 61))
            assert np.all(np.diff(sw["entropy"]) > -1e-9) and sw["entropy"].iloc[-1] > 0.99 * math.log(n_keys)
    for name in DATASETS:
        for n in (ends(N)[0], DATASETS[name].default_n, ends(N)[-1]):
            for seed in SEEDS:
                d = make_dataset(name, n, 0.3, seed)
                nw = bridge.nw_entropy_sweep(torch.tensor(query_grid(d))[::4], torch.tensor(d.x), "gaussian",
                                             bridge.log_grid(0.01, 20, 41))
                assert np.all(np.diff(nw["entropy"]) > -1e-9) and nw["entropy"].iloc[-1] > 0.98 * math.log(n)
    at = page("softmax_kernel")
    for seed in SEEDS:
        at.number_input(key="sk.seed").set_value(seed).run()
        q, k, _ = random_qkv(16, 16, 24, 0.0, seed)
        sw = temperature_sweep(q, k, bridge.log_grid(0.01, 1000, 61))
        text = next(m.value for m in at.markdown if m.value.startswith("Smaller τ"))
        assert f"{sw['max_weight'].iloc[0]:.2f} (τ = 0.01)" in text


@pytest.mark.sweep
def test_topk_text():
    """sk.topk_text: the mass it quotes is the dense weight on each query's top-k keys (numpy), and k_top = N is
    dense attention exactly, over seeds 0-4, the key-count ends and k_top at 1, the middle and N."""
    for n_keys in ends(SK.N_KEYS):
        for seed in SEEDS:
            q, k, v = random_qkv(16, 16, n_keys, 0.0, seed)
            curve = topk_error_curve(q, k, v, 4.0)
            dot, _, _ = _numpy_pair(q, k, 4.0)
            for k_top in (1, max(1, n_keys // 2), n_keys):
                kept = np.sort(dot, 1)[:, ::-1][:, :k_top].sum(1).mean()
                assert float(curve.loc[curve["k_top"] == k_top, "dense_mass_kept"].iloc[0]) == pytest.approx(kept)
            out, _ = A.topk_attention(q, k, v, n_keys, 4.0)
            assert torch.allclose(out, A.dot_product_attention(q, k, v, 4.0)[0], atol=1e-12)


def _learned(name, n, seed):
    d = make_dataset(name, n, DATASETS[name].default_noise, seed)
    return SK.FIGURES["learned_h"].compute(data={"x": d.x, "y": d.y})


@pytest.mark.slow           # trains to convergence at every seed and setting
@pytest.mark.sweep
def test_learned_bandwidth_text():
    """sk.learned_text / sk.learned_text_far: the page says the learned h is next to the grid's LOO optimum of the
    same points only when it is within 10 % (ratio computed here from select_bandwidth on the same subsample), and
    without leave-one-out h keeps falling; over both datasets at seeds 0-4 and the n slider's ends."""
    seen = set()
    for name in DATASETS:
        for n in (ends(N)[0], DATASETS[name].default_n, ends(N)[-1]):
            for seed in SEEDS if n == DATASETS[name].default_n else (0, 1):
                lb = _learned(name, n, seed)
                used = min(n, SK.LEARN_MAX_POINTS)
                d = make_dataset(name, n, DATASETS[name].default_noise, seed)
                idx = np.linspace(0, n - 1, used).round().astype(int) if n > used else np.arange(n)
                h_opt = select_bandwidth(d.x[idx], d.y[idx], "gaussian")
                s = SK.learned_summary(lb)
                ratio = lb["loo"]["h"].iloc[-1] / h_opt
                assert s["near"] == (abs(math.log(ratio)) <= math.log(1.1)) and s["n"] == used
                seen.add(s["near"])
                tail = lb["no_loo"]["h"].to_numpy()[-50:]
                assert np.all(np.diff(tail) < 0), (name, n, seed)              # keeps falling
    assert seen == {True, False}                         # both sentences occur over the sweep
    at = page("softmax_kernel")
    text = next(m.value for m in at.markdown if m.value.startswith("With leave-one-out"))
    s = SK.learned_summary(_learned("sine_mix", 200, 0))
    assert f"**{s['h_loo']:.3g}**" in text and s["near"] == ("next to" in text)


def _parametric(name, seed, hidden=SK.HIDDEN.default, nw_form=True):
    d = make_dataset(name, DATASETS[name].default_n, DATASETS[name].default_noise, seed)
    data = {"x": d.x, "y": d.y, "x_grid": query_grid(d), "true": d.true_fn(query_grid(d))}
    return SK.FIGURES["param_fit"].compute(data=data, hidden=hidden, nw_form=nw_form, seed=seed), data


@pytest.mark.slow           # trains to convergence at every seed and setting
@pytest.mark.sweep
def test_nw_form_reduces_to_nw_exactly_and_says_whether_it_trained_local():
    """sk.param_text_nw / sk.param_text_nw_drift / sk.nw_form_help / sk.hidden_help: with values = y and no output
    map a rank-2 q·k is the Gaussian kernel exactly; trained, the page calls the rows local only when each shown
    query's top weight lies within twice the LOO-optimal h of it (distances computed here from the weights), over
    both datasets at seeds 0-4; extra hidden units stay at zero (hidden at its ends)."""
    d = make_dataset("sine_mix", 200, 0.3, 0)
    x, y, g = torch.tensor(d.x), torch.tensor(d.y), torch.tensor(query_grid(d))
    head = ParametricAttention(2, float(x.mean()), float(x.std()), nw_form=True).double().set_gaussian(0.3)
    out, w = head(g, x, y)
    assert torch.allclose(w, nw_weights(g, x, "gaussian", 0.3), atol=1e-12)
    assert torch.allclose(out, nadaraya_watson(g, x, y, "gaussian", 0.3), atol=1e-12)
    with pytest.raises(ValueError):
        ParametricAttention(1, nw_form=True).set_gaussian(0.3)
    for hidden in (ends(SK.HIDDEN)[0], ends(SK.HIDDEN)[-1]):
        model, _ = fit_parametric_attention(d.x, d.y, hidden=hidden, seed=0, nw_form=True)
        extra = model.W_q.weight[2:]
        assert extra.numel() == 0 or float(extra.abs().max()) == 0
    for name in DATASETS:
        for seed in SEEDS:
            pf, data = _parametric(name, seed)
            picks = SK.param_picks(len(data["x_grid"]))
            dist = max(abs(float(pf["x_used"][np.argmax(pf["weights"][i])]) - float(data["x_grid"][i])) for i in picks)
            s = SK.parametric_summary(pf, data)
            assert s["max_top_distance"] == pytest.approx(dist)
            assert s["local"] == (dist <= 2 * pf["h_opt"]), (name, seed)
    at = page("softmax_kernel")
    text = next(m.value for m in at.markdown if m.value.startswith("**NW form.**"))
    assert "stay local" in text or "drift" in text


@pytest.mark.slow           # trains to convergence at every seed and setting
@pytest.mark.sweep
def test_free_form_quotes_where_its_top_weight_lies():
    """sk.param_text_free: the query and the point carrying its largest weight are those of the trained layer's
    rows, at seeds 0-4."""
    at = page("softmax_kernel")
    at.toggle(key="sk.nw_form").set_value(False).run()
    for seed in SEEDS:
        at.number_input(key="data.seed").set_value(seed).run()
        assert_clean(at)
        pf, data = _parametric("sine_mix", seed, nw_form=False)
        s = SK.parametric_summary(pf, data)
        text = next(m.value for m in at.markdown if m.value.startswith("**Free form.**"))
        assert f"the query x = {s['far_query']:.2f} puts its largest weight on the point at x = {s['far_top']:.2f}" \
            in text
