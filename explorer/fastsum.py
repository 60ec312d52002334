"""Kernel sums in one dimension without touching every pair of points.

Nadaraya-Watson needs, for each query x, the two sums Σᵢ K((x − xᵢ)/h) yᵢ and Σᵢ K((x − xᵢ)/h). A dense
method evaluates all M × N kernel values; on a line, sorting the training points lets each query touch
only a few boxes of them:

- **Compact kernels** (boxcar, Epanechnikov, triangular) are polynomials of degree ≤ 2 in the offset on
  their window [x − h, x + h]. The sorted points are cut into boxes of width h; inside each box, prefix
  sums of the box-local moments Σ bᵏ yᵢ and Σ bᵏ (b = (xᵢ − box centre)/h, k ≤ 2) give the sum over any
  run of the box's points, so a query costs three boxes and a few `searchsorted` lookups. Box-local
  coordinates keep every number of order 1, so the sums stay at float64 rounding.
- **Laplace**, exp(−|x − xᵢ|/h), separates into a left and a right sum. Blocks of width 300h hold the
  points; inside a block the left sum is a prefix sum of yᵢ·exp((xᵢ − g)/h) (g the block's left edge, so
  the factors run from 1 to e³⁰⁰, never overflowing), and the block before contributes one number. Points
  two blocks away carry a factor below e⁻³⁰⁰ and are dropped.
- **Gaussian**: boxes of width h and, per box, the Taylor moments of the factorisation
  exp(−(a − b)²/2) = exp(−a²/2)·exp(−b²/2)·Σₙ aⁿbⁿ/n!  (a = (x − c)/h, b = (xᵢ − c)/h, c the box centre),
  truncated after P terms; boxes farther than (R + 1)h from the query are dropped. With |b| ≤ ½ and
  |a| ≤ R + 1.5, each term's truncation error is at most |ab|ᴾ/P! (the Lagrange remainder times
  exp(−(|a| − |b|)²/2) ≤ 1), and a dropped point weighs at most exp(−R²/2) times the nearest point's weight.
  R and P are chosen so that both bounds, summed over all N points, stay below 1e-12 of the denominator
  for any query whose nearest training point lies within h (the denominator is then at least e^−½).

Queries that fall outside these guarantees (a Gaussian or Laplace query far from the data, or any query
whose sums are too small for the bound, such as a compact kernel catching a single point at the edge of
its window) are recomputed by the caller's exact evaluation. Everything runs in float64.
"""

from __future__ import annotations

import math

import torch

from ._boxes import _box_rows, _boxes, _nearest_distance
from .fastgauss import gauss_sums
from .kernels import KERNELS, Kernel

FAST_KERNELS = tuple(name for name, k in KERNELS.items() if k.fast)     # the kernels with a fast sum
_TRUST = 1e-10               # a query's sums are used when their error bound is below this share of den
_LAPLACE_BLOCK = 300.0       # block width in units of h: exp(-300) is far below any tolerance here


# --------------------------------------------------------------------------- shared pieces
def _segment_cumsum(values: torch.Tensor, seg: torch.Tensor, n_seg: int) -> torch.Tensor:
    """Inclusive cumulative sums of ``values`` (N, C) restarted at every segment; ``seg`` (N,) are sorted
    segment ids 0..n_seg-1. Each segment is summed on its own, so no segment's rounding reaches another."""
    n = values.shape[0]
    counts = torch.bincount(seg, minlength=n_seg)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(n, device=values.device) - starts[seg]
    width = int(counts.max()) if n else 0
    padded = values.new_zeros(n_seg, width, values.shape[1])
    padded[seg, pos] = values
    return padded.cumsum(dim=1)[seg, pos]


