"""The online softmax: exact softmax attention over key blocks, never building the Tq × Tk weights.

Keys are taken in blocks with a running maximum, a running sum and a rescaled accumulator (Milakov & Gimelshein
2018; the core of FlashAttention), so memory holds one block at a time and the result equals the full softmax's
to rounding. Shapes as in ``explorer.attention``: q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv); masks are
bool, True = may attend.
"""

from __future__ import annotations

import math

import torch

from ._checks import broadcast_shapes, integer_in, positive_number
from .attention import _qkv


def _online_step(run_max, run_sum, acc, s, values, start: int, stop: int, record: bool = True):
    """Fold one block of logits ``s`` (..., block) and its values (..., block, dv) into the running max, sum
    and accumulator; return them and the block's record (None when ``record`` is False)."""
    new_max = torch.maximum(run_max, s.amax(-1))
    safe = torch.where(torch.isfinite(new_max), new_max, 0.0)        # a row that has seen no key yet
    rescale = torch.exp(run_max - safe)                               # exp(-inf) = 0: nothing to rescale
    e = (s - safe.unsqueeze(-1)).exp_()                               # in place: one more block, not two
    run_sum = run_sum * rescale + e.sum(-1)
    acc = acc * rescale.unsqueeze(-1) + (e.unsqueeze(-2) @ values).squeeze(-2)
    if not record:
        return new_max, run_sum, acc, None
    kept = {"start": start, "stop": stop, "max": new_max.clone(), "rescale": rescale, "sum": run_sum.clone(),
            "acc": acc.clone()}
    return new_max, run_sum, acc, kept


def _finish(run_sum, acc):
    return torch.where(run_sum.unsqueeze(-1) > 0, acc / run_sum.clamp_min(torch.finfo(run_sum.dtype).tiny)
                       .unsqueeze(-1), 0.0)


def online_softmax(logits, values, block_size: int, mask=None):
    """Σ_j softmax(logits)_j values_j over key blocks, with a running max, sum and rescaled accumulator.

    Parameters
    ----------
    logits : torch.Tensor, shape (..., Tk)
        The scores of the keys for each query row.
    values : torch.Tensor, shape (..., Tk, dv)
    block_size : int
        Keys per block.
    mask : bool tensor, broadcasting to ``logits``, optional
        True = may attend; a fully masked row gives 0.

    Returns
    -------
    (out, states) : (torch.Tensor (..., dv), list of dict)
        One state per block: ``start``, ``stop``, ``max`` (running maximum m), ``rescale``
        (exp(m_old - m_new), what the earlier sums are multiplied by), ``sum`` (running Σ exp(s - m)),
        ``acc`` (running Σ exp(s - m) v), each of the row shape.

    Examples
    --------
    >>> import torch
    >>> s = torch.tensor([0.0, 2.0, 1.0, 5.0, -1.0], dtype=torch.float64); v = torch.eye(5, dtype=torch.float64)
    >>> out, states = online_softmax(s, v, block_size=2)
    >>> bool(torch.allclose(out, torch.softmax(s, -1))), len(states), float(states[-1]["max"])
    (True, 3, 5.0)
    """
    block_size = integer_in(block_size, "block_size", 1, 1 << 30)
    logits = torch.as_tensor(logits)
    if mask is not None:
        logits = logits.masked_fill(~torch.as_tensor(mask, device=logits.device).expand_as(logits), -math.inf)
    n = logits.shape[-1]
    run_max = torch.full(logits.shape[:-1], -math.inf, dtype=logits.dtype, device=logits.device)
    run_sum = torch.zeros_like(run_max)
    acc = torch.zeros(*logits.shape[:-1], values.shape[-1], dtype=values.dtype, device=values.device)
    states = []
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        run_max, run_sum, acc, record = _online_step(run_max, run_sum, acc, logits[..., start:stop],
                                                     values[..., start:stop, :], start, stop)
        states.append(record)
    return _finish(run_sum, acc), states


def online_softmax_attention(q, k, v, block_size: int, mask=None, scale: float | None = None, record: bool = True):
    """Exact softmax attention over key blocks (the online softmax), never building the Tq × Tk weights.

    Parameters
    ----------
    q, k, v : array_like
        (..., Tq, d), (..., Tk, d), (..., Tk, dv).
    block_size : int
        Keys per block.
    mask : bool tensor, broadcasting to (..., Tq, Tk), optional
        True = may attend; a fully masked row gives zeros (as ``explorer.attention.masked_attention``).
    scale : float, optional
        Multiplies the logits; 1/√d by default (SDPA's).
    record : bool
        Keep a record of every block (for showing the steps); without it only one block and the running sums
        are held, the memory the online softmax is for.

    Returns
    -------
    (out, states)
        ``out`` (..., Tq, dv), equal to SDPA's with the same mask to rounding; ``states`` one record per
        key block as in ``online_softmax`` (``max``, ``rescale``, ``sum`` of shape (..., Tq), ``acc``), empty
        without ``record``.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(1)
    >>> q, k, v = (torch.randn(6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    >>> m = torch.ones(6, 6, dtype=torch.bool).tril()
    >>> out, states = online_softmax_attention(q, k, v, block_size=4, mask=m)
    >>> ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
    >>> bool(torch.allclose(out, ref)), len(states)
    (True, 2)
    """
    q, k, v = _qkv(q, k, v)
    block_size = integer_in(block_size, "block_size", 1, 1 << 30)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else positive_number(scale, "scale")
    full_mask = None
    if mask is not None:
        mask = torch.as_tensor(mask, device=q.device)
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}.")
        lead = broadcast_shapes(q.shape[:-2], k.shape[:-2])
        full_mask = mask.expand(*lead, q.shape[-2], k.shape[-2])
    n = k.shape[-2]
    lead = broadcast_shapes(q.shape[:-1], (*k.shape[:-2], q.shape[-2]))
    run_max = torch.full(lead, -math.inf, dtype=q.dtype, device=q.device)
    run_sum = torch.zeros_like(run_max)
    acc = torch.zeros(*lead, v.shape[-1], dtype=q.dtype, device=q.device)
    states = []
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        s = (q @ k[..., start:stop, :].transpose(-2, -1)).mul_(scale)          # (..., Tq, block), scaled in place
        if full_mask is not None:
            s = s.masked_fill_(~full_mask[..., start:stop], -math.inf)
        run_max, run_sum, acc, kept = _online_step(run_max, run_sum, acc, s, v[..., start:stop, :].unsqueeze(-3),
                                                   start, stop, record)
        del s                                     # before the next block's logits: one block's worth at a time
        if kept is not None:
            states.append(kept)
    return _finish(run_sum, acc), states
