"""Property-based checks over random shapes, values up to ±1e3 and bandwidths from 1e-4 to 1e4."""

import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from explorer import regression as r
from explorer.attention import entropy
from explorer.kernels import KERNELS

values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
bandwidths = st.floats(1e-4, 1e4, allow_nan=False)
kernels = st.sampled_from(list(KERNELS))


def support(xq, xt, name, h):
    """Which (query, point) pairs a compact kernel reaches, computed as the library does (u = d/h)."""
    u = np.abs((xq[:, None] - xt[None, :]) / h)
    return u <= 1 if name == "boxcar" else u < 1


@settings(max_examples=150, deadline=None)
@given(xt=arrays(np.float64, st.integers(1, 30), elements=values),
       xq=arrays(np.float64, st.integers(1, 20), elements=values),
       name=kernels, h=bandwidths)
def test_weights_are_finite_nonnegative_and_rows_sum_to_one_or_zero(xt, xq, name, h):
    w = r.nw_weights(xq, xt, name, h).numpy()
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    sums = w.sum(axis=1)
    if KERNELS[name].compact:
        reach = support(xq, xt, name, h).any(axis=1)
        # a row is all zero exactly where no training point is inside the support
        np.testing.assert_array_equal(sums == 0, ~reach)
        np.testing.assert_allclose(sums[reach], 1.0, rtol=1e-9)
    else:
        np.testing.assert_allclose(sums, 1.0, rtol=1e-9)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n=st.integers(1, 30), name=kernels, h=bandwidths)
def test_estimates_stay_in_range_and_are_nan_exactly_where_undefined(data, n, name, h):
    xt = data.draw(arrays(np.float64, n, elements=values))
    yt = data.draw(arrays(np.float64, n, elements=values))
    xq = data.draw(arrays(np.float64, st.integers(1, 20), elements=values))
    est = r.nadaraya_watson(xq, xt, yt, name, h).numpy()
    defined = support(xq, xt, name, h).any(axis=1) if KERNELS[name].compact else np.ones(len(xq), bool)
    np.testing.assert_array_equal(np.isnan(est), ~defined)
    assert np.all(est[defined] >= yt.min()) and np.all(est[defined] <= yt.max())


@settings(max_examples=100, deadline=None)
@given(w=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 12)),
                elements=st.floats(0, 1e3, allow_nan=False)))
def test_entropy_of_any_normalised_row_is_within_zero_and_log_n(w):
    sums = w.sum(axis=1, keepdims=True)
    p = np.divide(w, sums, out=np.zeros_like(w), where=sums > 0)
    h = entropy(torch.as_tensor(p)).numpy()
    assert np.all(h >= -1e-12) and np.all(h <= math.log(w.shape[1]) + 1e-9)
    assert np.all(h[sums[:, 0] == 0] == 0)