# --------------------------------------------------------------------------- compact kernels
# K as a polynomial in the offset d = (x - x_i)/h on the window: coefficients of 1, d, d^2
def _compact_sums(kern: Kernel, h: float, xq, xs, ys, loo: bool):
    """Σ K y and Σ K over the window of each query, with an upper bound on their rounding error and the
    number of points with K > 0 (|u| <= 1 when the kernel's ``poly`` says the edge is inside, else |u| < 1)."""
    left, right, closed = kern.poly
    _origin, ids, inverse, centres, starts, counts = _boxes(xs, h)
    b = (xs - centres[inverse]) / h                                        # in [-1/2, 1/2)
    powers = torch.stack([torch.ones_like(b), b, b * b], dim=1)            # (N, 3)
    moments = torch.cat([powers * ys[:, None], powers, powers.abs() * ys.abs()[:, None], powers.abs()], dim=1)
    prefix = _segment_cumsum(moments, inverse, ids.shape[0])               # (N, 12) within each box

    def cut(value, right):
        return torch.searchsorted(xs, value, right=right)

    # window ends as positions in xs, decided by the same test the dense path uses on u = (x - x_i)/h
    lo = _fix_edge(xq, xs, h, cut(xq - h, False), closed, side="lo")
    hi = _fix_edge(xq, xs, h, cut(xq + h, True), closed, side="hi")
    mid = cut(xq, True)                                                    # x_i <= x  <=>  index < mid
    support = hi - lo
    # the window as one or two runs of sorted points (triangular: left and right of x), each with the
    # kernel's polynomial in d = (x - x_i)/h; both runs are summed in one pass
    split = left != right                                                  # e.g. triangular: 1 - |d|
    polys = (left, right) if split else (left,)
    a_idx = torch.stack([lo, mid]) if split else lo[None]
    b_idx = torch.stack([mid, hi]) if split else hi[None]
    coef = torch.tensor(polys, dtype=xs.dtype, device=xs.device)[:, :, None]  # (R, 3, 1)
    n = xs.shape[0]
    # a run [a_idx, b_idx) lies in consecutive boxes r_lo..r_hi (three at most, in exact arithmetic: the
    # window is 2h wide and boxes are h wide)
    r_lo = inverse[a_idx.clamp(max=n - 1)]
    r_hi = inverse[(b_idx - 1).clamp(min=0)]
    span = torch.where(b_idx > a_idx, r_hi - r_lo + 1, 0)                  # (R, M)
    width = int(span.max()) if span.numel() else 0
    num = torch.zeros_like(xq)
    den = torch.zeros_like(xq)
    err = torch.zeros_like(xq)
    if width:
        j = torch.arange(width, device=xs.device)[:, None, None]            # (J, 1, 1): all boxes at once
        row = (r_lo[None] + j).clamp(max=ids.shape[0] - 1)                  # (J, R, M)
        s0 = starts[row]
        first = torch.maximum(a_idx[None], s0)
        last = torch.minimum(b_idx[None], s0 + counts[row])
        ok = (j < span[None]) & (last > first)
        # each box's moments over its points [first, last), from the box's own prefix sums
        upper = prefix.index_select(0, (last - 1).clamp(min=0).flatten())
        lower = prefix.index_select(0, (first - 1).clamp(min=0).flatten()) * (first > s0).flatten()[:, None]
        sums = ((upper - lower) * ok.flatten()[:, None]).T.reshape(12, *row.shape)   # (12, J, R, M)
        # c0 + c1 d + c2 d^2 with d = a - b, a = (x - c)/h, in powers of b:
        # (c0 + c1 a + c2 a^2) + (-c1 - 2 c2 a) b + c2 b^2
        a = (xq - centres[row]) / h                                          # (J, R, M)
        c0, c1, c2 = coef[:, 0], coef[:, 1], coef[:, 2]                      # (R, 1) each
        k0, k1 = c0 + c1 * a + c2 * a * a, -c1 - 2 * c2 * a
        num = (k0 * sums[0] + k1 * sums[1] + c2 * sums[2]).sum((0, 1))
        den = (k0 * sums[3] + k1 * sums[4] + c2 * sums[5]).sum((0, 1))
        err = ((k0.abs() + k1.abs() + c2.abs()) * sums[6:].sum(0)).sum((0, 1))
    eps = torch.finfo(xs.dtype).eps
    err = 16 * eps * (err + 1.0)
    if loo:                                                                # each point's own term is K(0) = 1
        num, den, support = num - ys, den - 1.0, support - 1
    return num, den, err, support


