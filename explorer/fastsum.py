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

import functools
import math

import torch

from .kernels import KERNELS, Kernel

FAST_KERNELS = tuple(name for name, k in KERNELS.items() if k.fast)     # the kernels with a fast sum
_TOL = 1e-12                 # truncation bound of the Gaussian and Laplace sums, relative to the denominator
_TRUST = 1e-10               # a query's sums are used when their error bound is below this share of den
_LAPLACE_BLOCK = 300.0       # block width in units of h: exp(-300) is far below any tolerance here
_QUERY_CHUNK = 4096          # queries per pass of the Gaussian expansion (bounds the working memory)
_POINT_CHUNK = 16384         # training points per pass when the fast Gauss transform takes its moments


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


def _boxes(xs: torch.Tensor, width: float):
    """Boxes of the given width over the sorted points: (ids of the non-empty boxes, box of each point,
    box centres, first index of each box in xs, count per box)."""
    origin = float(xs[0])
    key = torch.floor((xs - origin) / width).to(torch.int64)
    ids, inverse, counts = torch.unique_consecutive(key, return_inverse=True, return_counts=True)
    starts = torch.cumsum(counts, 0) - counts
    centres = origin + (ids.to(xs.dtype) + 0.5) * width
    return origin, ids, inverse, centres, starts, counts


