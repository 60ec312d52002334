"""Experiments of the "Softmax is a kernel" page: random q/k/v and sweeps, as tables.

Everything is float64 so that the bridge identity shows at machine precision.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from . import attention as A
from ._checks import integer_in, positive_number
from .regression import nw_weights

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)


def random_qkv(d: int = 16, n_queries: int = 12, n_keys: int = 24, norm_spread: float = 0.0, seed: int = 0,
               dv: int = 4):
    """Queries with iid N(0, 1) entries; keys in random directions with norm sqrt(d) * exp(spread * z).

    ``norm_spread = 0`` puts every key on the sphere of radius sqrt(d); larger values spread the
    key norms log-normally. Values are iid N(0, 1), shape (n_keys, dv).
    """
    d = integer_in(d, "d", 1, 4096)
    n_queries = integer_in(n_queries, "n_queries", 1, 4096)
    n_keys = integer_in(n_keys, "n_keys", 1, 4096)
    spread = float(norm_spread)
    if not math.isfinite(spread) or not 0 <= spread <= 3:
        raise ValueError(f"norm_spread must be from 0 to 3, got {norm_spread!r}.")
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    q = torch.randn(n_queries, d, generator=gen, dtype=torch.float64)
    direction = torch.randn(n_keys, d, generator=gen, dtype=torch.float64)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    z = torch.randn(n_keys, 1, generator=gen, dtype=torch.float64)
    k = direction * math.sqrt(d) * torch.exp(spread * z)
    v = torch.randn(n_keys, dv, generator=gen, dtype=torch.float64)
    return q, k, v


def compare(q, k, v, tau: float) -> dict:
    """Dot-product weights at temperature tau vs Gaussian weights with sigma = sqrt(tau)."""
    tau = positive_number(tau, "tau")
    _, w_dot = A.dot_product_attention(q, k, v, tau)
    _, w_gauss = A.gaussian_kernel_attention(q, k, v, math.sqrt(tau))
    _, w_biased = A.biased_dot_product_attention(q, k, v, tau)
    return {"dot": w_dot, "gauss": w_gauss, "biased": w_biased,
            "max_diff": float((w_dot - w_gauss).abs().max()),
            "max_diff_corrected": float((w_biased - w_gauss).abs().max()),
            "key_norms": k.norm(dim=-1)}


def difference_vs_spread(d: int, n_queries: int, n_keys: int, tau: float, spreads, seed: int = 0) -> pd.DataFrame:
    """Max |dot - Gaussian| and max |bias-corrected dot - Gaussian| as the key norms spread."""
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    rows = []
    for s in spreads:
        q, k, v = random_qkv(d, n_queries, n_keys, float(s), seed)
        c = compare(q, k, v, tau)
        rows.append((float(s), c["max_diff"], c["max_diff_corrected"]))
    return pd.DataFrame(rows, columns=["norm_spread", "max_abs_diff", "max_abs_diff_corrected"])


def temperature_sweep(q, k, taus) -> pd.DataFrame:
    """Mean row entropy (nats) and mean max weight of dot-product attention at each temperature."""
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    t = torch.as_tensor([positive_number(x, "each tau") for x in taus], dtype=q.dtype)
    w = torch.softmax((q @ k.T)[None] / t[:, None, None], dim=-1)          # (n_tau, Lq, Lk)
    return pd.DataFrame({"tau": t.numpy(), "entropy": A.entropy(w).mean(-1).numpy(),
                         "max_weight": w.amax(-1).mean(-1).numpy()})


def nw_entropy_sweep(x_query, x_train, kernel: str, bandwidths) -> pd.DataFrame:
    """The same two numbers for NW weights as the bandwidth h sweeps (h plays the role of sqrt(tau)).

    Queries with no support (a compact kernel with no training point within h: an all-zero row, no
    estimate) are left out of both means; ``supported`` is the fraction of queries that have support
    (NaN means where none has)."""
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    rows = []
    for h in bandwidths:
        w = nw_weights(x_query, x_train, kernel, float(h))
        ok = w.sum(-1) > 0
        if bool(ok.any()):
            rows.append((float(h), float(A.entropy(w[ok]).mean()), float(w[ok].amax(-1).mean()),
                         float(ok.double().mean())))
        else:
            rows.append((float(h), math.nan, math.nan, 0.0))
    return pd.DataFrame(rows, columns=["bandwidth", "entropy", "max_weight", "supported"])


def topk_error_curve(q, k, v, tau: float | None = None) -> pd.DataFrame:
    """Error of top-k attention against dense attention for every k_top from 1 to the number of keys.

    All k_top at once: with each query's logits sorted in decreasing order, the top-k output is a
    ratio of running sums, (Σ_{j<=k} e_j v_(j)) / (Σ_{j<=k} e_j), e_j = exp(s_(j) - s_(1)).
    (The unit tests check it against ``attention.topk_attention`` for every k.)
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    dense_out, dense_w = A.dot_product_attention(q, k, v, tau)
    tau = math.sqrt(q.shape[-1]) if tau is None else tau
    logits = q @ k.transpose(-2, -1) / tau                                   # (Lq, Lk)
    s, idx = logits.sort(dim=-1, descending=True)
    e = torch.exp(s - s[..., :1])                                            # (Lq, Lk)
    num = torch.cumsum(e[..., None] * v[idx], dim=-2)                        # (Lq, Lk, dv): k = index + 1
    den = torch.cumsum(e, dim=-1)                                            # (Lq, Lk)
    outs = num / den[..., None]
    out_err = (outs - dense_out[:, None, :]).abs().amax(dim=(0, 2))          # max over queries, value dims
    # top-k weights are the dense ones renormalised on the kept keys, w_j / K_k with K_k the dense mass
    # kept, so the L1 error is (1/K_k - 1) K_k on the kept keys + (1 - K_k) on the others = 2 (1 - K_k)
    kept = torch.cumsum(torch.gather(dense_w, -1, idx), dim=-1)              # (Lq, Lk)
    l1 = 2 * (1 - kept)
    ks = torch.arange(1, k.shape[-2] + 1)
    return pd.DataFrame({"k_top": ks.numpy(), "max_abs_output_error": out_err.numpy(),
                         "mean_weight_l1_error": l1.mean(0).numpy(), "dense_mass_kept": kept.mean(0).numpy()})


def log_grid(lo: float, hi: float, n: int) -> np.ndarray:
    return np.logspace(math.log10(lo), math.log10(hi), n)