def _fix_edge(xq, xs, h, idx, closed: bool, side: str):
    """Move a window end found by comparing x_i with x -/+ h onto the dense path's test of |u| <= 1
    (boxcar) or |u| < 1 (kernels that vanish at the edge), where rounding makes the two disagree."""
    n = xs.shape[0]

    def inside(j):
        u = ((xq - xs[j.clamp(0, n - 1)]) / h).abs()
        return (u <= 1) if closed else (u < 1)

    if side == "lo":     # first index inside: step back over values that pass, forward over ones that fail
        back = (idx > 0) & inside(idx - 1)
        idx = torch.where(back, torch.searchsorted(xs, xs[(idx - 1).clamp(min=0)]), idx)
        fwd = (idx < n) & ~inside(idx)
        return torch.where(fwd, torch.searchsorted(xs, xs[idx.clamp(max=n - 1)], right=True), idx)
    fwd = (idx < n) & inside(idx)                                           # one past the last inside
    idx = torch.where(fwd, torch.searchsorted(xs, xs[idx.clamp(max=n - 1)], right=True), idx)
    back = (idx > 0) & ~inside(idx - 1)
    return torch.where(back, torch.searchsorted(xs, xs[(idx - 1).clamp(min=0)]), idx)


# --------------------------------------------------------------------------- Laplace
def _laplace_sums(h: float, xq, xs, ys, loo: bool):
    """Σ exp(-|x - x_i|/h) y_i and Σ exp(-|x - x_i|/h), each scaled by exp(+d/h) with d the distance from
    x to its nearest training point (so the largest term is 1), and a rounding bound."""
    width = _LAPLACE_BLOCK * h
    origin, ids, inverse, _centres, _starts, _counts = _boxes(xs, width)
    edge = origin + ids.to(xs.dtype) * width                               # left edge of each block
    n_blk = ids.shape[0]
    # left sums: within a block, prefix of y e^{(x_i - g)/h}; right sums: suffix of y e^{(g' - x_i)/h}
    up = torch.exp((xs - edge[inverse]) / h)                               # 1 .. e^300
    down = torch.exp((edge[inverse] + width - xs) / h)                     # 1 .. e^300
    left = _segment_cumsum(torch.stack([up * ys, up, up * ys.abs()], 1), inverse, n_blk)
    rev = torch.arange(xs.shape[0] - 1, -1, -1, device=xs.device)
    right = _segment_cumsum(torch.stack([down * ys, down, down * ys.abs()], 1)[rev],
                            (n_blk - 1) - inverse[rev], n_blk).flip(0)      # suffix within each block
    # what each whole block sends to the next block's left edge, and to the previous block's right edge
    last_of = torch.cumsum(_counts, 0) - 1
    first_of = last_of - _counts + 1
    to_next = left[last_of] * math.exp(-_LAPLACE_BLOCK)                     # e^{(x_i - g - w)/h} y
    to_prev = right[first_of] * math.exp(-_LAPLACE_BLOCK)

    nearest = _nearest_distance(xq, xs)
    q_blk = torch.floor((xq - origin) / width).to(torch.int64)
    row, exists = _box_rows(ids, q_blk)
    g = origin + q_blk.to(xs.dtype) * width
    pos = torch.searchsorted(xs, xq, right=True)                           # points with x_i <= x: index < pos
    out = torch.zeros(xq.shape[0], 3, dtype=xs.dtype, device=xs.device)
    # left part from the query's own block
    own_last = (pos - 1)
    own = exists & (own_last >= _starts[row]) & (own_last >= 0)
    scale_l = torch.exp(-(xq - g) / h + nearest / h)                       # e^{-(x - g)/h} e^{d/h}
    out += torch.where(own[:, None], left[own_last.clamp(min=0)] * scale_l[:, None], 0.0)
    # left part from the previous block (all its points are left of x)
    prow, pexists = _box_rows(ids, q_blk - 1)
    out += torch.where(pexists[:, None], to_next[prow] * scale_l[:, None], 0.0)
    # right part from the query's own block and the next one
    scale_r = torch.exp(-(g + width - xq) / h + nearest / h)
    own_first = pos
    own_r = exists & (own_first < _starts[row] + _counts[row]) & (own_first < xs.shape[0])
    out += torch.where(own_r[:, None], right[own_first.clamp(max=xs.shape[0] - 1)] * scale_r[:, None], 0.0)
    nrow, nexists = _box_rows(ids, q_blk + 1)
    out += torch.where(nexists[:, None], to_prev[nrow] * scale_r[:, None], 0.0)
    num, den, mag = out[:, 0], out[:, 1], out[:, 2]
    eps = torch.finfo(xs.dtype).eps
    # rounding: a few ulps of the magnitudes summed; dropped blocks: at most N e^-300 of the nearest term
    err = 64 * eps * (mag + den.abs() + 1.0) + xs.shape[0] * math.exp(-_LAPLACE_BLOCK)
    ok = nearest <= 100 * h                                                # den >= e^-100: the drop is negligible
    if loo:                                                                # own term: e^0 · e^{d/h}, d = 0
        num, den = num - ys, den - 1.0
    return num, den, torch.where(ok, err, math.inf)


