"""Attention as kernel regression: dot-product, Gaussian-kernel, top-k and masked attention.

Shapes follow torch's ``scaled_dot_product_attention``: queries ``q`` (..., Lq, d), keys ``k``
(..., Lk, d), values ``v`` (..., Lk, dv), any leading batch/head dims that broadcast. Every function
returns ``(output, weights)`` with output (..., Lq, dv) and weights (..., Lq, Lk).

The bridge (see the "Softmax is a kernel" page):

    exp(q.k / tau) = exp(-|q - k|^2 / (2 tau)) * exp(|q|^2 / (2 tau)) * exp(|k|^2 / (2 tau))

The q factor cancels in the softmax over keys; the k factor does not. Dot-product attention with
temperature tau therefore equals Gaussian-kernel attention with sigma^2 = tau exactly when all keys
have the same norm; in general the two differ by the per-key logit bias -|k_j|^2 / (2 tau).
"""

from __future__ import annotations

import math

import torch

from ._checks import as_tensor, broadcast_shapes, integer_in, one_of, positive_number

# How a mask is applied (the Masking page contrasts them; what each does is UI text ``mode.<name>``):
# pre = -inf on masked logits before the softmax (correct); post = zero masked weights after it;
# post_renorm = zero them, then renormalise each row; multiply_logits = multiply logits by the 0/1 mask.
MASK_MODES = ("pre", "post", "post_renorm", "multiply_logits")


# --------------------------------------------------------------------------- helpers
def _qkv(q, k, v):
    qt = as_tensor(q, "q")
    kt = as_tensor(k, "k", device=qt.device, dtype=qt.dtype)
    vt = as_tensor(v, "v", device=qt.device, dtype=qt.dtype)
    for name, t in (("q", qt), ("k", kt), ("v", vt)):
        if t.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dims (..., length, features), "
                             f"got shape {tuple(t.shape)}.")
    if qt.shape[-1] != kt.shape[-1]:
        raise ValueError(f"q and k must have the same feature size d, got {qt.shape[-1]} and {kt.shape[-1]}.")
    if kt.shape[-2] != vt.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys, got {kt.shape[-2]} and {vt.shape[-2]}.")
    dtype = torch.promote_types(torch.promote_types(qt.dtype, kt.dtype), vt.dtype)
    return qt.to(dtype), kt.to(device=qt.device, dtype=dtype), vt.to(device=qt.device, dtype=dtype)


def _temperature(tau, d: int, name: str = "tau") -> float:
    return math.sqrt(d) if tau is None else positive_number(tau, name)


# --------------------------------------------------------------------------- attention variants
def dot_product_attention(q, k, v, tau: float | None = None):
    """Scaled dot-product attention, softmax(q kᵀ / τ) v.

    Parameters
    ----------
    q : array_like, shape (..., Lq, d)
    k : array_like, shape (..., Lk, d)
    v : array_like, shape (..., Lk, dv)
    tau : float, optional
        The temperature; sqrt(d) by default, which is torch's SDPA.

    Returns
    -------
    (output, weights) : (torch.Tensor (..., Lq, dv), torch.Tensor (..., Lq, Lk))

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(2, n, d, generator=g, dtype=torch.float64) for n, d in ((3, 4), (5, 4), (5, 2)))
    >>> out, w = dot_product_attention(q, k, v)
    >>> bool(torch.allclose(out, torch.nn.functional.scaled_dot_product_attention(q, k, v)))
    True
    """
    q, k, v = _qkv(q, k, v)
    tau = _temperature(tau, q.shape[-1])
    weights = torch.softmax(q @ k.transpose(-2, -1) / tau, dim=-1)
    return weights @ v, weights


