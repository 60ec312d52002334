"""Why attention divides by sqrt(d): statistics of q·k logits against the head dimension d.

For q, k with iid N(0, 1) entries, Var(q·k) = d: unscaled logits have std sqrt(d) (about 11.3 at
d = 128) and the softmax sharpens towards one-hot as d grows. Dividing by sqrt(d) brings the std back
to 1, and with it the softmax's regime at initialisation (entropy, largest weight), at every d. The
softmax Jacobian is small both for near-uniform and for near-one-hot rows, so its norm against d first
rises and then falls (``regime_vs_scale`` shows it against the logit scale).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from ._checks import integer_in, positive_number
from .attention import entropy

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)

DEFAULT_N = 256   # queries and keys per d: 65,536 logits, std known to well under 1 %


def _draw(d: int, n: int, scaled: bool, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n × n logits q·k (divided by √d when ``scaled``) of n queries and n keys with iid N(0, 1) entries, and the
    keys."""
    q = torch.randn(n, d, generator=gen, dtype=torch.float64)
    k = torch.randn(n, d, generator=gen, dtype=torch.float64)
    logits = q @ k.T
    return (logits / math.sqrt(d) if scaled else logits), k


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian diag(p) − p pᵀ for each row p of ``weights``.

    Closed form: ||J||_F² = Σp² − 2Σp³ + (Σp²)². It is largest for spread-out rows and tends to 0
    as a row becomes one-hot: gradients stop flowing through a saturated softmax.

    Parameters
    ----------
    weights : torch.Tensor, shape (..., n)
        Rows of softmax weights.

    Returns
    -------
    torch.Tensor, shape (...)

    Examples
    --------
    >>> import torch
    >>> p = torch.tensor([0.5, 0.5], dtype=torch.float64)
    >>> float(softmax_jacobian_norm(p)), float(torch.linalg.norm(torch.diag(p) - torch.outer(p, p)))
    (0.5, 0.5)
    >>> float(softmax_jacobian_norm(torch.tensor([1.0, 0.0])))           # one-hot: no gradient
    0.0
    """
    s2 = (weights ** 2).sum(-1)
    s3 = (weights ** 3).sum(-1)
    return (s2 - 2 * s3 + s2 ** 2).clamp_min(0).sqrt()


def logit_stats(d_values, n: int = DEFAULT_N, scaled: bool = False, seed: int = 0) -> pd.DataFrame:
    """Statistics of q·k logits (q, k with iid N(0, 1) entries) and of their softmax, per head dimension d.

    Parameters
    ----------
    d_values : sequence of int
        Head dimensions, 1 to 16384.
    n : int
        Queries and keys per d (n × n logits).
    scaled : bool
        Divide the logits by √d.
    seed : int

    Returns
    -------
    pandas.DataFrame
        One row per d: ``d``, ``logit_std``, ``max_weight`` (mean over queries of the largest softmax weight),
        ``entropy`` (mean row entropy, nats), ``softmax_grad_norm`` (mean Jacobian Frobenius norm), and
        ``key_norm_min`` / ``key_norm_max``, the smallest and largest norm of that d's n keys.

    Examples
    --------
    >>> table = logit_stats([16, 256])
    >>> [round(s / d ** 0.5, 1) for s, d in zip(table["logit_std"], table["d"])]      # std = √d
    [1.0, 1.0]
    >>> [round(s, 1) for s in logit_stats([16, 256], scaled=True)["logit_std"]]        # divided by √d: 1
    [1.0, 1.0]
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    n = integer_in(n, "n", 2, 4096)
    ds = [integer_in(d, "each d", 1, 16384) for d in d_values]
    if not ds:
        raise ValueError("d_values is empty: give at least one head dimension.")
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    rows = []
    for d in ds:
        logits, keys = _draw(d, n, scaled, gen)
        w = torch.softmax(logits, dim=-1)
        norms = keys.norm(dim=-1)
        rows.append({
            "d": d,
            "logit_std": float(logits.std()),
            "max_weight": float(w.amax(-1).mean()),
            "entropy": float(entropy(w).mean()),
            "softmax_grad_norm": float(softmax_jacobian_norm(w).mean()),
            "key_norm_min": float(norms.min()),
            "key_norm_max": float(norms.max()),
        })
    return pd.DataFrame(rows)


def logit_samples(d: int, n: int = 64, scaled: bool = False, seed: int = 0) -> torch.Tensor:
    """A flat sample of n × n logits at head dimension d (for a histogram).

    Parameters
    ----------
    d : int
    n : int
    scaled : bool
        Divide by √d.
    seed : int

    Returns
    -------
    torch.Tensor, shape (n * n,)

    Examples
    --------
    >>> sample = logit_samples(64, n=64)
    >>> sample.shape[0], round(float(sample.std()) / 8, 1)
    (4096, 1.0)
    """
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    return _draw(integer_in(d, "d", 1, 16384), integer_in(n, "n", 2, 4096), scaled, gen)[0].flatten()