def _compact_estimate(kern, h, q, xs, ys, leave_one_out):
    num, den, err, support = _compact_sums(kern, h, q, xs, ys, leave_one_out)
    empty = support <= 0                    # no training point within h: no estimate (and nothing to distrust)
    return torch.where(empty, math.nan, num / torch.where(empty, 1.0, den)), empty | (err <= _TRUST * den)


def _smooth_estimate(sums):
    def estimate(kern, h, q, xs, ys, leave_one_out):
        num, den, err = sums(h, q, xs, ys, leave_one_out)
        return num / den.clamp_min(torch.finfo(den.dtype).tiny), err <= _TRUST * den
    return estimate


# a kernel's ``fast`` family -> (estimate, trusted) from the sorted data: the one table the fast path reads
_SUMS = {"polynomial": _compact_estimate, "laplace": _smooth_estimate(_laplace_sums),
         "gauss": _smooth_estimate(gauss_sums)}


def kernel_sums(kern: Kernel, h: float, xq: torch.Tensor, xt: torch.Tensor, yt: torch.Tensor,
                leave_one_out: bool = False):
    """NW estimates from the fast one-dimensional sums, with a flag saying where their error bound holds.

    Parameters
    ----------
    kern : Kernel
        A kernel with a ``fast`` family ("gauss": a fast Gauss transform; "laplace": exponential blocks;
        "polynomial": prefix sums of polynomial moments over sorted points).
    h : float
        The bandwidth.
    xq : torch.Tensor, shape (M,)
        Queries (ignored with ``leave_one_out``: the queries are then the training points).
    xt, yt : torch.Tensor, shape (N,)
    leave_one_out : bool
        Each training point predicted from the others (its own term K(0) = 1 left out).

    Returns
    -------
    (estimate, trusted) : (torch.Tensor (M,), torch.Tensor (M,) bool)
        ``trusted`` False where the bound does not hold: the caller recomputes that query exactly. NaN marks
        a compact kernel with no point in reach (trusted: that is decided exactly).

    Examples
    --------
    >>> import torch
    >>> from explorer.kernels import get_kernel
    >>> x = torch.linspace(0, 1, 200, dtype=torch.float64); y = torch.cos(5 * x)
    >>> q = torch.tensor([0.1, 0.77], dtype=torch.float64)
    >>> est, ok = kernel_sums(get_kernel("gaussian"), 0.05, q, x, y)
    >>> w = torch.exp(-0.5 * ((q[:, None] - x[None]) / 0.05) ** 2)
    >>> bool(ok.all()), bool(torch.allclose(est, (w @ y) / w.sum(1), rtol=1e-9))
    (True, True)
    """
    if not kern.fast:
        raise ValueError(f"no fast kernel sum for {kern.name!r}; fast kernels: {', '.join(FAST_KERNELS)}.")
    dtype = xt.dtype
    order = torch.argsort(xt, stable=True)
    xs, ys = xt[order].double(), yt[order].double()
    q = xs if leave_one_out else xq.double()
    est, trusted = _SUMS[kern.fast](kern, h, q, xs, ys, leave_one_out)
    if leave_one_out:                                                       # back to the caller's order
        est_out, trusted_out = torch.empty_like(est), torch.empty_like(trusted)
        est_out[order], trusted_out[order] = est, trusted
        est, trusted = est_out, trusted_out
    return est.to(dtype), trusted
