"""explorer.efficient against independent references: the exact kernel exp(q·k), torch's softmax and SDPA,
the masked parallel form, and the theory of random-feature variance."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.efficient import (
    linear_attention,
    linear_attention_masked,
    linear_attention_states,
    random_feature_map,
)
from explorer.online import online_softmax, online_softmax_attention

D64 = torch.float64


def _pairs(d, n, scale, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=D64) * scale, torch.randn(n, d, generator=g, dtype=D64) * scale


@pytest.mark.parametrize("kind", ["positive", "trig"])
@pytest.mark.parametrize("orthogonal", [False, True])
def test_random_features_are_unbiased_estimates_of_exp_qk(kind, orthogonal):
    """The mean over 400 independent maps lies within 4 standard errors of exp(q·k) for every pair."""
    q, k = _pairs(8, 5, 0.35)
    exact = torch.exp((q * k).sum(-1))
    draws = torch.stack([(random_feature_map(8, 64, kind, orthogonal, seed=s)(q)
                          * random_feature_map(8, 64, kind, orthogonal, seed=s)(k)).sum(-1) for s in range(400)])
    mean, se = draws.mean(0), draws.std(0) / math.sqrt(draws.shape[0])
    assert bool((((mean - exact) / se).abs() < 4).all()), ((mean - exact) / se).tolist()


def _theory_variance(q, k, kind):
    """Variance of one direction's term of φ(q)·φ(k), from the Gaussian moment E exp(w·a) = exp(|a|²/2)."""
    qq, kk, qk = (q * q).sum(-1), (k * k).sum(-1), (q * k).sum(-1)
    if kind == "positive":                      # term exp(w·(q+k) - |q|²/2 - |k|²/2)
        return torch.exp(2 * (qq + kk + 2 * qk) - qq - kk) - torch.exp(2 * qk)
    dd = qq + kk - 2 * qk                       # term exp(|q|²/2 + |k|²/2) cos(w·(q - k))
    return torch.exp(qq + kk) * (0.5 * (1 + torch.exp(-2 * dd)) - torch.exp(-dd))


@pytest.mark.parametrize("kind", ["positive", "trig"])
def test_random_feature_variance_is_the_theory_over_m(kind):
    """Mean squared error of the estimate = (one direction's variance) / m, for m = 16 and 256: the error
    falls like 1/sqrt(m)."""
    q, k = _pairs(4, 10, 0.25)
    exact = torch.exp((q * k).sum(-1))
    theory = _theory_variance(q, k, kind).mean()
    for m in (16, 256):
        errs = torch.stack([((random_feature_map(4, m, kind, seed=s)(q) * random_feature_map(4, m, kind, seed=s)
                              (k)).sum(-1) - exact) ** 2 for s in range(600)])
        assert float(errs.mean()) * m == pytest.approx(float(theory), rel=0.2), m


def test_orthogonal_directions_have_lower_error_than_iid_at_equal_m():
    q, k = _pairs(16, 50, 0.3)
    exact = torch.exp((q * k).sum(-1))

    def mse(orth):
        errs = [((random_feature_map(16, 32, "positive", orth, seed=s)(q) * random_feature_map(
            16, 32, "positive", orth, seed=s)(k)).sum(-1) - exact) ** 2 for s in range(300)]
        return float(torch.stack(errs).mean())

    assert mse(True) < 0.9 * mse(False)


def test_orthogonal_directions_are_orthogonal_with_gaussian_lengths():
    w = random_feature_map(8, 8000, orthogonal=True, seed=3).w
    block = w[:8] / w[:8].norm(dim=1, keepdim=True)
    torch.testing.assert_close(block @ block.T, torch.eye(8, dtype=D64), atol=1e-12, rtol=0)
    assert abs(float((w ** 2).sum(1).mean()) - 8) < 0.3            # E|w|² = d, as for N(0, I_d)


