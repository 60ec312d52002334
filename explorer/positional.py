"""Position as a kernel: the three schemes that tell a transformer where its tokens are, each a function of i - j.

* **Sinusoidal** (Vaswani et al., 2017): a fixed vector per position, added to the token's embedding;
  ``PE(i)·PE(j) = Σ_k cos((i - j) ω_k)`` depends on i - j only, and oscillates instead of decaying.
* **RoPE** (Su et al., 2021, arXiv 2104.09864): q and k are rotated by an angle proportional to their position, pair
  by pair, so ``rope(q)_i · rope(k)_j`` depends on i - j only; the base θ sets how fast the frequencies fall.
  Position interpolation (Chen et al., 2023, arXiv 2306.15595) divides the positions by a factor: the same kernel,
  wider.
* **ALiBi** (Press, Smith & Lewis, 2022, arXiv 2108.12409): ``-m_h·(i - j)`` added to head h's logits, so the softmax
  weights are multiplied by ``exp(-m_h·|i - j|)``: a Laplace kernel over positions with bandwidth 1/m_h.

Every function takes and returns torch tensors (float32 unless asked); bad arguments raise ``ValueError`` with a
sentence.
"""

from __future__ import annotations

import math

import torch

from ._checks import integer_in, positive_number

__all__ = ["SCHEMES", "alibi_bias", "alibi_slopes", "position_kernel", "rope", "rope_angles", "sinusoidal"]


def _frequencies(d: int, base: float, dtype=torch.float64) -> torch.Tensor:
    """ω_k = base^(-2k/d) for k = 0 .. ceil(d/2) - 1: one per pair of dimensions."""
    return base ** (-torch.arange(0, d, 2, dtype=dtype) / d)


