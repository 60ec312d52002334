"""Efficient attention through the kernel lens: feature maps, random features and the online softmax.

Softmax attention weighs key j by exp(q·k_j) (logits already scaled). Replace that kernel by a product of
feature maps, φ(q)·φ(k), and the sum over keys factorises: Σ_j φ(q)·φ(k_j) v_j = φ(q)ᵀ (Σ_j φ(k_j) v_jᵀ), so
attention costs O(N m d) instead of O(N² d) (linear attention, Katharopoulos et al. 2020). Random features
make φ(q)·φ(k) an unbiased estimate of exp(q·k) itself (FAVOR+, Choromanski et al. 2021). The online
softmax keeps the exact kernel and never builds the N × N matrix: keys in blocks, with a running maximum,
a running sum and a rescaled accumulator (Milakov & Gimelshein 2018; the core of FlashAttention).

Shapes as in ``explorer.attention``: q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv); masks are bool,
True = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ._checks import integer_in, one_of, positive_number
from .attention import _qkv

FEATURE_MAPS = ("elu+1", "relu")
RANDOM_FEATURES = ("positive", "trig")


# --------------------------------------------------------------------------- feature maps
def _elu1(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x) + 1


FIXED_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"elu+1": _elu1, "relu": F.relu}


class RandomFeatures:
    """A random feature map φ with E[φ(q)·φ(k)] = exp(q·k) (see ``random_feature_map``)."""

    def __init__(self, w: torch.Tensor, kind: str):
        self.w, self.kind = w, kind                       # w: (m, d) projection directions

    @property
    def m(self) -> int:
        return self.w.shape[0]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        w = self.w.to(device=x.device, dtype=x.dtype)
        proj = x @ w.T                                    # (..., m)
        sq = 0.5 * (x * x).sum(-1, keepdim=True)          # |x|²/2
        if self.kind == "positive":                       # exp(w·x - |x|²/2) / sqrt(m): every feature > 0
            return torch.exp(proj - sq) / math.sqrt(self.m)
        scale = torch.exp(sq) / math.sqrt(self.m)         # exp(|x|²/2) [cos w·x, sin w·x] / sqrt(m)
        return torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1) * scale


def random_feature_map(d: int, m: int, kind: str = "positive", orthogonal: bool = False,
                       seed: int = 0) -> RandomFeatures:
    """A random feature map φ: R^d -> R^m (2m for ``"trig"``) with E[φ(q)·φ(k)] = exp(q·k).

    Parameters
    ----------
    d : int
        Input dimension (1 to 4096).
    m : int
        Number of random directions w_i ~ N(0, I_d) (1 to 65,536).
    kind : {"positive", "trig"}
        ``"positive"``: φ(x) = exp(w_i·x - |x|²/2) / √m (FAVOR+: positive, so attention weights stay
        positive); ``"trig"``: φ(x) = exp(|x|²/2) [cos w_i·x, sin w_i·x] / √m (random Fourier features of
        the Gaussian kernel, times the norms' factor).
    orthogonal : bool
        Draw the directions in blocks of d mutually orthogonal ones, each with the length of a Gaussian
        vector (chi with d degrees of freedom), so each one is still N(0, I_d): lower variance at equal m.
    seed : int

    Returns
    -------
    RandomFeatures
        A callable on (..., d) tensors giving (..., m) features (``.w`` holds the directions).

    Examples
    --------
    >>> import torch
    >>> q, k = torch.tensor([0.3, -0.2], dtype=torch.float64), torch.tensor([0.1, 0.4], dtype=torch.float64)
    >>> phi = random_feature_map(2, 50_000, seed=0)
    >>> estimate, exact = float(phi(q) @ phi(k)), float(torch.exp(q @ k))
    >>> abs(estimate / exact - 1) < 0.02
    True
    """
    d = integer_in(d, "d", 1, 4096)
    m = integer_in(m, "m", 1, 65_536)
    one_of(kind, RANDOM_FEATURES, "kind")
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    if not orthogonal:
        return RandomFeatures(torch.randn(m, d, generator=gen, dtype=torch.float64), kind)
    blocks = []
    for _ in range(math.ceil(m / d)):
        g = torch.randn(d, d, generator=gen, dtype=torch.float64)
        qmat, r = torch.linalg.qr(g)
        qmat = qmat * torch.sign(torch.diagonal(r))[None, :]          # a uniformly random rotation
        lengths = torch.randn(d, d, generator=gen, dtype=torch.float64).norm(dim=1)   # chi(d) lengths
        blocks.append(qmat.T * lengths[:, None])
    return RandomFeatures(torch.cat(blocks)[:m], kind)


def _feature_map(feature_map) -> Callable[[torch.Tensor], torch.Tensor]:
    if callable(feature_map):
        return feature_map
    return FIXED_MAPS[one_of(feature_map, FIXED_MAPS, "feature_map")]


# --------------------------------------------------------------------------- linear attention
def linear_attention(q, k, v, feature_map="elu+1", causal: bool = False) -> torch.Tensor:
    """Attention with the kernel φ(q)·φ(k): ``φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)``, linear in the length.

    Parameters
    ----------
    q, k, v : array_like
        (..., Tq, d), (..., Tk, d), (..., Tk, dv).
    feature_map : {"elu+1", "relu"} or callable
        A name, or a map such as ``random_feature_map(d, m)`` (then this estimates softmax attention with
        logits q·k: scale q and k by d^(-1/4) first for the usual 1/√d).
    causal : bool
        Query t sees keys 0..t (Tq = Tk): computed as a recurrence over the sequence, the running state
        S_t = Σ_{s≤t} φ(k_s) v_sᵀ and z_t = Σ_{s≤t} φ(k_s) (an RNN; see ``linear_attention_states``).

    Returns
    -------
    torch.Tensor, shape (..., Tq, dv)
        A row whose normaliser is 0 (e.g. ReLU features all zero) gives 0.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(5, 3, generator=g, dtype=torch.float64) for _ in range(3))
    >>> rnn = linear_attention(q, k, v, causal=True)
    >>> bool(torch.allclose(rnn, linear_attention_masked(q, k, v, torch.ones(5, 5, dtype=torch.bool).tril())))
    True
    """
    q, k, v = _qkv(q, k, v)
    phi = _feature_map(feature_map)
    fq, fk = phi(q), phi(k)                                          # (..., Tq, m), (..., Tk, m)
    if not causal:
        num = fq @ (fk.transpose(-2, -1) @ v)                        # (..., Tq, dv): m × dv state, no Tq × Tk
        den = fq @ fk.sum(-2).unsqueeze(-1)                          # (..., Tq, 1)
    else:
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(f"causal linear attention needs as many queries as keys, got {q.shape[-2]} "
                             f"and {k.shape[-2]}.")
        state = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)   # (..., T, m, dv): S_t
        norm = torch.cumsum(fk, dim=-2)                                     # (..., T, m): z_t
        num = (fq.unsqueeze(-2) @ state).squeeze(-2)
        den = (fq * norm).sum(-1, keepdim=True)
    return torch.where(den > 0, num / den.clamp_min(torch.finfo(den.dtype).tiny), 0.0)


def linear_attention_masked(q, k, v, mask, feature_map="elu+1") -> torch.Tensor:
    """The parallel form: the (Tq, Tk) matrix φ(Q)φ(K)ᵀ with masked entries zeroed, rows normalised.

    Parameters
    ----------
    q, k, v : array_like
    mask : bool tensor, broadcasting to (..., Tq, Tk)
        True = may attend.
    feature_map : {"elu+1", "relu"} or callable

    Returns
    -------
    torch.Tensor, shape (..., Tq, dv)

    Examples
    --------
    >>> import torch
    >>> q = k = torch.ones(2, 1, dtype=torch.float64); v = torch.tensor([[1.0], [3.0]], dtype=torch.float64)
    >>> linear_attention_masked(q, k, v, torch.ones(2, 2, dtype=torch.bool).tril()).tolist()
    [[1.0], [2.0]]
    """
    q, k, v = _qkv(q, k, v)
    phi = _feature_map(feature_map)
    a = (phi(q) @ phi(k).transpose(-2, -1)) * torch.as_tensor(mask, device=q.device)
    den = a.sum(-1, keepdim=True)
    return torch.where(den > 0, (a @ v) / den.clamp_min(torch.finfo(den.dtype).tiny), 0.0)


def linear_attention_states(q, k, v, feature_map="elu+1") -> list[dict[str, torch.Tensor]]:
    """Causal linear attention run as an RNN, one token at a time, keeping what it carries.

    Parameters
    ----------
    q, k, v : array_like
        (T, d), (T, d), (T, dv): one sequence.
    feature_map : {"elu+1", "relu"} or callable

    Returns
    -------
    list of dict
        One record per token t: ``state`` S_t (m, dv), ``norm`` z_t (m,), ``output`` (dv,).

    Examples
    --------
    >>> import torch
    >>> q = k = torch.ones(3, 2, dtype=torch.float64); v = torch.arange(3.0, dtype=torch.float64)[:, None]
    >>> [round(float(s["output"][0]), 6) for s in linear_attention_states(q, k, v)]
    [0.0, 0.5, 1.0]
    """
    q, k, v = _qkv(q, k, v)
    if q.ndim != 2:
        raise ValueError(f"linear_attention_states takes one sequence: q of shape (T, d), got {tuple(q.shape)}.")
    phi = _feature_map(feature_map)
    fq, fk = phi(q), phi(k)
    state = torch.zeros(fk.shape[-1], v.shape[-1], dtype=v.dtype, device=v.device)
    norm = torch.zeros(fk.shape[-1], dtype=v.dtype, device=v.device)
    out = []
    for t in range(q.shape[0]):
        state = state + torch.outer(fk[t], v[t])
        norm = norm + fk[t]
        den = fq[t] @ norm
        output = fq[t] @ state / den if den > 0 else torch.zeros_like(v[t])
        out.append({"state": state.clone(), "norm": norm.clone(), "output": output})
    return out


# --------------------------------------------------------------------------- online softmax
def _online_step(run_max, run_sum, acc, s, values, start: int, stop: int):
    """Fold one block of logits ``s`` (..., block) and its values (..., block, dv) into the running max, sum
    and accumulator; return them and the block's record."""
    new_max = torch.maximum(run_max, s.amax(-1))
    safe = torch.where(torch.isfinite(new_max), new_max, 0.0)        # a row that has seen no key yet
    rescale = torch.exp(run_max - safe)                               # exp(-inf) = 0: nothing to rescale
    e = torch.exp(s - safe.unsqueeze(-1))
    run_sum = run_sum * rescale + e.sum(-1)
    acc = acc * rescale.unsqueeze(-1) + (e.unsqueeze(-2) @ values).squeeze(-2)
    record = {"start": start, "stop": stop, "max": new_max.clone(), "rescale": rescale, "sum": run_sum.clone(),
              "acc": acc.clone()}
    return new_max, run_sum, acc, record


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


def online_softmax_attention(q, k, v, block_size: int, mask=None, scale: float | None = None):
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

    Returns
    -------
    (out, states)
        ``out`` (..., Tq, dv), equal to SDPA's with the same mask to rounding; ``states`` one record per
        key block as in ``online_softmax`` (``max``, ``rescale``, ``sum`` of shape (..., Tq), ``acc``).

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
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
        full_mask = mask.expand(*lead, q.shape[-2], k.shape[-2])
    n = k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-1], (*k.shape[:-2], q.shape[-2]))
    run_max = torch.full(lead, -math.inf, dtype=q.dtype, device=q.device)
    run_sum = torch.zeros_like(run_max)
    acc = torch.zeros(*lead, v.shape[-1], dtype=q.dtype, device=q.device)
    states = []
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        s = (q @ k[..., start:stop, :].transpose(-2, -1)) * scale              # (..., Tq, block)
        if full_mask is not None:
            s = s.masked_fill(~full_mask[..., start:stop], -math.inf)
        run_max, run_sum, acc, record = _online_step(run_max, run_sum, acc, s, v[..., start:stop, :].unsqueeze(-3),
                                                     start, stop)
        states.append(record)
    return _finish(run_sum, acc), states