@pytest.mark.parametrize("feature_map", ["elu+1", "relu", random_feature_map(6, 32, seed=1)])
def test_causal_recurrence_equals_the_masked_parallel_form(feature_map):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(3, 9, 6, generator=g, dtype=D64) * 0.5 for _ in range(3))
    mask = torch.ones(9, 9, dtype=torch.bool).tril()
    torch.testing.assert_close(linear_attention(q, k, v, feature_map, causal=True),
                               linear_attention_masked(q, k, v, mask, feature_map), atol=1e-12, rtol=1e-10)
    states = linear_attention_states(q[0], k[0], v[0], feature_map)
    torch.testing.assert_close(torch.stack([s["output"] for s in states]),
                               linear_attention(q[0], k[0], v[0], feature_map, causal=True), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("length, chunk", [(1, 4), (9, 4), (16, 4), (17, 16), (300, 128)])
def test_causal_linear_attention_in_chunks_equals_the_parallel_form(length, chunk):
    """The chunked computation (one state and one chunk at a time) at chunk boundaries and past them."""
    g = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(2, length, 5, generator=g, dtype=D64) * 0.5 for _ in range(3))
    mask = torch.ones(length, length, dtype=torch.bool).tril()
    torch.testing.assert_close(linear_attention(q, k, v, causal=True, chunk_size=chunk),
                               linear_attention_masked(q, k, v, mask), atol=1e-12, rtol=1e-10)


def _plain(phi, q, k, v, causal):
    """Random-feature attention with unshifted features: num / den (NaN where den underflowed to 0)."""
    fq, fk = phi(q), phi(k)
    if causal:
        num = torch.stack([fq[t] @ (fk[:t + 1].T @ v[:t + 1]) for t in range(q.shape[0])])
        den = (fq * torch.cumsum(fk, 0)).sum(-1)
    else:
        num, den = fq @ (fk.T @ v), fq @ fk.sum(0)
    return num / den[:, None]


PEAK_CHILD = r"""
import sys, torch
from explorer.efficient import linear_attention
def hwm():
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(16384, 64, generator=g) for _ in range(3))
linear_attention(q[:256], k[:256], v[:256], causal=True)          # warm the code paths
base = hwm()
linear_attention(q, k, v, causal=True)
print(hwm() - base)
"""


def test_causal_linear_attention_holds_one_state_not_one_per_token():
    """At N = 16,384, m = dv = 64 in float32 the per-token states would take 268 MB; chunked, the peak grows by
    less than 64 MB (a child process's high-water mark: memory, deterministic, not time)."""
    import subprocess
    import sys

    extra = int(subprocess.run([sys.executable, "-c", PEAK_CHILD], capture_output=True, text=True,
                               check=True).stdout)
    assert extra < 64 * 2 ** 20, f"+{extra / 2 ** 20:.0f} MB"


@pytest.mark.parametrize("causal", [False, True])
def test_positive_features_are_stabilised_against_underflow(causal):
    """Performer's shifts (each query row by its own largest exponent, all keys by one) cancel in the ratio: where the
    unshifted float32 estimate is finite (q, k ~ N(0, 1) at d = 64) the shifted one equals it; at 3·N(0, 1) the
    unshifted float32 features are all-zero rows (the estimate is 0/0) and the shifted estimate is finite, and for
    full attention it equals the unshifted float64 one; at 5·N(0, 1), where float64 underflows too, it stays finite."""
    g = torch.Generator().manual_seed(0)
    phi = random_feature_map(64, 256, "positive", seed=3)
    v = torch.randn(48, 4, generator=g)
    q, k = (torch.randn(48, 64, generator=g) for _ in range(2))
    plain = _plain(phi, q, k, v, causal)
    assert bool(torch.isfinite(plain).all())
    torch.testing.assert_close(linear_attention(q, k, v, phi, causal=causal), plain, rtol=1e-4, atol=1e-5)
    for scale in (3.0, 5.0):
        q, k = (torch.randn(48, 64, generator=g) * scale for _ in range(2))
        assert bool((phi(q).sum(-1) == 0).all())                  # the problem: every row zero in float32
        out = linear_attention(q, k, v, phi, causal=causal)
        assert bool(torch.isfinite(out).all()) and float(out.abs().max()) > 0
        if scale == 3.0 and not causal:
            reference = _plain(phi, q.double(), k.double(), v.double(), causal)
            assert bool(torch.isfinite(reference).all())
            torch.testing.assert_close(out.double(), reference, rtol=1e-3, atol=1e-4)


def test_linear_attention_by_a_brute_force_double_loop():
    g = torch.Generator().manual_seed(4)
    q, k, v = torch.randn(4, 3, generator=g, dtype=D64), torch.randn(6, 3, generator=g, dtype=D64), \
        torch.randn(6, 2, generator=g, dtype=D64)
    phi = lambda x: F.elu(x) + 1                                     # noqa: E731
    ref = torch.stack([sum(float(phi(q[i]) @ phi(k[j])) * v[j] for j in range(6))
                       / sum(float(phi(q[i]) @ phi(k[j])) for j in range(6)) for i in range(4)])
    torch.testing.assert_close(linear_attention(q, k, v), ref, atol=1e-12, rtol=1e-12)


