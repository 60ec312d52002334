"""Nadaraya-Watson kernel regression: weights, estimates and bandwidth selection.

    f(x) = sum_i K((x - x_i)/h) y_i / sum_j K((x - x_j)/h)

Shapes: queries ``x_query`` (M,), training inputs ``x_train`` (N,), targets ``y_train`` (N,).
Inputs may be tensors, numpy arrays or lists; results are torch tensors on the training data's
device, in its floating dtype.

Kernels with unbounded support (gaussian, laplace, constant) are evaluated in the log domain:
weights are a softmax of log K, so every row sums to 1 at any distance and any bandwidth. When h is
so small that every kernel value underflows, the row takes the h -> 0 limit exactly: equal weights
on the nearest training point(s). Compact kernels (boxcar, epanechnikov, triangular) give an
all-zero row, and an undefined (NaN) estimate, for a query with no training point within h.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._checks import as_tensor, common, one_of, positive_number
from .fastsum import FAST_KERNELS, kernel_sums
from .kernels import Kernel, equivalent_bandwidth, get_kernel

MAX_DENSE_CELLS = 25_000_000   # nw_weights refuses M x N above this (100 MB of float32 per copy)
_CHUNK_CELLS = 4_000_000       # working-set size for the streaming estimate


# --------------------------------------------------------------------------- validation
def _inputs(x_query, x_train, y_train=None, kernel="gaussian", bandwidth=0.5):
    kern = get_kernel(kernel)
    h = positive_number(bandwidth, "bandwidth")
    xt = as_tensor(x_train, "x_train", ndim=1)
    xq = as_tensor(x_query, "x_query", ndim=1, device=xt.device, dtype=xt.dtype)
    tensors = [xt, xq]
    if y_train is not None:
        yt = as_tensor(y_train, "y_train", ndim=1, device=xt.device, dtype=xt.dtype)
        if yt.shape[0] != xt.shape[0]:
            raise ValueError(f"x_train and y_train must have the same length, got {xt.shape[0]} "
                             f"and {yt.shape[0]}.")
        tensors.append(yt)
    tensors = common(*tensors)
    return kern, h, tensors


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


def nw_weights(x_query, x_train, kernel: str = "gaussian", bandwidth: float = 0.5) -> torch.Tensor:
    """The (M, N) attention matrix of Nadaraya-Watson regression: row i holds the weights of query i.

    Parameters
    ----------
    x_query : array_like, shape (M,)
        Query points.
    x_train : array_like, shape (N,)
        Training inputs.
    kernel : str
        A name in ``explorer.kernels.KERNELS``.
    bandwidth : float
        h > 0.

    Returns
    -------
    torch.Tensor, shape (M, N)
        Rows sum to 1, or are all zero for a compact kernel with no training point within h of the query.
        Never NaN. Above ``MAX_DENSE_CELLS`` cells a ``ValueError`` says to use ``nadaraya_watson``, which
        never builds the matrix.

    Examples
    --------
    >>> w = nw_weights([0.0, 1.0], [0.0, 1.0, 2.0], "gaussian", 0.5)
    >>> w.shape, [round(float(r), 6) for r in w.sum(1)]
    (torch.Size([2, 3]), [1.0, 1.0])
    >>> nw_weights([5.0], [0.0, 1.0], "boxcar", 0.5).tolist()        # no point within h: an all-zero row
    [[0.0, 0.0]]
    """
    kern, h, (xt, xq) = _inputs(x_query, x_train, None, kernel, bandwidth)
    cells = xq.shape[0] * xt.shape[0]
    if cells > MAX_DENSE_CELLS:
        raise ValueError(
            f"x_query x x_train = {xq.shape[0]} x {xt.shape[0]} = {cells:,} weights is more than the "
            f"{MAX_DENSE_CELLS:,} that nw_weights builds at once; use fewer points, or "
            "nadaraya_watson for estimates without the matrix.")
    return _normalise(*_dense_scores(kern, xq[:, None] - xt[None, :], h))


FAST_MIN_CELLS = 20_000        # below this many query x training pairs the dense paths are as quick


def nadaraya_watson(x_query, x_train, y_train, kernel: str = "gaussian", bandwidth: float = 0.5,
                    *, chunk_size: int | None = None, method: str = "auto") -> torch.Tensor:
    """NW estimates at the queries, f(x) = Σ_i K((x - x_i)/h) y_i / Σ_j K((x - x_j)/h).

    Memory stays bounded for any M and N: the (M, N) weight matrix is never built whole.

    Parameters
    ----------
    x_query : array_like, shape (M,)
    x_train, y_train : array_like, shape (N,)
    kernel : str
        A name in ``explorer.kernels.KERNELS``.
    bandwidth : float
        h > 0.
    chunk_size : int, optional
        Training points per chunk of the direct path (chosen automatically when None; giving it selects
        the direct path under ``"auto"``).
    method : {"auto", "direct", "rank2", "sdpa", "fast"}
        - ``"direct"``: kernel values from the differences (x - x_i), training points in chunks with a
          running (online) log-sum-exp normaliser, as flash attention does. Any kernel, any h.
        - ``"rank2"`` (kernels whose log is a dot product: the Gaussian): -(x - x_i)²/(2h²) = x·x_i/h² -
          x_i²/(2h²) + c(x) as one small matrix product per block of queries, shifted by each row's known
          maximum (at the nearest training point), then exp and a product with [y, 1].
        - ``"sdpa"`` (the same kernels): that rewrite handed to torch's fused
          ``scaled_dot_product_attention`` with q = [x/h², 1], k = [x_i, -x_i²/(2h²)], scale 1.
        - ``"fast"`` (kernels with a ``fast`` family): the one-dimensional sums of ``explorer.fastsum``,
          which touch a few boxes of sorted training points per query; queries outside their error bound
          are recomputed by ``"direct"``.
        - ``"auto"``: the choice ``_choose_method`` makes (fast sums on CPU from ``FAST_MIN_CELLS`` pairs,
          else the rewrite when accurate in the input's dtype, else direct).

    Returns
    -------
    torch.Tensor, shape (M,)
        On the training data's device, in its floating dtype; NaN exactly where a compact kernel has no
        training point within h. When every kernel value underflows (h far below the gaps), the h -> 0
        limit: the mean of y over the nearest training point(s).

    Examples
    --------
    >>> x, y = [0.0, 1.0, 2.0], [0.0, 1.0, 4.0]
    >>> [round(v, 4) for v in nadaraya_watson([1.0], x, y, "gaussian", 1e-3).tolist()]   # h -> 0: nearest y
    [1.0]
    >>> round(float(nadaraya_watson([1.0], x, y, "constant", 1.0)[0]), 4)   # constant kernel: the mean of y
    1.6667
    >>> nadaraya_watson([9.0], x, y, "epanechnikov", 0.5).isnan().tolist()
    [True]
    """
    kern, h, (xt, xq, yt) = _inputs(x_query, x_train, y_train, kernel, bandwidth)
    one_of(method, METHODS, "method")
    path = _choose_method(method, kern, xq, xt, h, chunk_size)
    return _PATHS[path].run(kern, h, xq, xt, yt, chunk_size)


def _choose_method(method: str, kern: Kernel, xq, xt, h: float, chunk_size: int | None) -> str:
    """The name of the path that computes the estimate: ``method`` itself when the kernel has what it
    needs (else ``ValueError``); for ``"auto"``, the first that applies of: the fast sums (CPU, at least
    ``FAST_MIN_CELLS`` pairs), the dot-product rewrite (when accurate in the input's dtype: sdpa on CUDA,
    rank2 on CPU), the direct streaming sum. An explicit ``chunk_size`` asks for the direct path."""
    if method != "auto":
        needs = _PATHS[method].needs
        if needs and not getattr(kern, needs):
            raise ValueError(_PATHS[method].refusal.format(method=method, kernel=kern.name))
        return method
    on_cpu = xt.device.type == "cpu"
    if chunk_size is not None:
        return "direct"
    if kern.fast and on_cpu and xq.shape[0] * xt.shape[0] >= FAST_MIN_CELLS and xt.shape[0] >= 2:
        return "fast"
    if kern.dot_product and _rewrite_is_accurate(xq, xt, h):
        return "rank2" if on_cpu else "sdpa"
    return "direct"


def _nw_fast(kern: Kernel, h: float, xq, xt, yt, chunk_size=None) -> torch.Tensor:
    """The fast sums; the queries they cannot vouch for are recomputed exactly (in float64, like the fast
    sums, so a float32 input differs from the float64 reference only by the output's rounding)."""
    est, trusted = kernel_sums(kern, h, xq, xt, yt)
    if not bool(trusted.all()):
        rows = torch.nonzero(~trusted).flatten()
        est[rows] = _nw_streaming(kern, h, xq[rows].double(), xt.double(), yt.double()).to(est.dtype)
    return torch.where(torch.isnan(est), est, est.clamp(yt.min(), yt.max()))


def _rewrite_is_accurate(xq, xt, h) -> bool:
    """The rank-2 rewrite's logits carry an absolute rounding error of about eps·(R/h)², R the
    largest distance from the centre of the data: allow 1e-4 (1e-4 relative error in the weights)."""
    c = float(xt.mean())
    r = max(float((xt - c).abs().max()), float((xq - c).abs().max()))
    return torch.finfo(xt.dtype).eps * (r / h) ** 2 <= 1e-4


def _nw_rank2(kern, h, xq, xt, yt, chunk_size=None):
    num, den = _gaussian_rank2_sums(xq, xt, yt, h)
    return (num / den).clamp(yt.min(), yt.max())


def _gaussian_rank2_sums(xq, xt, yt, h):
    """Σ_j K_ij y_j and Σ_j K_ij with K_ij = exp(-(x_i - x_j)²/(2h²) + (x_i - nearest)²/(2h²)), i.e. the
    Gaussian kernel scaled so that each row's largest term is 1."""
    order = torch.argsort(xt)
    xs, ys = xt[order], yt[order]
    c = xs.mean()
    a, b = xq - c, xs - c
    inv = 1.0 / (h * h)
    # the largest logit of each row sits at the nearest training point: shift by it, so exp <= 1
    idx = torch.searchsorted(xs, xq).clamp(1, max(1, len(xs) - 1))
    dmin = torch.minimum((xq - xs[idx - 1]).abs(), (xq - xs[idx.clamp(max=len(xs) - 1)]).abs())
    A = torch.stack([a * inv, torch.ones_like(a)], dim=1)                  # (M, 2)
    B = torch.stack([b, -0.5 * b * b * inv], dim=0)                        # (2, N)
    bias = (-0.5 * (a * a - dmin * dmin) * inv)[:, None]                   # (M, 1)
    V = torch.stack([ys, torch.ones_like(ys)], dim=1)                      # (N, 2)
    m, n = xq.shape[0], xs.shape[0]
    rows = max(1, min(m, _CHUNK_CELLS // max(n, 1)))
    out = torch.empty(m, 2, dtype=xt.dtype, device=xt.device)
    for r0 in range(0, m, rows):
        block = torch.addmm(bias[r0:r0 + rows], A[r0:r0 + rows], B)        # (rows, N) shifted logits
        torch.mm(block.exp_(), V, out=out[r0:r0 + rows])
    return out[:, 0], out[:, 1]


def _nw_sdpa(kern, h, xq, xt, yt, chunk_size=None):
    from torch.nn.functional import scaled_dot_product_attention

    c = xt.mean()
    a, b = xq - c, xt - c
    q = torch.stack([a / (h * h), torch.ones_like(a)], dim=-1)            # (M, 2)
    k = torch.stack([b, -0.5 * b * b / (h * h)], dim=-1)                   # (N, 2)
    out = scaled_dot_product_attention(q[None, None], k[None, None], yt[None, None, :, None], scale=1.0)
    return out[0, 0, :, 0].clamp(yt.min(), yt.max())


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


@dataclass(frozen=True)
class _Path:
    run: Callable                  # (kern, h, xq, xt, yt, chunk_size) -> estimates
    needs: str | None              # the Kernel capability it needs, or None
    refusal: str = ""              # the sentence for a kernel without it


_PATHS = {
    "direct": _Path(_nw_streaming, None),
    "rank2": _Path(_nw_rank2, "dot_product", "method={method!r} is for the Gaussian kernel only (its log is a dot "
                                             "product); got kernel {kernel!r}."),
    "sdpa": _Path(_nw_sdpa, "dot_product", "method={method!r} is for the Gaussian kernel only (its log is a dot "
                                           "product); got kernel {kernel!r}."),
    "fast": _Path(_nw_fast, "fast", "method='fast' is for the kernels " + ", ".join(FAST_KERNELS)
                                    + "; got {kernel!r}."),
}
METHODS = ("auto", *_PATHS)


def nadaraya_watson_loop(x_query, x_train, y_train, kernel: str = "gaussian",
                         bandwidth: float = 0.5) -> torch.Tensor:
    """The same estimate, one query at a time: slow, plain, and kept as the reference the fast paths are
    tested against.

    Parameters
    ----------
    x_query, x_train, y_train, kernel, bandwidth
        As in ``nadaraya_watson``.

    Returns
    -------
    torch.Tensor, shape (M,)

    Examples
    --------
    >>> import torch
    >>> x = torch.linspace(0, 1, 50, dtype=torch.float64); y = torch.sin(6 * x)
    >>> q = torch.tensor([0.1, 0.5, 0.93], dtype=torch.float64)
    >>> loop, fast = nadaraya_watson_loop(q, x, y, "triangular", 0.2), nadaraya_watson(q, x, y, "triangular", 0.2)
    >>> bool(torch.allclose(loop, fast))
    True
    """
    kern, h, (xt, xq, yt) = _inputs(x_query, x_train, y_train, kernel, bandwidth)
    out = torch.empty(xq.shape[0], dtype=xt.dtype, device=xt.device)
    for i in range(xq.shape[0]):
        diff = (xq[i] - xt)[None]
        k, is_log = _scores(kern, diff, h)
        if is_log and torch.isneginf(k.max()):        # h far below the gap to the nearest point
            k = _nearest(diff).to(xt.dtype)
        elif is_log:
            k = torch.exp(k - k.max())
        k = k[0]
        total = k.sum()
        out[i] = (k * yt).sum() / total if total > 0 else math.nan
    return out


# --------------------------------------------------------------------------- bandwidth selection
LOO_METHODS = ("auto", "fast", "direct")


def loo_cv_scores(x, y, kernel: str = "gaussian", bandwidths=None, *, method: str = "auto") -> torch.Tensor:
    """Leave-one-out mean squared error for each bandwidth.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        The data; each point is predicted from all the others (the kernel matrix's diagonal is excluded).
    kernel : str
    bandwidths : array_like
        The bandwidths to score (each > 0).
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
    """
    kern, _, (xt, _xq, yt) = _inputs(x, x, y, kernel, 1.0)
    return _loo_scores(kern, xt, yt, _bandwidth_list(bandwidths), _loo_method(method))


def _loo_method(method: str) -> str:
    one_of(method, LOO_METHODS, "method")
    return method


def _bandwidth_list(bandwidths) -> list[float]:
    if bandwidths is None:
        raise ValueError("bandwidths must be given: a list of numbers > 0.")
    values = bandwidths.tolist() if hasattr(bandwidths, "tolist") else list(bandwidths)
    if not values:
        raise ValueError("bandwidths is empty: give at least one bandwidth > 0.")
    return [positive_number(b, "each bandwidth") for b in values]


def _loo_scores(kern, xt, yt, hs: list[float], method: str = "auto") -> torch.Tensor:
    if xt.shape[0] < 2:
        raise ValueError("leave-one-out needs at least 2 training points.")
    scores = []
    for h in hs:
        pred = loo_predictions(kern, h, xt, yt, method)
        scores.append(math.inf if bool(torch.isnan(pred).any()) else float(((pred - yt) ** 2).mean()))
    return torch.tensor(scores, dtype=xt.dtype, device=xt.device)


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
    index = torch.arange(xt.shape[0], device=xt.device)
    path = _choose_loo_method(method, kern, xt, h)
    if path == "fast":
        pred, trusted = kernel_sums(kern, h, xt, xt, yt, leave_one_out=True)
        if not bool(trusted.all()):
            rows = torch.nonzero(~trusted).flatten()
            pred[rows] = _nw_streaming(kern, h, xt[rows], xt, yt, exclude=index[rows])
        return torch.where(torch.isnan(pred), pred, pred.clamp(yt.min(), yt.max()))
    if path == "direct":
        return _nw_streaming(kern, h, xt, xt, yt, exclude=index)
    num, den = _gaussian_rank2_sums(xt, xt, yt, h)
    rest = den - 1
    pred = (num - yt) / rest.clamp_min(torch.finfo(den.dtype).tiny)
    fragile = rest < 1e-3 * den
    if bool(fragile.any()):
        rows = torch.nonzero(fragile).flatten()
        pred[rows] = _nw_streaming(kern, h, xt[rows], xt, yt, exclude=index[rows])
    return pred.clamp(yt.min(), yt.max())


def _choose_loo_method(method: str, kern: Kernel, xt, h: float) -> str:
    """The leave-one-out path: "fast" (asked for, or "auto" on CPU with N² >= ``FAST_MIN_CELLS``),
    "rank2" (the dot-product shortcut, when accurate), or "direct"."""
    if method == "fast" and not kern.fast:
        raise ValueError(_PATHS["fast"].refusal.format(kernel=kern.name))
    if method == "fast" or (method == "auto" and kern.fast and xt.device.type == "cpu"
                            and xt.shape[0] ** 2 >= FAST_MIN_CELLS):
        return "fast"
    return "rank2" if kern.dot_product and _rewrite_is_accurate(xt, xt, h) else "direct"


SEARCH_GRID = {True: 48, False: 32}     # log-spaced bandwidths scored first: compact kernels, smooth ones
SEARCH_REFINE = 3                       # the best local minima of the grid refined by golden-section search
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
    kern, _, (xt, _xq, yt) = _inputs(x, x, y, kernel, 1.0)
    method = _loo_method(method)
    if bandwidths is not None:
        hs = _bandwidth_list(bandwidths)
        return hs[int(torch.argmin(_loo_scores(kern, xt, yt, hs, method)))]
    span = float(xt.max() - xt.min())
    if span == 0:
        raise ValueError("all x values are identical, so no bandwidth can be chosen: give x that vary.")
    lo, hi = span * 1e-3, span * 2
    if kern.compact:
        lo = max(lo, _largest_nearest_gap(xt) * (1 + 1e-9))
    if kern.name == "boxcar" and xt.shape[0] * (xt.shape[0] - 1) // 2 <= EXACT_BOXCAR_PAIRS:
        return _boxcar_best(xt, yt, lo, hi)
    grid = torch.logspace(math.log10(lo), math.log10(hi), SEARCH_GRID[kern.compact], dtype=torch.float64).tolist()
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


def defined_mse(estimate, target) -> tuple[float, int]:
    """Mean squared error over the queries with a defined estimate, and how many are undefined.

    Parameters
    ----------
    estimate, target : array_like, shape (M,)
        ``estimate`` may hold NaN (no support).

    Returns
    -------
    (float, int)
        The MSE over the defined entries (NaN when none is), and the number of NaN estimates.

    Examples
    --------
    >>> defined_mse([1.0, float("nan"), 3.0], [0.0, 0.0, 0.0])
    (5.0, 1)
    """
    est = torch.as_tensor(estimate, dtype=torch.float64).cpu()
    tgt = torch.as_tensor(target, dtype=torch.float64).cpu()
    ok = ~torch.isnan(est)
    n_undefined = int((~ok).sum())
    mse = float(((est[ok] - tgt[ok]) ** 2).mean()) if bool(ok.any()) else math.nan
    return mse, n_undefined
