"""Nadaraya-Watson kernel regression: weights and estimates (the bandwidth is chosen in ``explorer.bandwidth``).

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
import torch.nn.functional as F

from ._checks import as_tensor, common, one_of, positive_number
from ._streaming import _CHUNK_CELLS, _dense_scores, _nearest, _normalise, _nw_streaming, _scores
from .fastsum import FAST_KERNELS, kernel_sums
from .kernels import Kernel, get_kernel

__all__ = ["FAST_MIN_CELLS", "MAX_DENSE_CELLS", "METHODS", "defined_mse", "nadaraya_watson", "nadaraya_watson_loop",
           "nw_weights"]

MAX_DENSE_CELLS = 25_000_000   # nw_weights refuses M x N above this (100 MB of float32 per copy)


# --------------------------------------------------------------------------- validation
def _inputs(x_query, x_train, y_train=None, kernel="gaussian", bandwidth=0.5,
            names: tuple[str, str, str] = ("x_query", "x_train", "y_train")):
    """The arguments checked and made tensors of one dtype and device; ``names`` are the caller's names for the
    three arrays, which the messages use (``select_bandwidth(x, y)`` says ``x`` and ``y``)."""
    q_name, x_name, y_name = names
    kern = get_kernel(kernel)
    h = positive_number(bandwidth, "bandwidth")
    xt = as_tensor(x_train, x_name, ndim=1)
    xq = as_tensor(x_query, q_name, ndim=1, device=xt.device, dtype=xt.dtype)
    tensors = [xt, xq]
    if y_train is not None:
        yt = as_tensor(y_train, y_name, ndim=1, device=xt.device, dtype=xt.dtype)
        if yt.shape[0] != xt.shape[0]:
            raise ValueError(f"{x_name} and {y_name} must have the same length, got {xt.shape[0]} "
                             f"and {yt.shape[0]}.")
        tensors.append(yt)
    tensors = common(*tensors)
    return kern, h, tensors


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
        - ``"auto"``: the first path of ``_PATHS`` that applies (fast sums on CPU from ``FAST_MIN_CELLS`` pairs,
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
    return _PATHS[choose(_PATHS, method, kern, xq, xt, h, chunk_size)].run(kern, h, xq, xt, yt, chunk_size)


def _nw_fast(kern: Kernel, h: float, xq, xt, yt, chunk_size=None) -> torch.Tensor:
    """The fast sums; the queries they cannot vouch for are recomputed exactly (in float64, like the fast
    sums, so a float32 input differs from the float64 reference only by the output's rounding)."""
    est, trusted = kernel_sums(kern, h, xq, xt, yt)
    if not bool(trusted.all()):
        rows = torch.nonzero(~trusted).flatten()
        est[rows] = _nw_streaming(kern, h, xq[rows].double(), xt.double(), yt.double()).to(est.dtype)
    return torch.where(torch.isnan(est), est, est.clamp(yt.min(), yt.max()))


def rewrite_is_accurate(xq, xt, h) -> bool:
    """Whether the Gaussian's dot-product rewrite is accurate enough in the inputs' dtype.

    Its logits carry an absolute rounding error of about eps·(R/h)², R the largest distance from the centre of
    the data; the rewrite is taken when that is at most 1e-4 (a 1e-4 relative error in the weights).

    Parameters
    ----------
    xq, xt : torch.Tensor
        Query and training inputs (1-D), in the dtype the sums will use.
    h : float
        Bandwidth.

    Returns
    -------
    bool

    Examples
    --------
    >>> x = torch.linspace(0, 1, 100)
    >>> rewrite_is_accurate(x, x, 0.1), rewrite_is_accurate(x * 1e4, x * 1e4, 1e-3)
    (True, False)
    """
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
    c = xt.mean()
    a, b = xq - c, xt - c
    q = torch.stack([a / (h * h), torch.ones_like(a)], dim=-1)            # (M, 2)
    k = torch.stack([b, -0.5 * b * b / (h * h)], dim=-1)                   # (N, 2)
    out = F.scaled_dot_product_attention(q[None, None], k[None, None], yt[None, None, :, None], scale=1.0)
    return out[0, 0, :, 0].clamp(yt.min(), yt.max())


@dataclass(frozen=True)
class Path:
    """One way of computing an estimate, in a table of them (``_PATHS`` here, ``bandwidth._LOO_PATHS``)."""
    run: Callable                  # the computation
    needs: str | None = None       # the Kernel capability it needs, or None
    refusal: str = ""              # the sentence for a kernel without it
    auto: Callable[..., bool] = lambda *args: True      # (kern, xq, xt, h, chunk_size): "auto" takes it


def choose(paths: dict[str, Path], method: str, *args) -> str:
    """The name of the path to take, from a table of ``Path``s: one idiom for NW (``_PATHS``), leave-one-out
    (``bandwidth._LOO_PATHS``) and the fast sums.

    Parameters
    ----------
    paths : dict of str to Path
        The table, in the order ``"auto"`` tries it.
    method : str
        A name of the table, or ``"auto"``.
    *args
        What the paths' ``auto`` predicates read; ``args[0]`` is the ``Kernel``.

    Returns
    -------
    str
        ``method`` itself when the kernel has what it needs (else ``ValueError`` with the path's refusal); for
        ``"auto"``, the first path whose ``auto`` holds for ``args``.

    Examples
    --------
    >>> from explorer.kernels import KERNELS
    >>> x = torch.linspace(0, 1, 500, dtype=torch.float64)
    >>> choose(_PATHS, "auto", KERNELS["gaussian"], x, x, 0.3, None)
    'fast'
    >>> choose(_PATHS, "auto", KERNELS["constant"], x, x, 0.3, None)
    'direct'
    """
    kern = args[0]
    if method != "auto":
        needs = paths[method].needs
        if needs and not getattr(kern, needs):
            raise ValueError(paths[method].refusal.format(method=method, kernel=kern.name))
        return method
    return next(name for name, path in paths.items() if (not path.needs or getattr(kern, path.needs))
                and path.auto(*args))


def _cpu(xt) -> bool:
    return xt.device.type == "cpu"


_GAUSSIAN_ONLY = "method={method!r} is for the Gaussian kernel only (its log is a dot product); got kernel {kernel!r}."
FAST_REFUSAL = "method='fast' is for the kernels " + ", ".join(FAST_KERNELS) + "; got {kernel!r}."
# In the order "auto" tries them: the fast sums (CPU, from FAST_MIN_CELLS pairs), the dot-product rewrite when
# accurate in the input's dtype (rank2 on CPU, sdpa on CUDA), the direct streaming sum. An explicit chunk_size
# asks for the direct path.
_PATHS = {
    "fast": Path(_nw_fast, "fast", FAST_REFUSAL,
                 lambda kern, xq, xt, h, chunk: chunk is None and _cpu(xt) and xt.shape[0] >= 2
                 and xq.shape[0] * xt.shape[0] >= FAST_MIN_CELLS),
    "rank2": Path(_nw_rank2, "dot_product", _GAUSSIAN_ONLY,
                  lambda kern, xq, xt, h, chunk: chunk is None and _cpu(xt) and rewrite_is_accurate(xq, xt, h)),
    "sdpa": Path(_nw_sdpa, "dot_product", _GAUSSIAN_ONLY,
                 lambda kern, xq, xt, h, chunk: chunk is None and not _cpu(xt) and rewrite_is_accurate(xq, xt, h)),
    "direct": Path(_nw_streaming),
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