def test_random_feature_linear_attention_approaches_softmax_attention():
    g = torch.Generator().manual_seed(5)
    # moderate norms: the positive estimator's variance grows like exp(2|q + k|²)
    q, k, v = (torch.randn(32, 8, generator=g, dtype=D64) * 0.5 for _ in range(3))
    scale = 8 ** -0.25                                              # q·k / sqrt(d) = (q s)·(k s)
    exact = torch.softmax(q @ k.T / math.sqrt(8), -1) @ v
    err = [float((linear_attention(q * scale, k * scale, v, random_feature_map(8, m, seed=0)) - exact).abs().max())
           for m in (16, 4096)]
    assert err[1] < 0.1 and err[1] < err[0] / 4


@settings(max_examples=60, deadline=None)
@given(tq=st.integers(1, 7), tk=st.integers(1, 9), d=st.integers(1, 5), block=st.integers(1, 10),
       seed=st.integers(0, 10_000), masked=st.booleans())
def test_online_softmax_attention_equals_sdpa(tq, tk, d, block, seed, masked):
    g = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(2, tq, d, generator=g, dtype=D64), torch.randn(2, tk, d, generator=g, dtype=D64) * 3, \
        torch.randn(2, tk, 3, generator=g, dtype=D64)
    mask = torch.rand(tq, tk, generator=g) < 0.6 if masked else None
    if masked:
        mask[0] = False                                              # always one fully masked row
    out, states = online_softmax_attention(q, k, v, block, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    if masked:                                                       # SDPA's fully masked row: NaN or 0
        ref = torch.where(mask.any(-1, keepdim=True), ref, 0.0)
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=1e-10)
    assert len(states) == math.ceil(tk / block)
    logits = (q @ k.transpose(-2, -1)) / math.sqrt(d)
    if masked:
        logits = logits.masked_fill(~mask, -math.inf)
    torch.testing.assert_close(states[-1]["max"], logits.amax(-1))     # the running max ends at the row max


def test_online_softmax_states_are_the_prefix_softmax():
    """After each block, acc / sum is the softmax over the keys seen so far, and max is their maximum."""
    s = torch.tensor([3.0, -1.0, 7.0, 0.5, 2.0, 9.0, -4.0], dtype=D64)
    v = torch.randn(7, 2, generator=torch.Generator().manual_seed(0), dtype=D64)
    out, states = online_softmax(s, v, 3)
    for st_ in states:
        seen = slice(0, st_["stop"])
        torch.testing.assert_close(st_["acc"] / st_["sum"], torch.softmax(s[seen], -1) @ v[seen])
        assert float(st_["max"]) == float(s[seen].max())
        assert float(st_["sum"]) == pytest.approx(float(torch.exp(s[seen] - s[seen].max()).sum()))
    torch.testing.assert_close(out, torch.softmax(s, -1) @ v)
    assert [float(x["rescale"]) for x in states] == pytest.approx([0.0, math.exp(7 - 9), 1.0])   # maxima 7, 9, 9


def test_online_softmax_with_minus_infinity_and_an_all_masked_row():
    s = torch.tensor([[-math.inf, 1.0, -math.inf], [-math.inf] * 3], dtype=D64)
    out, _ = online_softmax(s, torch.eye(3, dtype=D64), 1)
    assert out.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    assert not torch.isnan(out).any()


def test_bad_arguments_get_one_sentence():
    with pytest.raises(ValueError, match="kind must be one of"):
        random_feature_map(4, 8, kind="laplace")
    with pytest.raises(ValueError, match="feature_map must be one of"):
        linear_attention(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2), "softplus")
    with pytest.raises(ValueError, match="block_size"):
        online_softmax_attention(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2), 0)
    with pytest.raises(ValueError, match="causal"):
        linear_attention(torch.ones(2, 2), torch.ones(3, 2), torch.ones(3, 2), causal=True)
    assert np.isfinite(float(linear_attention(torch.zeros(1, 1), torch.zeros(1, 1), torch.ones(1, 1), "relu")))