def regime_vs_scale(scales, n: int = DEFAULT_N, seed: int = 0) -> pd.DataFrame:
    """The softmax's regime as a function of the logit scale alone: logits s·z with z iid N(0, 1) (n × n),
    for each s in ``scales``. Unscaled q·k at head dimension d has s ≈ √d; scaled, s ≈ 1 at every d.

    Parameters
    ----------
    scales : sequence of float
        Each > 0.
    n : int
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``scale``, ``max_weight``, ``entropy``, ``softmax_grad_norm``.

    Examples
    --------
    >>> table = regime_vs_scale([0.1, 30.0], n=64)
    >>> bool(table["max_weight"].iloc[0] < 0.05 < 0.5 < table["max_weight"].iloc[1])   # near-uniform, near-one-hot
    True
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    n = integer_in(n, "n", 2, 4096)
    z = torch.randn(n, n, generator=torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1)),
                    dtype=torch.float64)
    rows = []
    for s in scales:
        w = torch.softmax(positive_number(s, "each scale") * z, dim=-1)
        rows.append({"scale": float(s), "max_weight": float(w.amax(-1).mean()), "entropy": float(entropy(w).mean()),
                     "softmax_grad_norm": float(softmax_jacobian_norm(w).mean())})
    return pd.DataFrame(rows)


def _from_on(d, holds) -> int | None:
    """The smallest d from which ``holds`` is true at every larger d of the table (None when it is not at the last)."""
    first = None
    for x, ok in zip(d, holds, strict=True):
        first = (first if first is not None else int(x)) if ok else None
    return first


USUAL_HEADS = (64, 128)     # the head sizes of most transformers, which the gradient text compares at


def scaling_summary(unscaled: pd.DataFrame, scaled: pd.DataFrame) -> dict:
    """The numbers the Scaling page quotes, from its two tables (one row per d): where the unscaled Jacobian norm
    peaks, the d from which it stays below the scaled one (``d_cross``, None if it never does) and both at the
    usual head sizes and the largest d; the d from which the unscaled rows keep, on average, more than half their
    weight on one key (``d_half``: the mean largest weight, the table's ``max_weight``, above 0.5); the scaled
    ranges of std, entropy and max weight.

    Parameters
    ----------
    unscaled, scaled : pandas.DataFrame
        ``logit_stats`` over the same d values, without and with 1/√d.

    Returns
    -------
    dict

    Examples
    --------
    >>> ds = [1, 4, 16, 64, 256, 1024]
    >>> summary = scaling_summary(logit_stats(ds, n=64), logit_stats(ds, n=64, scaled=True))
    >>> summary["d_half"] is not None and summary["scaled_std"][1] < 1.1
    True
    """
    d = unscaled["d"].to_numpy()
    g_un, g_sc = unscaled["softmax_grad_norm"].to_numpy(), scaled["softmax_grad_norm"].to_numpy()
    mw = unscaled["max_weight"].to_numpy()
    peak = int(g_un.argmax())
    d_half = _from_on(d, mw > 0.5)
    at = {int(x): (float(a), float(b)) for x, a, b in zip(d, g_un, g_sc, strict=True)}
    return {"d_cross": _from_on(d, g_un < g_sc), "d_peak": int(d[peak]), "peak": float(g_un[peak]),
            "usual": {x: at[x] for x in USUAL_HEADS if x in at}, "last": at[int(d[-1])],
            "d_half": d_half, "mw_half": float(mw[list(d).index(d_half)]) if d_half else float("nan"),
            "scaled_std": (float(scaled["logit_std"].min()), float(scaled["logit_std"].max())),
            "scaled_entropy": (float(scaled["entropy"].min()), float(scaled["entropy"].max())),
            "scaled_maxw": (float(scaled["max_weight"].min()), float(scaled["max_weight"].max())),
            "unscaled_entropy": (float(unscaled["entropy"].iloc[0]), float(unscaled["entropy"].iloc[-1]))}


def key_norm_range(d: int, n: int = DEFAULT_N, seed: int = 0) -> tuple[float, float]:
    """Smallest and largest norm of n keys with iid N(0, 1) entries at head dimension d: they differ,
    so dot-product attention on them is a Gaussian kernel only up to the per-key bias.

    Parameters
    ----------
    d : int
    n : int
    seed : int

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> low, high = key_norm_range(64)
    >>> low < 8 < high                            # around √64 = 8, never all equal
    True
    """
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    k = torch.randn(integer_in(n, "n", 2, 4096), integer_in(d, "d", 1, 16384), generator=gen, dtype=torch.float64)
    norms = k.norm(dim=-1)
    return float(norms.min()), float(norms.max())
