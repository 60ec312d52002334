"""The direct way to a Nadaraya-Watson estimate, for every kernel: pairs scored in the log domain where the kernel
has a log profile, summed over query blocks × training chunks with an online log-sum-exp (so memory stays at one
block), and the h -> 0 limit taken exactly where every score underflows. ``explorer.regression`` and
``explorer.bandwidth`` (leave-one-out) build on it; the fast sums and the dot-product rewrites are the others.
Private to the package (every name here starts with ``_``): ``explorer.regression.nadaraya_watson`` is its public face.
"""

from __future__ import annotations

import math

import torch

from .kernels import Kernel

_CHUNK_CELLS = 4_000_000       # working-set size for the streaming estimate


# --------------------------------------------------------------------------- kernel scores and the h -> 0 limit
# Every path (dense, streaming, the reference loop, leave-one-out) scores pairs with ``_scores`` and takes
# the h -> 0 limit from ``_nearest``.
def _scores(kern: Kernel, diff: torch.Tensor, h: float, self_mask: torch.Tensor | None = None):
    """Kernel scores of query-train differences ``diff`` (m, n): ``(log K, True)`` for kernels with a log
    profile (-inf where ``self_mask`` excludes a pair), ``(K, False)`` for compact ones (0 where excluded)."""
    u = diff / h
    if kern.log_profile is None:
        k = kern.profile(u)
        return (k if self_mask is None else k.masked_fill(self_mask, 0.0)), False
    logk = kern.log_profile(u)
    return (logk if self_mask is None else logk.masked_fill(self_mask, -math.inf)), True


def _nearest(diff: torch.Tensor, self_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(m, n) bool: each row's nearest training point(s), where NW puts all its weight as h -> 0."""
    dist = diff.abs()
    if self_mask is not None:
        dist = dist.masked_fill(self_mask, math.inf)
    return (dist == dist.amin(dim=1, keepdim=True)) & torch.isfinite(dist)


def _dense_scores(kern: Kernel, diff: torch.Tensor, h: float, self_mask: torch.Tensor | None = None):
    """``_scores``, with rows whose log-scores all underflow to -inf replaced by the h -> 0 limit
    (log-score 0 on the nearest point(s), -inf elsewhere)."""
    scores, is_log = _scores(kern, diff, h, self_mask)
    if is_log:
        dead = torch.isneginf(scores.amax(dim=1))
        if bool(dead.any()):
            limit = torch.where(_nearest(diff, self_mask), 0.0, -math.inf).to(scores.dtype)
            scores = torch.where(dead[:, None], limit, scores)
    return scores, is_log


def _normalise(scores: torch.Tensor, is_log: bool) -> torch.Tensor:
    """Rows of kernel scores -> weights summing to 1, or all zero where a row has no support."""
    if is_log:
        rowmax = scores.amax(dim=1, keepdim=True)
        finite = torch.isfinite(rowmax)
        e = torch.exp(scores - torch.where(finite, rowmax, 0.0))
        total = e.sum(dim=1, keepdim=True)
        return torch.where(finite, e / total.clamp_min(torch.finfo(e.dtype).tiny), 0.0)
    total = scores.sum(dim=1, keepdim=True)
    return torch.where(total > 0, scores / total.clamp_min(torch.finfo(scores.dtype).tiny), 0.0)


def _nw_streaming(kern, h, xq, xt, yt, chunk_size=None, exclude=None):
    """NW estimates over query blocks x training chunks. ``exclude`` (M,) names, for each query, one
    training index to leave out (leave-one-out); None leaves nothing out."""
    m, n = xq.shape[0], xt.shape[0]
    ncol = chunk_size or max(1, min(n, _CHUNK_CELLS // max(1, min(m, 4096))))
    nrow = max(1, min(m, _CHUNK_CELLS // ncol))
    out = torch.empty(m, dtype=xt.dtype, device=xt.device)
    for r0 in range(0, m, nrow):
        q = xq[r0:r0 + nrow]
        run_max = torch.full((q.shape[0],), -math.inf, dtype=xt.dtype, device=xt.device)
        den = torch.zeros_like(run_max)
        num = torch.zeros_like(run_max)
        for c0 in range(0, n, ncol):
            x_c, y_c = xt[c0:c0 + ncol], yt[c0:c0 + ncol]
            diff = q[:, None] - x_c[None, :]
            self_mask = None
            if exclude is not None:
                cols = torch.arange(c0, c0 + x_c.shape[0], device=xt.device)
                self_mask = exclude[r0:r0 + nrow, None] == cols[None, :]
            logk, is_log = _scores(kern, diff, h, self_mask)
            if not is_log:
                den += logk.sum(dim=1)
                num += logk @ y_c
                continue
            # online log-sum-exp: rescale what was summed so far to the new running max
            new_max = torch.maximum(run_max, logk.amax(dim=1))
            safe = torch.where(torch.isfinite(new_max), new_max, 0.0)
            e = torch.exp(logk - safe[:, None])
            scale = torch.exp(run_max - safe)
            den = den * scale + e.sum(dim=1)
            num = num * scale + e @ y_c
            run_max = new_max
        est = num / den.clamp_min(torch.finfo(den.dtype).tiny)
        if kern.log_profile is None:
            est = torch.where(den > 0, est, math.nan)
        else:
            dead = torch.isneginf(run_max)
            if bool(dead.any()):     # every kernel value underflowed: take the h -> 0 limit
                rows = torch.nonzero(dead).flatten()
                skip = None if exclude is None else exclude[r0:r0 + nrow][rows]
                est[rows] = _nearest_mean(q[rows], skip, xt, yt)
        out[r0:r0 + nrow] = est
    # a convex combination of the y_i: clamp away rounding excursions past [min y, max y]
    return torch.where(torch.isnan(out), out, out.clamp(yt.min(), yt.max()))


def _nearest_mean(q, skip, xt, yt):
    """Mean of y over the nearest training point(s) of each query (the h -> 0 limit of NW), leaving
    out training index ``skip[i]`` for query i when ``skip`` is given."""
    self_mask = None
    if skip is not None:
        self_mask = torch.zeros(q.shape[0], xt.shape[0], dtype=torch.bool, device=q.device)
        self_mask[torch.arange(q.shape[0], device=q.device), skip] = True
    at_min = _nearest(q[:, None] - xt[None, :], self_mask)
    count = at_min.sum(dim=1)
    mean = (at_min.to(yt.dtype) @ yt) / count.clamp_min(1)
    return torch.where(count > 0, mean, math.nan)
