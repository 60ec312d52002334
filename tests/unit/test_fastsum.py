"""The fast one-dimensional kernel sums against the plain per-query loop and the dense direct path."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import bandwidth as bw
from explorer import fastgauss, fastsum
from explorer import regression as r
from explorer.kernels import KERNELS

FAST = list(fastsum.FAST_KERNELS)


def _close(fast, ref, y, rtol):
    """Equal NaN pattern, and |fast - ref| <= rtol x (|ref| + the spread of y) elsewhere."""
    fast, ref = np.asarray(fast, dtype=float), np.asarray(ref, dtype=float)
    assert np.array_equal(np.isnan(fast), np.isnan(ref))
    ok = ~np.isnan(ref)
    scale = np.abs(ref[ok]) + (float(np.ptp(y)) if len(y) else 0.0) + 1e-300
    worst = np.max(np.abs(fast[ok] - ref[ok]) / scale) if ok.any() else 0.0
    assert worst <= rtol, worst


@st.composite
def problems(draw):
    """Training points with duplicates and clusters, queries inside and outside their range, any h in
    eight decades, float64 or float32."""
    n = draw(st.integers(2, 250))
    pool = draw(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=n))
    gen = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = 10 ** draw(st.floats(-3, 1))
    x = np.concatenate([np.asarray(pool), gen.choice(pool, n) + gen.normal(0, spread, n) * gen.integers(0, 2, n)])
    y = gen.normal(0, 1, x.shape[0]) * 10 ** draw(st.floats(-2, 3)) + draw(st.floats(-100, 100))
    lo, hi = x.min(), x.max()
    m = draw(st.integers(1, 60))
    xq = gen.uniform(lo - 0.5 * (hi - lo) - 1, hi + 0.5 * (hi - lo) + 1, m)
    xq[: m // 3] = gen.choice(x, m // 3)                       # some queries exactly on training points
    h = 10 ** draw(st.floats(-4, 4))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    kernel = draw(st.sampled_from(FAST))
    return x.astype(dtype), y.astype(dtype), xq.astype(dtype), h, kernel


@settings(max_examples=300, deadline=None)
@given(problems())
def test_fast_estimates_equal_the_per_query_loop(problem):
    x, y, xq, h, kernel = problem
    fast = r.nadaraya_watson(xq, x, y, kernel, h, method="fast").numpy()
    # the reference: the plain loop on the same values in float64
    ref = r.nadaraya_watson_loop(xq.astype(np.float64), x.astype(np.float64), y.astype(np.float64), kernel,
                                 h).numpy()
    _close(fast, ref, y, 1e-8 if x.dtype == np.float64 else 1.2e-7)  # float32: the output's own rounding


@settings(max_examples=200, deadline=None)
@given(problems())
def test_fast_leave_one_out_equals_the_direct_path(problem):
    x, y, _, h, kernel = problem
    xt, yt = torch.as_tensor(x.astype(np.float64)), torch.as_tensor(y.astype(np.float64))
    kern = KERNELS[kernel]
    est, trusted = fastsum.kernel_sums(kern, h, xt, xt, yt, leave_one_out=True)
    ref = r._nw_streaming(kern, h, xt, xt, yt, exclude=torch.arange(len(xt)))
    est = torch.where(torch.isnan(est), est, est.clamp(yt.min(), yt.max()))
    t = trusted.numpy()
    _close(est.numpy()[t], ref.numpy()[t], y, 1e-8)
    # and what the library does with the untrusted ones too
    _close(bw.loo_predictions(kern, h, xt, yt, method="fast").numpy(), ref.numpy(), y, 1e-8)


@pytest.mark.parametrize("kernel", FAST)
def test_large_problem_and_the_bandwidth_search(kernel):
    """100k points, 2k queries: fast = dense to 1e-9 relative; LOO scores at n = 3,000 agree to 1e-9."""
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(100_000, generator=gen, dtype=torch.float64) * 6 - 3
    y = torch.sin(x) + 0.3 * torch.randn(100_000, generator=gen, dtype=torch.float64)
    xq = torch.linspace(-3.5, 3.5, 2000, dtype=torch.float64)
    fast = r.nadaraya_watson(xq, x, y, kernel, 0.3, method="fast")
    dense = r.nadaraya_watson(xq, x, y, kernel, 0.3, method="direct")
    _close(fast.numpy(), dense.numpy(), y.numpy(), 1e-9)
    xs, ys = x[:3000], y[:3000]
    hs = [0.003, 0.03, 0.3, 3.0]
    scores = bw.loo_cv_scores(xs, ys, kernel, hs).numpy()
    kern = KERNELS[kernel]
    ref = []
    for h in hs:
        p = r._nw_streaming(kern, h, xs, xs, ys, exclude=torch.arange(3000))
        ref.append(math.inf if bool(torch.isnan(p).any()) else float(((p - ys) ** 2).mean()))
    np.testing.assert_allclose(scores, ref, rtol=1e-9)


def test_auto_takes_the_fast_path_where_it_applies():
    x = torch.linspace(0, 1, 500, dtype=torch.float64)
    assert r.choose(r._PATHS, "auto", KERNELS["gaussian"], x, x, 0.3, None) == "fast"
    assert r.choose(r._PATHS, "auto", KERNELS["constant"], x, x, 0.3, None) == "direct"      # no fast sum
    assert r.choose(r._PATHS, "auto", KERNELS["gaussian"], x[:10], x[:10], 0.3, None) == "rank2"  # tiny: dense
    big = x[:10].float() * 1e4                      # (|x| / h)² too large for float32: the rewrite would lose digits
    assert r.choose(r._PATHS, "auto", KERNELS["gaussian"], big, big, 1e-3, None) == "direct"
    assert r.choose(r._PATHS, "auto", KERNELS["laplace"], x, x, 0.3, 64) == "direct"        # chunks asked for
    assert r.choose(r._PATHS, "sdpa", KERNELS["gaussian"], x, x, 0.3, None) == "sdpa"        # asked for: kept


def test_gauss_transform_plan_meets_its_bound():
    """The number of terms and the cut-off keep N times the per-point truncation bound below 1e-12."""
    for n in (2, 1000, 100_000):
        radius, _terms = fastgauss._gauss_plan(n)
        assert n * math.exp(-radius ** 2 / 2) <= 1.0001e-12
        p = fastgauss._fgt_terms(n)
        assert n * fastgauss._CRAMER * 2.6 * 2 * 2 ** (-p / 2) / math.sqrt(math.factorial(p)) <= 1e-12
    # Cramér's inequality, which the bound rests on, checked on a grid
    s = torch.linspace(-30, 30, 2001, dtype=torch.float64)
    hf = fastgauss._hermite_functions(s, 60)                              # He_k(s) exp(-s²/2)
    for k in range(60):
        assert float((hf[:, k].abs() * torch.exp(s * s / 4)).max()) <= fastgauss._CRAMER * math.sqrt(math.factorial(k))


FGT_PEAK_CHILD = r"""
import torch
from explorer.fastsum import kernel_sums
from explorer.kernels import get_kernel
def hwm():
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
g = torch.Generator().manual_seed(0)
x = torch.rand(20_000, generator=g, dtype=torch.float64) * 6 - 3
y = torch.sin(x)
q = torch.linspace(-3, 3, 500_000, dtype=torch.float64)
kernel_sums(get_kernel("gaussian"), 0.3, q[:1000], x, y)          # warm the code paths
base = hwm()
kernel_sums(get_kernel("gaussian"), 0.3, q, x, y)
print(hwm() - base)
"""


def test_the_fast_gauss_transform_takes_its_queries_in_chunks():
    """500,000 queries: the expansion's (queries, 3, P) coefficients are built a chunk at a time, so the peak grows
    by the outputs' few MB and one chunk (it was about 600 MB), measured as a child process's high-water mark."""
    import subprocess
    import sys

    extra = int(subprocess.run([sys.executable, "-c", FGT_PEAK_CHILD], capture_output=True, text=True,
                               check=True).stdout)
    assert extra < 128 * 2 ** 20, f"+{extra / 2 ** 20:.0f} MB"
