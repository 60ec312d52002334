"""Choosing the bandwidth: leave-one-out error, its minimiser over the whole range, and Silverman's rule.

Each training point is predicted from all the others (the kernel matrix's diagonal left out); the bandwidth
with the lowest mean squared error of those predictions is the leave-one-out choice.
"""

from __future__ import annotations

import math

import torch

from . import _scores
from ._checks import as_tensor, one_of, positive_number
from ._streaming import _nw_streaming
from .fastsum import kernel_sums
from .kernels import Kernel, equivalent_bandwidth, get_kernel
from .regression import (
    FAST_MIN_CELLS,
    FAST_REFUSAL,
    Path,
    _cpu,
    _gaussian_rank2_sums,
    _inputs,
    choose,
    rewrite_is_accurate,
)


def loo_cv_scores(x, y, kernel: str = "gaussian", bandwidths=None, *, method: str = "auto") -> torch.Tensor:
    """Leave-one-out mean squared error for each bandwidth.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        The data; each point is predicted from all the others (the kernel matrix's diagonal is excluded).
    kernel : str
    bandwidths : array_like, optional
        The bandwidths to score (each > 0). By default ``search_grid(x, kernel)``: the log grid that
        ``select_bandwidth`` starts from.
    method : {"auto", "fast", "direct"}
        As in ``loo_predictions``.

    Returns
    -------
    torch.Tensor, shape (len(bandwidths),)
        inf at a bandwidth where some point has no other point within reach of a compact kernel.

    Examples
    --------
    >>> x = [0.0, 1.0, 2.0, 3.0]; y = [0.0, 1.0, 2.0, 3.0]
    >>> loo_cv_scores(x, y, "boxcar", [0.5, 1.0]).tolist()        # h = 0.5: nobody has a neighbour
    [inf, 0.5]
    >>> len(loo_cv_scores(x, y)) == len(search_grid(x))             # the default grid
    True
    """
    kern, _, (xt, _xq, yt) = _inputs(x, x, y, kernel, 1.0, names=("x", "x", "y"))
    hs = _grid(kern, xt) if bandwidths is None else _bandwidth_list(bandwidths)
    return _loo_scores(kern, xt, yt, hs, one_of(method, LOO_METHODS, "method"))


def search_grid(x, kernel: str = "gaussian") -> list[float]:
    """The log-spaced bandwidths that the leave-one-out search starts from.

    From 1/1000 of the data's range (for a compact kernel: from just above the largest distance between a point
    and its nearest neighbour, below which some point has no neighbour) to twice the range, ``SEARCH_GRID``
    values (48 for a compact kernel, 32 for a smooth one).

    Parameters
    ----------
    x : array_like, shape (N,) or (N, 1)
    kernel : str

    Returns
    -------
    list of float
        Increasing.

    Examples
    --------
    >>> grid = search_grid([0.0, 1.0, 2.0, 4.0])
    >>> len(grid), round(grid[0], 6), round(grid[-1], 6)
    (32, 0.004, 8.0)
    """
    kern = get_kernel(kernel)
    return _grid(kern, as_tensor(x, "x", ndim=1))


def _range(kern: Kernel, xt: torch.Tensor) -> tuple[float, float]:
    if xt.shape[0] < 2:
        raise ValueError(f"x holds {xt.shape[0]} point{'s' * (xt.shape[0] != 1)}: choosing a bandwidth needs at "
                         "least 2 points with different x.")
    span = float(xt.max() - xt.min())
    if span == 0:
        raise ValueError("all x values are identical, so no bandwidth can be chosen: give x that vary.")
    lo, hi = span * 1e-3, span * 2
    if kern.compact:
        lo = max(lo, _largest_nearest_gap(xt) * (1 + 1e-9))
    return lo, hi


def _grid(kern: Kernel, xt: torch.Tensor) -> list[float]:
    lo, hi = _range(kern, xt)
    return torch.logspace(math.log10(lo), math.log10(hi), SEARCH_GRID[kern.compact], dtype=torch.float64).tolist()


def _bandwidth_list(bandwidths) -> list[float]:
    values = bandwidths.tolist() if hasattr(bandwidths, "tolist") else list(bandwidths)
    if not values:
        raise ValueError("bandwidths is empty: give at least one bandwidth > 0.")
    return [positive_number(b, "each bandwidth") for b in values]