def sinusoidal(length: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The sinusoidal position table of Vaswani et al. (2017).

    Parameters
    ----------
    length : int
        Number of positions, 1 or more.
    d : int
        Width of each position's vector, 1 or more.
    base : float
        The longest wavelength is ``2π·base``.
    dtype : torch.dtype

    Returns
    -------
    torch.Tensor
        Shape (length, d): ``PE[p, 2k] = sin(p·base^(-2k/d))`` and ``PE[p, 2k+1] = cos(p·base^(-2k/d))``.

    Examples
    --------
    >>> pe = sinusoidal(50, 8, dtype=torch.float64)
    >>> pe.shape
    torch.Size([50, 8])
    >>> bool(torch.isclose(pe[7, 0], torch.tensor(math.sin(7.0), dtype=torch.float64)))
    True
    >>> bool(torch.isclose(pe[7, 3], torch.tensor(math.cos(7 / 10000 ** (2 / 8)), dtype=torch.float64)))
    True
    """
    length = integer_in(length, "length", 1, 1_000_000)
    d = integer_in(d, "d", 1, 65_536)
    base = positive_number(base, "base")
    angles = torch.arange(length, dtype=torch.float64)[:, None] * _frequencies(d, base)[None, :]
    out = torch.empty(length, d, dtype=torch.float64)
    out[:, 0::2] = torch.sin(angles)
    out[:, 1::2] = torch.cos(angles[:, : d // 2])
    return out.to(dtype)


def rope_angles(positions: torch.Tensor, d: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angles of RoPE: ``positions[:, None] · base^(-2k/d)``.

    Parameters
    ----------
    positions : torch.Tensor, shape (T,)
    d : int
        The head dimension (one angle per pair of dimensions).
    base : float

    Returns
    -------
    torch.Tensor, shape (T, d/2), float64

    Examples
    --------
    >>> import torch
    >>> rope_angles(torch.tensor([0, 1, 2]), 4, base=100.0).tolist()     # frequencies 1 and 100^(-1/2)
    [[0.0, 0.0], [1.0, 0.1], [2.0, 0.2]]
    """
    return positions.to(torch.float64)[:, None] * _frequencies(d, base)[None, :]


def rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021, eq. 34): rotate each pair ``(x[..., 2k], x[..., 2k+1])`` by the
    angle ``p·base^(-2k/d)``, p the position of the row.

    Parameters
    ----------
    x : torch.Tensor
        Shape (..., T, d) with d even: queries or keys, one row per position.
    positions : torch.Tensor, optional
        Shape (T,): each row's position (default 0 .. T-1). Fractional positions are allowed: position
        interpolation passes ``positions / s`` to widen the kernel s times.
    base : float
        θ of the paper (10,000 in most models).

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``x``. ``rope(q)[i] · rope(k)[j]`` depends on i - j only (and on q and k).

    Examples
    --------
    >>> q, k = torch.randn(1, 8, dtype=torch.float64), torch.randn(1, 8, dtype=torch.float64)
    >>> def score(i, j):
    ...     return float(rope(q, torch.tensor([i])) @ rope(k, torch.tensor([j])).T)
    >>> math.isclose(score(5, 2), score(13, 10), rel_tol=1e-9)      # the same i - j, the same score
    True
    >>> math.isclose(score(0, 0), float(q @ k.T), rel_tol=1e-9)      # position 0 is not rotated
    True
    """
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions: the last dimension must be even, not {d}.")
    base = positive_number(base, "base")
    T = x.shape[-2]
    positions = torch.arange(T, device=x.device) if positions is None else torch.as_tensor(positions)
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape ({T},), one per row; got {tuple(positions.shape)}.")
    angles = rope_angles(positions.cpu(), d, base).to(device=x.device, dtype=x.dtype)   # (T, d/2)
    cos, sin = torch.cos(angles), torch.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Each head's ALiBi slope m_h (Press et al. 2022): ``2^(-8h/H)`` for h = 1 .. H when H is a power of two; else
    the slopes of the power of two just below H, then every other slope of twice that many heads (their rule).

    Parameters
    ----------
    n_heads : int
        H, from 1 to 4096.

    Returns
    -------
    torch.Tensor, shape (H,), float64

    Examples
    --------
    >>> alibi_slopes(8).tolist() == [2 ** -k for k in range(1, 9)]
    True
    >>> [round(m, 4) for m in alibi_slopes(6).tolist()]
    [0.25, 0.0625, 0.0156, 0.0039, 0.5, 0.125]
    """
    n_heads = integer_in(n_heads, "n_heads", 1, 4096)

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    if n_heads & (n_heads - 1) == 0:
        slopes = power_of_two(n_heads)
    else:
        below = 2 ** math.floor(math.log2(n_heads))
        slopes = power_of_two(below) + power_of_two(2 * below)[0::2][: n_heads - below]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(n_heads: int, length: int, causal: bool = True, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The ALiBi bias added to each head's attention logits: ``-m_h·(i - j)`` for query i and key j.

    Parameters
    ----------
    n_heads, length : int
    causal : bool
        True: keys after the query are masked (-inf above the diagonal), as in Press et al.'s decoder; False:
        ``-m_h·|i - j|`` on both sides.
    dtype : torch.dtype

    Returns
    -------
    torch.Tensor
        Shape (n_heads, length, length). ``softmax(logits + bias)`` multiplies each weight by
        ``exp(-m_h·|i - j|)`` before normalising: a Laplace kernel over positions.

    Examples
    --------
    >>> b = alibi_bias(2, 4)
    >>> b[0].tolist()[3]                   # query 3: slope 2^-4 times its distance to keys 0..3
    [-0.1875, -0.125, -0.0625, 0.0]
    >>> bool(torch.isinf(b[0, 0, 1]))      # a later key is masked
    True
    """
    length = integer_in(length, "length", 1, 1_000_000)
    slopes = alibi_slopes(n_heads)
    i = torch.arange(length, dtype=torch.float64)
    distance = i[:, None] - i[None, :]                                  # i - j
    bias = -slopes[:, None, None] * (distance if causal else distance.abs())[None] + 0.0     # (+ 0.0: no -0.0)
    if causal:
        bias = bias.masked_fill((distance < 0)[None], float("-inf"))
    return bias.to(dtype)


SCHEMES = ("sinusoidal", "rope", "alibi")


def position_kernel(scheme: str, offsets, d: int = 64, base: float = 10000.0, n_heads: int = 8,
                    factor: float = 1.0) -> torch.Tensor:
    """What each scheme makes of the offset i - j alone: the kernel it puts on positions.

    Parameters
    ----------
    scheme : {"sinusoidal", "rope", "alibi"}
        ``sinusoidal``: ``PE(i)·PE(j) = Σ_k cos(ω_k (i - j))``, the dot product of two rows of ``sinusoidal`` (it
        oscillates and never decays). ``rope``: the expected ``rope(q)_i · rope(q)_j`` for a q with independent
        N(0, 1) entries, ``Σ_k 2 cos(ω_k (i - j) / factor)`` (its average decays with distance, with ripples);
        ``factor`` > 1 is position interpolation, the same kernel ``factor`` times wider. ``alibi``: each head's
        factor on the softmax weights, ``exp(-m_h |i - j|)``: a Laplace kernel of bandwidth 1/m_h, one row per head.
    offsets : array_like of float
        The offsets i - j.
    d : int
        The vectors' width (even, 2 to 65536): ``ω_k = base^(-2k/d)``, one frequency per pair of dimensions.
    base : float
    n_heads : int
        ALiBi's head count (its slopes: ``alibi_slopes``).
    factor : float
        RoPE's position interpolation factor (positive; 1: none).

    Returns
    -------
    torch.Tensor, float64
        Shape (len(offsets),); for ALiBi (n_heads, len(offsets)).

    Examples
    --------
    >>> position_kernel("sinusoidal", [0.0], d=8).tolist()        # d/2 pairs, each cos 0
    [4.0]
    >>> [round(v, 4) for v in position_kernel("alibi", [0.0, 2.0], n_heads=8)[0].tolist()]     # m = 1/2
    [1.0, 0.3679]
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}.")
    k = torch.as_tensor(offsets, dtype=torch.float64).reshape(-1)
    if not torch.isfinite(k).all():
        raise ValueError("offsets must be finite numbers.")
    if scheme == "alibi":
        return torch.exp(-alibi_slopes(n_heads)[:, None] * k.abs()[None, :])
    d = integer_in(d, "d", 2, 65_536)
    if d % 2:
        raise ValueError(f"d must be even (one frequency per pair of dimensions), got {d}.")
    omega = _frequencies(d, positive_number(base, "base"))
    if scheme == "sinusoidal":
        return torch.cos(k[:, None] * omega[None, :]).sum(1)
    factor = positive_number(factor, "factor")
    return 2.0 * torch.cos(k[:, None] * omega[None, :] / factor).sum(1)
