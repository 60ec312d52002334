"""Efficient attention through the kernel lens: feature maps and random features (the online softmax, which keeps
the exact kernel, is ``explorer.online``).

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

from ._checks import broadcast_shapes, integer_in, one_of
from .attention import _qkv

FEATURE_MAPS = ("elu+1", "relu")
RANDOM_FEATURES = ("positive", "trig")


# --------------------------------------------------------------------------- feature maps
def _elu1(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x) + 1


FIXED_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"elu+1": _elu1, "relu": F.relu}


class RandomFeatures:
    """A random feature map φ with E[φ(q)·φ(k)] = exp(q·k) (see ``random_feature_map``, which makes one).

    Examples
    --------
    >>> import torch
    >>> phi = random_feature_map(3, 32, seed=0)
    >>> phi.m, tuple(phi(torch.zeros(5, 3, dtype=torch.float64)).shape)
    (32, (5, 32))
    """

    def __init__(self, w: torch.Tensor, kind: str):
        self.w, self.kind = w, kind                       # w: (m, d) projection directions

    @property
    def m(self) -> int:
        """The number of random directions (rows of the projection ``w``): the number of features for
        ``"positive"``, half of it for ``"trig"`` (a cos and a sin per direction).

        Returns
        -------
        int

        Examples
        --------
        >>> import torch
        >>> phi = random_feature_map(4, 64, kind="trig", seed=1)
        >>> phi.m, phi(torch.zeros(1, 4, dtype=torch.float64)).shape[-1]
        (64, 128)
        """
        return self.w.shape[0]

    def __call__(self, x: torch.Tensor, shift: str | None = None) -> torch.Tensor:
        """The features of the rows of ``x`` (..., d). ``shift`` (positive features): before exponentiating,
        subtract each row's largest exponent (``"row"``: for queries) or the largest of all rows (``"all"``: for
        keys), as Performer does. The factor this removes is common to one query's features, or to every key's,
        so it cancels in attention's ratio φ(q)·Σφ(k)v / φ(q)·Σφ(k), and large inputs no longer underflow to an
        all-zero row (the features themselves then estimate exp(q·k) only up to that factor)."""
        w = self.w.to(device=x.device, dtype=x.dtype)
        proj = x @ w.T                                    # (..., m)
        sq = 0.5 * (x * x).sum(-1, keepdim=True)          # |x|²/2
        if self.kind == "positive":                       # exp(w·x - |x|²/2) / sqrt(m): every feature > 0
            z = proj - sq
            if shift == "row":
                z = z - z.amax(-1, keepdim=True)
            elif shift == "all":
                z = z - z.amax()
            return torch.exp(z) / math.sqrt(self.m)
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


def kernel_estimate_error(x_query, x_keys, h: float, kind: str, orthogonal: bool, seed: int, counts,
                          draws: int = 16, embed: int = 16) -> dict:
    """How well m random features estimate the Gaussian kernel exp(−(x − xᵢ)²/(2h²)) of one-dimensional inputs
    (placed along one axis of R^embed, scaled by 1/h), for each m in ``counts``.

    Each of ``draws`` maps has max(counts) directions, and m features are its first m (nested: one pass gives
    every m, and the curve over m is smooth). Returns ``rms`` (the root-mean-square error over every query-key
    pair and every draw), and, for iid directions, the exact ``theory``: a mean of m independent terms has
    variance σ²/m, with σ² per pair (Δ = (x − xᵢ)/h, s = (x + xᵢ)/h) equal to (1 + e^{−2Δ²})/2 − e^{−Δ²} for
    trigonometric features and e^{−Δ²}(e^{s²} − 1) for positive ones; also as ``log10_theory`` (computed in the log
    domain: for positive features it can pass float64's range, and ``theory`` is then inf).

    Parameters
    ----------
    x_query, x_keys : array_like, shape (M,), (N,)
    h : float
        The kernel's bandwidth.
    kind : {"positive", "trig"}
    orthogonal : bool
    seed : int
    counts : sequence of int
        The numbers of features m.
    draws : int
        Independent feature maps averaged over.
    embed : int
        The dimension the inputs are placed in.

    Returns
    -------
    dict
        ``m``, ``rms``, and for iid directions ``theory`` and ``log10_theory``, each one value per m.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 20)
    >>> e = kernel_estimate_error(x, x, 1.0, "trig", False, 0, [64, 1024], draws=32)
    >>> bool(np.all(np.abs(e["rms"] / e["theory"] - 1) < 0.3)), round(float(e["theory"][0] / e["theory"][1]), 9)
    (True, 4.0)
    """
    counts = [integer_in(m, "m", 1, 65_536) for m in counts]
    xq = torch.as_tensor(x_query, dtype=torch.float64) / h
    xk = torch.as_tensor(x_keys, dtype=torch.float64) / h
    q = torch.zeros(len(xq), embed, dtype=torch.float64)
    k = torch.zeros(len(xk), embed, dtype=torch.float64)
    q[:, 0], k[:, 0] = xq, xk
    delta, total = xq[:, None] - xk[None, :], xq[:, None] + xk[None, :]
    exact = torch.exp(-0.5 * delta ** 2)
    # exp(−|x|²/2) on each side turns φ(q)·φ(k) ≈ exp(q·k) into an estimate of exp(−|q − k|²/2)
    q_side, k_side = torch.exp(-0.5 * xq ** 2)[:, None], torch.exp(-0.5 * xk ** 2)[:, None]
    top = max(counts)
    squares = torch.zeros(len(counts), dtype=torch.float64)
    for r in range(draws):
        phi = random_feature_map(embed, top, kind, orthogonal, seed * 1000 + r)
        fq, fk = phi(q) * q_side * math.sqrt(top), phi(k) * k_side * math.sqrt(top)     # each term unscaled
        if kind == "trig":                                  # [cos, sin] halves: term i is cos_i cos_i + sin_i sin_i
            fq, fk = fq.view(len(xq), 2, top).transpose(1, 2), fk.view(len(xk), 2, top).transpose(1, 2)
        else:
            fq, fk = fq[..., None], fk[..., None]
        acc, done = torch.zeros_like(exact), 0
        for j, m in enumerate(counts):
            acc += torch.einsum("qic,kic->qk", fq[:, done:m], fk[:, done:m])
            done = m
            squares[j] += ((acc / m - exact) ** 2).mean()
    # σ² in the log domain: for positive features e^(s²) passes float64's range once |x + xᵢ|/h is about 27
    log_term = (torch.log(0.5 * (1 + torch.exp(-2 * delta ** 2)) - torch.exp(-delta ** 2)) if kind == "trig"
                else -delta ** 2 + total ** 2 + torch.log(-torch.expm1(-total ** 2)))
    log_sigma2 = float(torch.logsumexp(log_term.flatten(), 0)) - math.log(log_term.numel())
    m = torch.tensor(counts, dtype=torch.float64)
    log10_theory = ((log_sigma2 - torch.log(m)) / 2 / math.log(10)).numpy()
    return {"m": m.numpy(), "rms": torch.sqrt(squares / draws).numpy(), "theory": 10.0 ** log10_theory,
            "log10_theory": log10_theory, "draws": draws}


def _feature_map(feature_map) -> Callable[[torch.Tensor], torch.Tensor]:
    if callable(feature_map):
        return feature_map
    return FIXED_MAPS[one_of(feature_map, FIXED_MAPS, "feature_map")]


# --------------------------------------------------------------------------- linear attention
CAUSAL_CHUNK = 128      # tokens per chunk of causal linear attention: its memory is O(m·dv + chunk²), not O(T·m·dv)


def _features(phi, q, k):
    """φ(q), φ(k); positive random features are stabilised (see ``RandomFeatures``): the ratio is unchanged."""
    if isinstance(phi, RandomFeatures) and phi.kind == "positive":
        return phi(q, shift="row"), phi(k, shift="all")
    return phi(q), phi(k)


def _causal_linear(fq, fk, v, chunk: int):
    """Causal linear attention over chunks of ``chunk`` tokens: each chunk reads the state S and normaliser z of
    the chunks before it (an m × dv matrix and an m-vector) and adds its own causal part as a chunk × chunk
    product, then folds its keys and values into S and z. Equal to the running sums of the recurrence."""
    lead = broadcast_shapes(fq.shape[:-2], fk.shape[:-2], v.shape[:-2])
    state = torch.zeros(*lead, fk.shape[-1], v.shape[-1], dtype=v.dtype, device=v.device)     # S: (..., m, dv)
    norm = torch.zeros(*lead, fk.shape[-1], dtype=v.dtype, device=v.device)                  # z: (..., m)
    num, den = [], []
    n = fq.shape[-2]
    causal = torch.ones(min(chunk, n), min(chunk, n), dtype=torch.bool, device=v.device).tril()
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        cq, ck, cv = fq[..., start:stop, :], fk[..., start:stop, :], v[..., start:stop, :]
        inside = (cq @ ck.transpose(-2, -1)) * causal[: stop - start, : stop - start]      # (..., c, c)
        num.append(cq @ state + inside @ cv)
        den.append((cq * norm.unsqueeze(-2)).sum(-1, keepdim=True) + inside.sum(-1, keepdim=True))
        state = state + ck.transpose(-2, -1) @ cv
        norm = norm + ck.sum(-2)
    return torch.cat(num, dim=-2), torch.cat(den, dim=-2)


def linear_attention(q, k, v, feature_map="elu+1", causal: bool = False,
                     chunk_size: int = CAUSAL_CHUNK) -> torch.Tensor:
    """Attention with the kernel φ(q)·φ(k): ``φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)``, linear in the length.

    Parameters
    ----------
    q, k, v : array_like
        (..., Tq, d), (..., Tk, d), (..., Tk, dv).
    feature_map : {"elu+1", "relu"} or callable
        A name, or a map such as ``random_feature_map(d, m)`` (then this estimates softmax attention with
        logits q·k: scale q and k by d^(-1/4) first for the usual 1/√d).
    causal : bool
        Query t sees keys 0..t (Tq = Tk): the recurrence of the running state S_t = Σ_{s≤t} φ(k_s) v_sᵀ and
        z_t = Σ_{s≤t} φ(k_s) (an RNN; see ``linear_attention_states``), computed ``chunk_size`` tokens at a time
        so that only one state and one chunk are held.
    chunk_size : int
        Tokens per chunk of the causal computation.

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
    fq, fk = _features(_feature_map(feature_map), q, k)            # (..., Tq, m), (..., Tk, m)
    if not causal:
        num = fq @ (fk.transpose(-2, -1) @ v)                        # (..., Tq, dv): m × dv state, no Tq × Tk
        den = fq @ fk.sum(-2).unsqueeze(-1)                          # (..., Tq, 1)
    else:
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(f"causal linear attention needs as many queries as keys, got {q.shape[-2]} "
                             f"and {k.shape[-2]}.")
        num, den = _causal_linear(fq, fk, v, integer_in(chunk_size, "chunk_size", 1, 1 << 20))
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