def squared_distances(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """|q_i - k_j|² for every pair, clamped at 0 against rounding.

    Parameters
    ----------
    q : torch.Tensor, shape (..., Lq, d)
    k : torch.Tensor, shape (..., Lk, d)

    Returns
    -------
    torch.Tensor, shape (..., Lq, Lk)

    Examples
    --------
    >>> import torch
    >>> squared_distances(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[25.0, 1.0]]
    """
    qq = (q * q).sum(-1, keepdim=True)
    kk = (k * k).sum(-1).unsqueeze(-2)
    return (qq + kk - 2 * q @ k.transpose(-2, -1)).clamp_min(0)


def gaussian_kernel_attention(q, k, v, sigma: float):
    """Attention with weights softmax_j(-|q_i - k_j|² / (2σ²)): NW regression with a Gaussian kernel in d dims.

    Computed as a softmax of log-kernel values, so it never gives 0/0, however small σ is. It equals dot-product
    attention at temperature τ = σ² (``dot_product_attention(q, k, v, tau=sigma**2)``) exactly when every key has
    the same norm: -|q - k|²/(2σ²) = q·k/σ² - |q|²/(2σ²) - |k|²/(2σ²), the query's term cancels in the softmax
    over keys and the key's does not. With keys of different norms it is dot-product attention plus the per-key bias
    -|k_j|²/(2τ) on the logits (``biased_dot_product_attention``).

    Parameters
    ----------
    q, k, v : array_like
        Shapes as in ``dot_product_attention``.
    sigma : float
        The kernel's width σ > 0.

    Returns
    -------
    (output, weights)

    Examples
    --------
    >>> import torch
    >>> q, k, v = torch.zeros(1, 2), torch.tensor([[0.0, 0.0], [1.0, 0.0]]), torch.tensor([[1.0], [3.0]])
    >>> out, w = gaussian_kernel_attention(q, k, v, sigma=1e-3)      # σ -> 0: all weight on the nearest key
    >>> w.tolist(), out.tolist()
    ([[1.0, 0.0]], [[1.0]])
    >>> keys = torch.nn.functional.normalize(torch.randn(5, 3, dtype=torch.float64), dim=-1)   # one norm: equal
    >>> queries, values = torch.randn(2, 3, dtype=torch.float64), torch.randn(5, 1, dtype=torch.float64)
    >>> torch.allclose(gaussian_kernel_attention(queries, keys, values, sigma=0.7)[1],
    ...                dot_product_attention(queries, keys, values, tau=0.49)[1])
    True
    """
    q, k, v = _qkv(q, k, v)
    sigma = positive_number(sigma, "sigma")
    weights = torch.softmax(-squared_distances(q, k) / (2 * sigma * sigma), dim=-1)
    return weights @ v, weights


def key_norm_bias(k, tau: float) -> torch.Tensor:
    """The per-key logit bias -|k_j|² / (2τ) that turns dot-product attention into Gaussian attention.

    Parameters
    ----------
    k : array_like, shape (..., Lk, d)
    tau : float

    Returns
    -------
    torch.Tensor, shape (..., Lk)

    Examples
    --------
    >>> key_norm_bias([[3.0, 4.0]], tau=5.0).tolist()
    [-2.5]
    """
    kt = as_tensor(k, "k")
    return -(kt * kt).sum(-1) / (2 * positive_number(tau, "tau"))


def biased_dot_product_attention(q, k, v, tau: float):
    """softmax(q kᵀ / τ - |k_j|² / (2τ)) v: equal to Gaussian attention with σ² = τ.

    Since -|q - k|²/(2τ) = q·k/τ - |k|²/(2τ) - |q|²/(2τ), and the last term is the same for every key of a
    query, the softmax cancels it.

    Parameters
    ----------
    q, k, v : array_like
    tau : float

    Returns
    -------
    (output, weights)

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(4, 3, generator=g, dtype=torch.float64) for _ in range(3))
    >>> a, b = biased_dot_product_attention(q, k, v, 2.0)[1], gaussian_kernel_attention(q, k, v, 2.0 ** 0.5)[1]
    >>> bool(torch.allclose(a, b))
    True
    """
    q, k, v = _qkv(q, k, v)
    tau = positive_number(tau, "tau")
    logits = q @ k.transpose(-2, -1) / tau + key_norm_bias(k, tau).unsqueeze(-2)
    weights = torch.softmax(logits, dim=-1)
    return weights @ v, weights


def topk_attention(q, k, v, k_top: int, tau: float | None = None):
    """Sparse attention: each query keeps its ``k_top`` largest logits.

    The kept logits are softmaxed and the values at those keys summed with these weights; ``k_top`` = Lk
    reproduces dense attention.

    Parameters
    ----------
    q, k, v : array_like
    k_top : int
        1 to Lk.
    tau : float, optional
        As in ``dot_product_attention``.

    Returns
    -------
    (output, weights)
        ``weights`` (..., Lq, Lk) are zero off the kept keys; rows sum to 1.

    Examples
    --------
    >>> import torch
    >>> q, k, v = torch.ones(1, 1), torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[1.0], [2.0], [3.0]])
    >>> _, w = topk_attention(q, k, v, k_top=1)
    >>> w.tolist()
    [[0.0, 0.0, 1.0]]
    """
    q, k, v = _qkv(q, k, v)
    n_keys = k.shape[-2]
    k_top = integer_in(k_top, "k_top", 1, n_keys)
    tau = _temperature(tau, q.shape[-1])
    logits = q @ k.transpose(-2, -1) / tau                               # (..., Lq, Lk)
    top_logits, top_idx = logits.topk(k_top, dim=-1)                     # (..., Lq, k_top)
    top_w = torch.softmax(top_logits, dim=-1)
    lead = broadcast_shapes(logits.shape[:-2], v.shape[:-2])
    lq, dv = logits.shape[-2], v.shape[-1]
    v_all = v.expand(*lead, n_keys, dv).unsqueeze(-3).expand(*lead, lq, n_keys, dv)
    idx = top_idx.expand(*lead, lq, k_top).unsqueeze(-1).expand(*lead, lq, k_top, dv)
    v_top = torch.gather(v_all, -2, idx)                                 # (..., Lq, k_top, dv)
    output = (top_w.unsqueeze(-1) * v_top).sum(-2)
    weights = torch.zeros_like(logits).scatter(-1, top_idx, top_w)       # scatter along the KEY dim
    return output, weights


def entropy(weights) -> torch.Tensor:
    """Entropy of each row (the last dimension) in nats.

    Parameters
    ----------
    weights : array_like, shape (..., N)
        Non-negative rows (of an attention matrix).

    Returns
    -------
    torch.Tensor, shape (...)
        0 for a one-hot row, log N for a uniform one, 0 for an all-zero row.

    Examples
    --------
    >>> import math
    >>> h = entropy([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    >>> [round(float(v), 6) for v in h] == [round(math.log(4), 6), 0.0, 0.0]
    True
    """
    w = as_tensor(weights, "weights")
    if bool((w < 0).any()):
        raise ValueError("weights must be >= 0 (rows of an attention matrix).")
    return -torch.special.xlogy(w, w).sum(-1)


# --------------------------------------------------------------------------- masking
def causal_mask(length: int, device=None) -> torch.Tensor:
    """The causal mask: query i may attend to keys 0..i.

    Parameters
    ----------
    length : int
    device : torch.device, optional

    Returns
    -------
    torch.Tensor, shape (L, L), bool
        True on and below the diagonal (True = may attend).

    Examples
    --------
    >>> causal_mask(3).int().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    length = integer_in(length, "length", 1, 100_000)
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, length: int, device=None) -> torch.Tensor:
    """Key mask for padded sequences: True for the first ``lengths[b]`` (real) tokens of sequence b.

    Combine with a causal mask as ``causal_mask(L) & padding_mask(lengths, L)[:, None, :]``, a (B, L, L)
    mask; add ``[:, None]`` once more for a head dimension: (B, 1, L, L).

    Parameters
    ----------
    lengths : array_like of int, shape (B,)
        Each from 0 to ``length``.
    length : int
    device : torch.device, optional

    Returns
    -------
    torch.Tensor, shape (B, L), bool

    Examples
    --------
    >>> padding_mask([1, 3], 3).int().tolist()
    [[1, 0, 0], [1, 1, 1]]
    """
    length = integer_in(length, "length", 1, 100_000)
    lens = torch.as_tensor(lengths, device=device).reshape(-1)
    if lens.is_floating_point() or bool((lens < 0).any()) or bool((lens > length).any()):
        raise ValueError(f"lengths must be whole numbers from 0 to {length}, got {lens.tolist()}.")
    return torch.arange(length, device=lens.device)[None, :] < lens[:, None]


def masked_attention(q, k, v, mask=None, mode: str = "pre", scale: float | None = None):
    """Attention with a boolean mask (True = may attend), applied in one of ``MASK_MODES``.

    ``"pre"`` is the correct one and equals torch's SDPA with the same mask; a fully masked row gives zero
    weights and zero output (never NaN). The other modes are the common mistakes, kept to show what goes wrong.

    Parameters
    ----------
    q, k, v : array_like
        Shapes as in ``dot_product_attention``.
    mask : bool tensor, optional
        Broadcasts to (..., Lq, Lk).
    mode : {"pre", "post", "post_renorm", "multiply_logits"}
    scale : float, optional
        Multiplies the logits; 1/sqrt(d) by default.

    Returns
    -------
    (output, weights)

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(4, 8, generator=g, dtype=torch.float64) for _ in range(3))
    >>> m = causal_mask(4)
    >>> out, _ = masked_attention(q, k, v, m)
    >>> bool(torch.allclose(out, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)))
    True
    >>> masked_attention(q, k, v, m, mode="post")[1].sum(-1).lt(1).any().item()   # rows no longer sum to 1
    True
    """
    check_mode(mode)
    q, k, v = _qkv(q, k, v)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else positive_number(scale, "scale")
    weights = masked_weights((q @ k.transpose(-2, -1)) * scale, mask, mode)
    return weights @ v, weights


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``MASK_MODES``, else a ``ValueError`` listing them.

    Parameters
    ----------
    mode : str

    Returns
    -------
    str

    Examples
    --------
    >>> check_mode("post_renorm")
    'post_renorm'
    """
    one_of(mode, MASK_MODES, "mode")
    return mode


