"""The Gaussian kernel's sums in one dimension by a fast Gauss transform (``explorer.fastsum`` explains the
expansion and its error bounds; this module holds the plan, the Hermite terms and the sums themselves).
"""

from __future__ import annotations

import functools
import math

import torch

from ._boxes import _box_rows, _boxes, _nearest_distance

_TOL = 1e-12                 # truncation bound of the Gaussian and Laplace sums, relative to the denominator
_QUERY_CHUNK = 4096          # queries per pass of the Gaussian expansion (bounds the working memory)
_POINT_CHUNK = 16384         # training points per pass when the fast Gauss transform takes its moments


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


def gauss_sums(h: float, xq, xs, ys, loo: bool):
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