def _box_rows(ids: torch.Tensor, wanted: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For box ids ``wanted`` (any shape), the row of that box among the non-empty ``ids`` and whether
    it exists."""
    row = torch.searchsorted(ids, wanted).clamp(max=max(ids.shape[0] - 1, 0))
    return row, ids[row] == wanted


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


def _nearest_distance(xq, xs):
    n = xs.shape[0]
    idx = torch.searchsorted(xs, xq)
    left = (xq - xs[(idx - 1).clamp(0, n - 1)]).abs()
    right = (xs[idx.clamp(0, n - 1)] - xq).abs()
    return torch.minimum(left, right)


# --------------------------------------------------------------------------- Gaussian
@functools.lru_cache(maxsize=64)
def _gauss_plan(n: int) -> tuple[float, int]:
    """Cut-off radius R (in h) and number of Taylor terms P for N points at tolerance _TOL.

    A point's truncation error is at most exp(-(|a| - |b|)²/2)·|ab|^P/P! with |b| <= 1/2; the plan takes
    the largest value of that over |a| <= R + 1.5 and asks N times it to stay below _TOL·e^-1/2."""
    radius = math.sqrt(2 * math.log(max(n, 1) / _TOL))
    grid = [0.01 * i for i in range(1, int(100 * (radius + 1.5)) + 1)]

    def worst(p: int) -> float:
        return max(math.exp(-0.5 * max(a - 0.5, 0.0) ** 2 + p * math.log(0.5 * a) - math.lgamma(p + 1))
                   for a in grid)

    terms = 4
    while n * worst(terms) > _TOL * math.exp(-0.5):
        terms += 1
    return radius, terms


_CRAMER = 1.086435            # |He_n(t)| exp(-t²/4) <= 1.086435 sqrt(n!)  (Cramér's inequality)


@functools.lru_cache(maxsize=64)
def _fgt_terms(n: int) -> int:
    """Terms P of the Hermite (source) and Taylor (target) expansions of the fast Gauss transform for N
    points: with |b|, |α| <= 1/2 and Cramér's inequality, each truncation costs at most
    1.09 · 2.6 · Σ|y| · (1/√2)^P / sqrt(P!) (a geometric tail); N of them stay below _TOL·e^-1/2."""
    p = 4
    while n * _CRAMER * 2.6 * 2 * 2 ** (-p / 2) / math.sqrt(math.factorial(p)) > _TOL * math.exp(-0.5):
        p += 1
    return p


def _bucket(n: int) -> int:
    """n rounded up to a power of two: the plans depend on N only through a bound, and are cached."""
    return 1 << max(0, (n - 1).bit_length())


@functools.lru_cache(maxsize=16)
def _translations(terms: int, reach: int, device: str) -> torch.Tensor:
    """T_s[n, m] = ((-1)^m / m!) h_{n+m}(s), the Hermite-to-Taylor translation from a source box s boxes
    away (Greengard & Strain 1991), for window index j = 0..2 reach with s = reach - j; stacked as
    (T, T, |T|) for the num, den and size channels: (3, 2 reach + 1, P, P), float64."""
    shifts = torch.arange(reach, -reach - 1, -1, dtype=torch.float64, device=device)
    herm = _hermite_functions(shifts, 2 * terms - 1)                                # (2 reach + 1, 2P - 1)
    n_idx = torch.arange(terms, device=device)
    sign = torch.tensor([(-1.0) ** m / math.factorial(m) for m in range(terms)], dtype=torch.float64,
                        device=device)
    trans = herm[:, n_idx[:, None] + n_idx[None, :]] * sign[None, None, :]          # (2 reach + 1, P, P)
    return torch.stack([trans, trans, trans.abs()])


def _hermite_functions(s: torch.Tensor, count: int) -> torch.Tensor:
    """h_k(s) = He_k(s) exp(-s²/2) for k = 0..count-1 (probabilists' Hermite), shape (len(s), count)."""
    out = s.new_empty(s.shape[0], count)
    out[:, 0] = torch.exp(-0.5 * s * s)
    if count > 1:
        out[:, 1] = s * out[:, 0]
    for k in range(1, count - 1):
        out[:, k + 1] = s * out[:, k] - k * out[:, k - 1]
    return out


def _gauss_sums_fgt(h: float, xq, xs, ys, radius: float, reach: int):
    """The fast Gauss transform (Greengard & Strain 1991) on a grid of boxes of width h: per source box the
    Hermite moments A_n = Σ yᵢ bᵢⁿ/n! (b = (xᵢ − c)/h), translated to a Taylor series about each target
    box's centre, B_m = ((−1)^m/m!) Σ_s Σ_n A_n(Q − s) h_{n+m}(s), then Σ_m B_m αᵐ at each query
    (α = (x − c_Q)/h). Returns num, den and a bound on every product's size (for the rounding error)."""
    terms = _fgt_terms(_bucket(xs.shape[0]))
    origin = float(xs[0])
    key = torch.floor((xs - origin) / h).to(torch.int64)
    n_box = int(key[-1]) + 1
    inv_fact = torch.tensor([1 / math.factorial(k) for k in range(terms)], dtype=xs.dtype, device=xs.device)
    rows = n_box + 2 * reach
    flat = xs.new_zeros(rows, 3 * terms)                                             # channels: num, den, size
    for c0 in range(0, xs.shape[0], _POINT_CHUNK):      # in chunks of points: a few MB of temporaries at most
        k = key[c0:c0 + _POINT_CHUNK]
        b = (xs[c0:c0 + _POINT_CHUNK] - (origin + (k.to(xs.dtype) + 0.5) * h)) / h
        powers = torch.linalg.vander(b, N=terms)                                      # (chunk, P): b^0 .. b^(P-1)
        yc = ys[c0:c0 + _POINT_CHUNK]
        contrib = torch.cat([powers * yc[:, None], powers, powers.abs() * (1 + yc.abs())[:, None]], dim=1)
        flat.index_add_(0, k + reach, contrib)          # a contiguous 2-D scatter: much faster than 3-D here
    moments = flat.view(rows, 3, terms) * inv_fact
    trans = _translations(terms, reach, str(xs.device))                              # (3, 2 reach + 1, P, P)
    if rows <= 4096:             # all shifts at once: target box Q takes source boxes Q - s, |s| <= reach
        padded = torch.nn.functional.pad(moments, (0, 0, 0, 0, reach, reach))         # (rows + 2 reach, 3, P)
        windows = padded.unfold(0, 2 * reach + 1, 1)           # (rows, 3, P, W); window j is shift s = reach - j
        local = torch.einsum("qcnj,cjnm->qcm", windows, trans)
    else:
        local = xs.new_zeros(rows, 3, terms)
        for j in range(2 * reach + 1):
            shift = reach - j
            lo, hi = max(0, shift), min(rows, rows + shift)
            local[lo:hi] += torch.einsum("qcn,cnm->qcm", moments[lo - shift:hi - shift], trans[:, j])
    num, den, mag = (torch.zeros_like(xq) for _ in range(3))
    flat_local = local.reshape(rows, 3 * terms)
    for r0 in range(0, xq.shape[0], _QUERY_CHUNK):      # in chunks of queries: (chunk, 3, P) at a time
        x = xq[r0:r0 + _QUERY_CHUNK]
        q_key = torch.floor((x - origin) / h).to(torch.int64)
        inside = (q_key >= -reach) & (q_key < n_box + reach)
        q_row = (q_key + reach).clamp(0, rows - 1)
        alpha = (x - (origin + (q_key.to(xs.dtype) + 0.5) * h)) / h
        apow = torch.linalg.vander(alpha, N=terms)                                    # (chunk, P)
        coeff = flat_local.index_select(0, q_row).view(-1, 3, terms)                  # (chunk, 3, P)
        sums = torch.bmm(coeff[:, :2], apow[:, :, None])[..., 0]                   # (chunk, 2)
        size = torch.bmm(coeff[:, 2:], apow.abs()[:, :, None])[:, 0, 0]
        num[r0:r0 + _QUERY_CHUNK] = torch.where(inside, sums[:, 0], 0.0)
        den[r0:r0 + _QUERY_CHUNK] = torch.where(inside, sums[:, 1], 0.0)
        mag[r0:r0 + _QUERY_CHUNK] = torch.where(inside, size, 0.0)
    return num, den, mag, terms + 2 * reach


def _gauss_sums(h: float, xq, xs, ys, loo: bool):
    """Σ K y and Σ K for the Gaussian kernel (unscaled, K(0) = 1), to a relative error below _TOL of the
    denominator for queries whose nearest point lies within h; inf error elsewhere."""
    radius, terms = _gauss_plan(_bucket(xs.shape[0]))
    reach_fgt = math.ceil(radius + 2)
    span_boxes = float(xs[-1] - xs[0]) / h
    if span_boxes <= 4 * xs.shape[0] + 4096:          # a dense grid of boxes: the fast Gauss transform
        num, den, mag, depth = _gauss_sums_fgt(h, xq, xs, ys, radius, reach_fgt)
        eps = torch.finfo(xs.dtype).eps
        ok = _nearest_distance(xq, xs) <= h
        err = torch.where(ok, _TOL * den.abs() + 4 * depth * eps * mag, math.inf)
        if loo:
            num, den = num - ys, den - 1.0
        return num, den, err
    origin, ids, inverse, centres, _starts, _counts = _boxes(xs, h)
    b = (xs - centres[inverse]) / h
    w = torch.exp(-0.5 * b * b)
    powers = torch.cumprod(torch.cat([torch.ones_like(b)[:, None], b[:, None].expand(-1, terms - 1)], 1), dim=1)
    inv_fact = torch.tensor([1 / math.factorial(k) for k in range(terms)], dtype=xs.dtype, device=xs.device)
    k_rows = ids.shape[0]
    coef_y = xs.new_zeros(k_rows, terms).index_add_(0, inverse, powers * (w * ys)[:, None]) * inv_fact
    coef_1 = xs.new_zeros(k_rows, terms).index_add_(0, inverse, powers * w[:, None]) * inv_fact
    # per box, Σ (1 + |y|): with the largest factor exp(-(|a| - |b|)²/2) a point of the box can have, a
    # bound on the size of what the box adds (what rounding can lose is a few ulps of it)
    size = xs.new_zeros(k_rows).index_add_(0, inverse, 1 + ys.abs())
    reach = math.ceil(radius + 2)           # boxes past this hold only points beyond (R + 1) h
    if k_rows <= 2 * reach + 1:          # few boxes: every query takes them all (no lookups)
        offsets = None
    else:
        offsets = torch.arange(-reach, reach + 1, device=xs.device)
    num = torch.empty_like(xq)
    den = torch.empty_like(xq)
    mag = torch.empty_like(xq)
    for r0 in range(0, xq.shape[0], _QUERY_CHUNK):
        x = xq[r0:r0 + _QUERY_CHUNK]
        if offsets is None:
            row = torch.arange(k_rows, device=xs.device).expand(x.shape[0], k_rows)
            exists = torch.ones_like(row, dtype=torch.bool)
        else:
            q_box = torch.floor((x - origin) / h).to(torch.int64)
            row, exists = _box_rows(ids, q_box[:, None] + offsets[None, :])  # (m, 2 reach + 1)
        a = (x[:, None] - centres[row]) / h
        exists = exists & (a.abs() <= radius + 1.5)                          # farther boxes: below the cut-off
        cy, c1 = coef_y[row], coef_1[row]                                    # (m, boxes, P)
        acc_y, acc_1 = cy[..., terms - 1], c1[..., terms - 1]
        for k in range(terms - 2, -1, -1):                                   # Horner in a
            acc_y = torch.addcmul(cy[..., k], acc_y, a)
            acc_1 = torch.addcmul(c1[..., k], acc_1, a)
        g = torch.where(exists, torch.exp(-0.5 * a * a), 0.0)
        num[r0:r0 + _QUERY_CHUNK] = (g * acc_y).sum(1)
        den[r0:r0 + _QUERY_CHUNK] = (g * acc_1).sum(1)
        far = (a.abs() - 0.5).clamp_min(0)
        mag[r0:r0 + _QUERY_CHUNK] = torch.where(exists, torch.exp(-0.5 * far * far) * size[row], 0.0).sum(1)
    eps = torch.finfo(xs.dtype).eps
    ok = _nearest_distance(xq, xs) <= h                                    # then den >= e^-1/2: the bounds hold
    err = torch.where(ok, _TOL * den.abs() + 8 * terms * eps * mag, math.inf)
    if loo:
        num, den = num - ys, den - 1.0
    return num, den, err


# --------------------------------------------------------------------------- entry point
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
    if kern.fast == "polynomial":
        num, den, err, support = _compact_sums(kern, h, q, xs, ys, leave_one_out)
        empty = support <= 0
        trusted = empty | (err <= _TRUST * den)
        est = torch.where(empty, math.nan, num / torch.where(empty, 1.0, den))
    else:
        num, den, err = {"laplace": _laplace_sums, "gauss": _gauss_sums}[kern.fast](h, q, xs, ys, leave_one_out)
        trusted = err <= _TRUST * den
        est = num / den.clamp_min(torch.finfo(den.dtype).tiny)
    if leave_one_out:                                                       # back to the caller's order
        est_out, trusted_out = torch.empty_like(est), torch.empty_like(trusted)
        est_out[order], trusted_out[order] = est, trusted
        est, trusted = est_out, trusted_out
    return est.to(dtype), trusted