def masked_weights(logits: torch.Tensor, mask, mode: str = "pre") -> torch.Tensor:
    """Softmax weights of ``logits`` under a boolean ``mask`` (True = may attend) in one of ``MASK_MODES``.

    Parameters
    ----------
    logits : torch.Tensor, shape (..., Lq, Lk)
    mask : bool tensor or None
        Broadcasts to the logits' shape; None is a plain softmax.
    mode : {"pre", "post", "post_renorm", "multiply_logits"}

    Returns
    -------
    torch.Tensor
        The logits' shape broadcast with the mask's. With ``"pre"``, a fully masked row is all zeros.

    Examples
    --------
    >>> import torch
    >>> masked_weights(torch.zeros(2, 2), torch.tensor([[True, False], [False, False]])).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    check_mode(mode)
    if mask is None:
        return torch.softmax(logits, dim=-1)
    mask = torch.as_tensor(mask, device=logits.device)
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}.")
    try:
        shape = broadcast_shapes(mask.shape, logits.shape)
    except RuntimeError:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to the attention "
                         f"logits' shape {tuple(logits.shape)} (..., Lq, Lk).") from None
    mask = mask.expand(shape)
    logits = logits.expand(shape)
    if mode == "pre":
        allowed = mask.any(-1, keepdim=True)
        # fully masked rows: softmax of zeros, then zeroed, so no NaN forward or backward
        filled = torch.where(allowed, logits.masked_fill(~mask, -math.inf), 0.0)
        return torch.softmax(filled, dim=-1) * allowed
    if mode == "post":
        return torch.softmax(logits, dim=-1) * mask
    if mode == "post_renorm":
        w = torch.softmax(logits, dim=-1) * mask
        total = w.sum(-1, keepdim=True)
        return torch.where(total > 0, w / total.clamp_min(torch.finfo(w.dtype).tiny), 0.0)
    return torch.softmax(logits * mask, dim=-1)     # multiply_logits