def _loo_scores(kern, xt, yt, hs: list[float], method: str = "auto") -> torch.Tensor:   # (explorer._scores)
    if xt.shape[0] < 2:
        raise ValueError("leave-one-out needs at least 2 training points.")
    key = (kern.name, _scores.data_key(xt, yt), method)
    return torch.tensor([_scores.remembered((*key, float(h)), lambda h=h: _loo_score(kern, h, xt, yt, method))
                         for h in hs], dtype=xt.dtype, device=xt.device)


def _loo_score(kern, h: float, xt, yt, method: str) -> float:
    pred = loo_predictions(kern, h, xt, yt, method)
    return math.inf if bool(torch.isnan(pred).any()) else float(((pred - yt) ** 2).mean())


def loo_predictions(kern: Kernel, h: float, xt: torch.Tensor, yt: torch.Tensor,
                    method: str = "auto") -> torch.Tensor:
    """Each training point predicted from all the others.

    Parameters
    ----------
    kern : Kernel
        From ``explorer.kernels.get_kernel``.
    h : float
        The bandwidth.
    xt, yt : torch.Tensor, shape (N,)
        Training inputs and targets (same dtype and device).
    method : {"auto", "fast", "direct"}
        ``"fast"`` (and ``"auto"`` on CPU for N² >= ``FAST_MIN_CELLS``) takes the one-dimensional sums of
        ``explorer.fastsum``, each point leaving its own term K(0) = 1 out, and recomputes directly the
        points outside its error bound. Otherwise, for a dot-product kernel (the Gaussian), the exact
        shortcut: with the full sums S_i = Σ_j K_ij y_j and Z_i = Σ_j K_ij (each row scaled so that K_ii = 1)
        the estimate is (S_i - y_i) / (Z_i - 1); points whose neighbours carry almost no weight are
        recomputed directly. Other kernels: the direct sums with each point's own term excluded.

    Returns
    -------
    torch.Tensor, shape (N,)
        NaN where a point has no neighbour in reach of a compact kernel.

    Examples
    --------
    >>> import torch
    >>> from explorer.kernels import get_kernel
    >>> x = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    >>> y = torch.tensor([0.0, 3.0, 6.0], dtype=torch.float64)
    >>> loo_predictions(get_kernel("constant"), 1.0, x, y).tolist()     # the mean of the other two
    [4.5, 3.0, 1.5]
    """
    return _LOO_PATHS[choose(_LOO_PATHS, method, kern, xt, h)].run(kern, h, xt, yt)


def _loo_fast(kern: Kernel, h: float, xt, yt):
    index = torch.arange(xt.shape[0], device=xt.device)
    pred, trusted = kernel_sums(kern, h, xt, xt, yt, leave_one_out=True)
    if not bool(trusted.all()):
        rows = torch.nonzero(~trusted).flatten()
        pred[rows] = _nw_streaming(kern, h, xt[rows], xt, yt, exclude=index[rows])
    return torch.where(torch.isnan(pred), pred, pred.clamp(yt.min(), yt.max()))


def _loo_direct(kern: Kernel, h: float, xt, yt):
    return _nw_streaming(kern, h, xt, xt, yt, exclude=torch.arange(xt.shape[0], device=xt.device))


def _loo_rank2(kern: Kernel, h: float, xt, yt):
    index = torch.arange(xt.shape[0], device=xt.device)
    num, den = _gaussian_rank2_sums(xt, xt, yt, h)
    rest = den - 1
    pred = (num - yt) / rest.clamp_min(torch.finfo(den.dtype).tiny)
    fragile = rest < 1e-3 * den
    if bool(fragile.any()):
        rows = torch.nonzero(fragile).flatten()
        pred[rows] = _nw_streaming(kern, h, xt[rows], xt, yt, exclude=index[rows])
    return pred.clamp(yt.min(), yt.max())


# In the order "auto" tries them (the same idiom as ``regression._PATHS``): the fast sums on CPU from
# FAST_MIN_CELLS pairs, the dot-product shortcut when accurate, the direct sums.
_LOO_PATHS = {
    "fast": Path(_loo_fast, "fast", FAST_REFUSAL,
                 lambda kern, xt, h: _cpu(xt) and xt.shape[0] ** 2 >= FAST_MIN_CELLS),
    "rank2": Path(_loo_rank2, "dot_product", auto=lambda kern, xt, h: rewrite_is_accurate(xt, xt, h)),
    "direct": Path(_loo_direct),
}
LOO_METHODS = ("auto", "fast", "direct")


