"""explorer.attention against torch's SDPA, cdist formulas and brute-force loops."""

import math

import pytest
import torch
import torch.nn.functional as F

from explorer import attention as A
from explorer.bridge import random_qkv


def qkv(b=2, h=3, lq=5, lk=7, d=8, dv=4, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, h, lq, d, generator=g, dtype=dtype), torch.randn(b, h, lk, d, generator=g, dtype=dtype),
            torch.randn(b, h, lk, dv, generator=g, dtype=dtype))


def test_dot_product_defaults_to_sdpa():
    q, k, v = qkv()
    out, w = A.dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64))


def test_dot_product_temperature_matches_sdpa_scale():
    q, k, v = qkv(seed=1)
    out, _ = A.dot_product_attention(q, k, v, tau=0.7)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=1 / 0.7))


def test_gaussian_kernel_attention_matches_cdist():
    q, k, v = qkv(seed=2)
    sigma = 1.3
    out, w = A.gaussian_kernel_attention(q, k, v, sigma)
    ref_w = torch.softmax(-torch.cdist(q, k, compute_mode="donot_use_mm_for_euclid_dist") ** 2
                          / (2 * sigma ** 2), dim=-1)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, ref_w @ v)


def test_gaussian_kernel_attention_never_nan_at_tiny_sigma():
    q, k, v = qkv(seed=3)
    _, w = A.gaussian_kernel_attention(q * 100, k * 100, v, 1e-6)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))


@pytest.mark.parametrize("d", [1, 4, 64])
def test_bridge_holds_on_equal_norm_keys(d):
    q, k, v = random_qkv(d=d, n_queries=9, n_keys=13, norm_spread=0.0, seed=d)
    assert torch.allclose(k.norm(dim=-1), torch.full((13,), math.sqrt(d), dtype=torch.float64))
    for tau in (0.3, math.sqrt(d), 5.0):
        _, w_dot = A.dot_product_attention(q, k, v, tau)
        _, w_gauss = A.gaussian_kernel_attention(q, k, v, math.sqrt(tau))   # sigma = sqrt(tau)
        assert (w_dot - w_gauss).abs().max() < 1e-7


def test_sigma_sqrt_tau_over_two_is_wrong():
    q, k, v = random_qkv(d=16, n_queries=9, n_keys=13, norm_spread=0.0, seed=1)
    tau = 4.0
    _, w_dot = A.dot_product_attention(q, k, v, tau)
    _, w_wrong = A.gaussian_kernel_attention(q, k, v, math.sqrt(tau / 2))
    assert (w_dot - w_wrong).abs().max() > 1e-2


def test_bridge_fails_on_unequal_norms_and_the_bias_repairs_it():
    q, k, v = random_qkv(d=16, n_queries=9, n_keys=13, norm_spread=0.5, seed=4)
    tau = 4.0
    _, w_dot = A.dot_product_attention(q, k, v, tau)
    _, w_gauss = A.gaussian_kernel_attention(q, k, v, math.sqrt(tau))
    assert (w_dot - w_gauss).abs().max() > 1e-2
    # independent bias correction: add -|k_j|^2 / (2 tau) to the logits by hand
    logits = q @ k.T / tau - (k ** 2).sum(-1) / (2 * tau)
    torch.testing.assert_close(torch.softmax(logits, -1), w_gauss, atol=1e-10, rtol=0)
    _, w_biased = A.biased_dot_product_attention(q, k, v, tau)
    assert (w_biased - w_gauss).abs().max() < 1e-7


def brute_force_topk(q, k, v, k_top, tau):
    """One query at a time: sort the logits, keep the best k_top, loop over them."""
    lq, dv = q.shape[0], v.shape[1]
    out = torch.zeros(lq, dv, dtype=q.dtype)
    weights = torch.zeros(lq, k.shape[0], dtype=q.dtype)
    for i in range(lq):
        logits = [(float(q[i] @ k[j]) / tau, j) for j in range(k.shape[0])]
        best = sorted(logits, reverse=True)[:k_top]
        z = sum(math.exp(s - best[0][0]) for s, _ in best)
        for s, j in best:
            weights[i, j] = math.exp(s - best[0][0]) / z
            out[i] += weights[i, j] * v[j]
    return out, weights


@pytest.mark.parametrize("k_top", [1, 3, 6])
def test_topk_matches_brute_force(k_top):
    q, k, v = random_qkv(d=8, n_queries=5, n_keys=11, norm_spread=0.3, seed=k_top)
    out, w = A.topk_attention(q, k, v, k_top, tau=2.0)
    ref_out, ref_w = brute_force_topk(q, k, v, k_top, 2.0)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    assert ((w > 0).sum(-1) == k_top).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(5, dtype=torch.float64))


def test_topk_with_all_keys_is_dense_attention_with_batch_dims():
    q, k, v = qkv(seed=5)
    out, w = A.topk_attention(q, k, v, k.shape[-2])
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(w, A.dot_product_attention(q, k, v)[1])


def test_entropy_bounds():
    n = 17
    assert float(A.entropy(torch.full((n,), 1 / n))) == pytest.approx(math.log(n))
    one_hot = torch.zeros(3, n)
    one_hot[:, 4] = 1
    assert torch.all(A.entropy(one_hot) == 0)
    assert float(A.entropy(torch.zeros(n))) == 0.0
    w = torch.softmax(torch.randn(4, n), -1)
    manual = torch.tensor([-sum(float(p) * math.log(float(p)) for p in row) for row in w])
    torch.testing.assert_close(A.entropy(w), manual.to(w.dtype))


@pytest.mark.parametrize("call, message", [
    (lambda q, k, v: A.dot_product_attention(q, k, v, tau=0), "tau"),
    (lambda q, k, v: A.gaussian_kernel_attention(q, k, v, sigma=-1), "sigma"),
    (lambda q, k, v: A.topk_attention(q, k, v, k_top=0), "k_top"),
    (lambda q, k, v: A.topk_attention(q, k, v, k_top=99), "k_top"),
    (lambda q, k, v: A.dot_product_attention(q, k[..., :3], v), "same feature size"),
    (lambda q, k, v: A.dot_product_attention(q, k, v[..., :2, :]), "same number of keys"),
    (lambda q, k, v: A.dot_product_attention(q[0, 0, 0], k, v), "at least 2 dims"),
    (lambda q, k, v: A.entropy(-torch.ones(3)), ">= 0"),
])
def test_bad_input(call, message):
    q, k, v = qkv()
    with pytest.raises(ValueError, match=message):
        call(q, k, v)


def test_topk_error_curve_matches_topk_attention_for_every_k():
    from explorer.bridge import topk_error_curve

    q, k, v = random_qkv(d=8, n_queries=6, n_keys=9, norm_spread=0.4, seed=3)
    curve = topk_error_curve(q, k, v, tau=1.5)
    dense_out, dense_w = A.dot_product_attention(q, k, v, 1.5)
    for kt in range(1, 10):
        out, w = A.topk_attention(q, k, v, kt, tau=1.5)
        row = curve[curve["k_top"] == kt].iloc[0]
        assert row["max_abs_output_error"] == pytest.approx(float((out - dense_out).abs().max()), abs=1e-12)
        assert row["mean_weight_l1_error"] == pytest.approx(float((w - dense_w).abs().sum(-1).mean()), abs=1e-12)
        kept = float(dense_w.topk(kt, dim=-1).values.sum(-1).mean())
        assert row["dense_mass_kept"] == pytest.approx(kept, abs=1e-12)