SEARCH_GRID = {True: 48, False: 32}     # log-spaced bandwidths scored first: compact kernels, smooth ones
SEARCH_REFINE = 3                       # the best local minima of the grid refined by golden-section search
FLAT = 1e-9              # leave-one-out scores this close (relatively) are the same score


def flat_below(x, y, kernel: str, h: float) -> float | None:
    """Where the leave-one-out curve is flat from the search range's lower end up to ``h``: the largest bandwidth
    of the search grid (``search_grid``) that still scores what the range's smallest one does, when ``h`` scores no
    better (within ``FLAT``, relatively); else None. A Gaussian or Laplace smoother's estimate tends to its nearest
    neighbour's value as h -> 0, so on some data every small h scores the same: a minimum found there is where the
    search stopped, not a bandwidth the data chose.

    Parameters
    ----------
    x, y : array_like, shape (N,)
    kernel : str
    h : float
        A bandwidth the search found (``select_bandwidth``).

    Returns
    -------
    float or None
        The flat stretch's upper end, or None when ``h`` scores lower than every bandwidth below it.

    Examples
    --------
    >>> from explorer.data import make_dataset
    >>> flat, dipped = make_dataset("d2l", n=10, seed=0), make_dataset("d2l", n=10, seed=1)
    >>> round(flat_below(flat.x, flat.y, "gaussian", select_bandwidth(flat.x, flat.y, "gaussian")), 4)
    0.0346
    >>> flat_below(dipped.x, dipped.y, "gaussian", select_bandwidth(dipped.x, dipped.y, "gaussian")) is None
    True
    """
    grid = search_grid(x, kernel)
    scores = loo_cv_scores(x, y, kernel, grid).tolist()
    here = float(loo_cv_scores(x, y, kernel, [h])[0])
    floor = scores[0]
    if not math.isfinite(floor) or here < floor * (1 - FLAT):
        return None
    edge = grid[0]
    for b, score in zip(grid, scores, strict=True):
        if abs(score - floor) > FLAT * abs(floor):
            break
        edge = b
    return max(edge, h)


EXACT_BOXCAR_PAIRS = 500_000            # the boxcar's whole leave-one-out curve is swept up to this many pairs


def select_bandwidth(x, y, kernel: str = "gaussian", bandwidths=None, *, method: str = "auto") -> float:
    """The bandwidth minimising the leave-one-out error over the whole search range.

    Parameters
    ----------
    x, y : array_like, shape (N,)
    kernel : str
    bandwidths : array_like, optional
        A grid to choose from. Without it, the range is from 1/1000 of the data range (for a compact kernel: from
        the largest distance between a point and its nearest neighbour, below which some point has no neighbour)
        to twice the range. The boxcar's leave-one-out error is a step function of h that changes only where h
        crosses a distance between two points: with up to ``EXACT_BOXCAR_PAIRS`` pairs it is swept exactly, step
        by step, and the middle of the lowest step returned. Otherwise a log grid of ``SEARCH_GRID`` bandwidths is
        scored, and each of its ``SEARCH_REFINE`` lowest local minima refined by golden-section search on log h
        between its neighbours, to 1 %: a curve with several dips (compact kernels have many) is searched
        everywhere, not only around the best grid point.
    method : {"auto", "fast", "direct"}
        As in ``loo_cv_scores``.

    Returns
    -------
    float

    Examples
    --------
    >>> x = [0.0, 1.0, 2.0, 3.0, 4.0]; y = [0.0, 1.0, 0.0, 1.0, 0.0]
    >>> select_bandwidth(x, y, "gaussian", [0.1, 1.0, 10.0])
    10.0
    >>> h = select_bandwidth(x, y, "boxcar")        # the lowest step: each point's neighbours within 2
    >>> 2.0 <= h < 3.0
    True
    """
    kern, _, (xt, _xq, yt) = _inputs(x, x, y, kernel, 1.0, names=("x", "x", "y"))
    method = one_of(method, LOO_METHODS, "method")
    if bandwidths is not None:
        hs = _bandwidth_list(bandwidths)
        return hs[int(torch.argmin(_loo_scores(kern, xt, yt, hs, method)))]
    lo, hi = _range(kern, xt)
    if kern.name == "boxcar" and xt.shape[0] * (xt.shape[0] - 1) // 2 <= EXACT_BOXCAR_PAIRS:
        return _boxcar_best(xt, yt, lo, hi)
    grid = _grid(kern, xt)
    scores = _loo_scores(kern, xt, yt, grid, method).tolist()
    seen = list(zip(scores, grid, strict=True))
    last = len(grid) - 1
    around = [(scores[i - 1] if i else math.inf, scores[i + 1] if i < last else math.inf) for i in range(last + 1)]
    minima = [i for i, (left, right) in enumerate(around) if math.isfinite(scores[i]) and scores[i] <= min(left, right)]
    for i in sorted(minima, key=lambda i: scores[i])[:SEARCH_REFINE]:
        seen += _golden(lambda log_h: float(_loo_scores(kern, xt, yt, [math.exp(log_h)], method)[0]),
                        math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, last)]))
    return min(seen)[1]


def _golden(f, a: float, b: float, tol: float = 1e-2) -> list[tuple[float, float]]:
    """Golden-section search for a minimum of ``f`` on [a, b] (log h) to ``tol``: the (score, h) pairs tried."""
    golden = (math.sqrt(5) - 1) / 2
    c, d = b - golden * (b - a), a + golden * (b - a)
    fc, fd = f(c), f(d)
    tried = [(fc, math.exp(c)), (fd, math.exp(d))]
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - golden * (b - a)
            fc = f(c)
            tried.append((fc, math.exp(c)))
        else:
            a, c, fc = c, d, fd
            d = a + golden * (b - a)
            fd = f(d)
            tried.append((fd, math.exp(d)))
    return tried


def _largest_nearest_gap(xt: torch.Tensor) -> float:
    """The largest distance from a point to its nearest other point: below it, some point has no neighbour."""
    gaps = torch.diff(torch.sort(xt).values)
    nearest = torch.minimum(torch.cat([gaps[:1], gaps]), torch.cat([gaps, gaps[-1:]]))
    return float(nearest.max())


def boxcar_loo_steps(xt: torch.Tensor, yt: torch.Tensor, lo: float, hi: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The boxcar's exact leave-one-out curve on [lo, hi], step by step.

    The curve is constant between the distances |x_i − x_j|: K = 1[|u| <= 1] takes point j into point i's window
    from h = |x_i − x_j| on, so sweeping the pairs in order of distance updates two points' predictions at a time.
    O(N²) memory and time, all in float64.

    Parameters
    ----------
    xt, yt : torch.Tensor, shape (N,)
        Training inputs and targets.
    lo, hi : float
        The range of bandwidths (0 < lo < hi).

    Returns
    -------
    (starts, mse) : (torch.Tensor, torch.Tensor)
        ``starts``: lo, then each distance in (lo, hi], sorted (distances equal but for rounding merged);
        ``mse``: the leave-one-out error on [starts[k], starts[k + 1]), the last step up to hi; inf while some
        point has no neighbour.

    Examples
    --------
    >>> import torch
    >>> x, y = (torch.tensor(v, dtype=torch.float64) for v in ([0.0, 1.0, 3.0], [0.0, 1.0, 2.0]))
    >>> starts, mse = boxcar_loo_steps(x, y, 0.5, 5.0)
    >>> starts.tolist(), [round(v, 4) for v in mse.tolist()]
    ([0.5, 1.0, 2.0, 3.0], [inf, inf, 0.6667, 1.5])
    """
    n = xt.shape[0]
    i, j = torch.triu_indices(n, n, 1, device=xt.device)
    dist = (xt[i] - xt[j]).abs()
    inside = dist <= lo                                    # pairs already within every h of the range
    count = torch.zeros(n, dtype=torch.float64, device=xt.device)
    total = torch.zeros(n, dtype=torch.float64, device=xt.device)
    for a, b in ((i, j), (j, i)):
        count.index_add_(0, a[inside], torch.ones_like(dist[inside]))
        total.index_add_(0, a[inside], yt[b[inside]])

    def error(s, z, y):
        return torch.where(z > 0, (y - s / z.clamp_min(1)) ** 2, torch.zeros_like(y))

    err0 = error(total, count, yt)
    events = torch.nonzero(~inside & (dist <= hi)).flatten()
    events = events[torch.argsort(dist[events], stable=True)]
    e_dist = dist[events]
    # each event adds one neighbour to each of its two points: one record per (point, event)
    point = torch.cat([i[events], j[events]])
    other = torch.cat([j[events], i[events]])
    order = torch.argsort(point * (len(events) + 1) + torch.arange(len(events), device=xt.device).repeat(2),
                          stable=True)                     # by point, then by event
    point, other, when = point[order], other[order], torch.arange(len(events), device=xt.device).repeat(2)[order]
    first = torch.ones_like(point, dtype=torch.bool)
    first[1:] = point[1:] != point[:-1]
    group = torch.cumsum(first.to(torch.int64), 0) - 1
    starts_of = torch.nonzero(first).flatten()
    z = count[point] + (torch.arange(len(point), device=xt.device) - starts_of[group] + 1).to(torch.float64)
    cum = torch.cumsum(yt[other], 0)
    s = total[point] + cum - torch.where(starts_of[group] > 0, cum[(starts_of[group] - 1).clamp_min(0)],
                                         torch.zeros_like(cum))
    after = error(s, z, yt[point])
    before = torch.where(first, err0[point], torch.roll(after, 1))
    change = torch.zeros(len(events), dtype=torch.float64, device=xt.device)
    change.index_add_(0, when, after - before)
    filled = torch.zeros(len(events), dtype=torch.float64, device=xt.device)      # points getting a first neighbour
    filled.index_add_(0, when, (first & (count[point] == 0)).to(torch.float64))
    sq = torch.cat([err0.sum()[None], err0.sum() + torch.cumsum(change, 0)])
    empty = torch.cat([(count == 0).sum().to(torch.float64)[None],
                       (count == 0).sum() - torch.cumsum(filled, 0)])
    mse = torch.where(empty > 0, torch.full_like(sq, math.inf), sq / n)
    starts = torch.cat([torch.tensor([lo], dtype=torch.float64, device=xt.device), e_dist.to(torch.float64)])
    # only the state after the last of several equal distances is a state some h has (distances equal but for
    # rounding, 0.3 - 0.1 against 0.2, count as equal: no h tells them apart reliably)
    keep = torch.ones_like(starts, dtype=torch.bool)
    keep[:-1] = starts[:-1] * (1 + 1e-9) < starts[1:]
    return starts[keep], mse[keep]


def _boxcar_best(xt: torch.Tensor, yt: torch.Tensor, lo: float, hi: float) -> float:
    """The middle (on a log scale) of the boxcar's lowest leave-one-out step in [lo, hi]."""
    starts, mse = boxcar_loo_steps(xt.double(), yt.double(), lo, hi)
    k = int(torch.argmin(mse))
    end = float(starts[k + 1]) if k + 1 < len(starts) else hi
    return math.sqrt(float(starts[k]) * end)


def silverman_bandwidth(x, kernel: str = "gaussian") -> float:
    """Silverman's rule of thumb, 0.9 · min(sd, IQR / 1.34) · n^(-1/5), for the Gaussian kernel.

    For another kernel K, the same width in its own units: times δ_K / δ_Gauss
    (``kernels.equivalent_bandwidth``).

    Parameters
    ----------
    x : array_like, shape (N,)
    kernel : str

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 32)
    >>> iqr = np.quantile(x, 0.75) - np.quantile(x, 0.25)
    >>> bool(np.isclose(silverman_bandwidth(x), 0.9 * min(x.std(ddof=1), iqr / 1.34) * 32 ** -0.2))
    True
    """
    xt = as_tensor(x, "x", ndim=1).double()
    n = xt.shape[0]
    if n < 2:
        raise ValueError("Silverman's rule needs at least 2 points.")
    sd = float(xt.std())
    q75, q25 = torch.quantile(xt, torch.tensor([0.75, 0.25], dtype=xt.dtype, device=xt.device)).tolist()
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    if spread <= 0:
        raise ValueError("all x values are identical, so Silverman's rule gives h = 0: give x that vary.")
    return equivalent_bandwidth(0.9 * spread * n ** (-0.2), kernel)
