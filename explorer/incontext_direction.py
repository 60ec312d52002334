"""Softmax attention learns a direction in context: tasks on a sphere that vary along one direction only.

Tasks along a direction (``SUBSPACE_DIM`` dimensions, rank 1): x uniform on the unit sphere, f(x) = g(bᵀx) with b a
unit vector drawn once per seed and g(u) = Σ_k a_k cos(kπu/2) + b_k sin(kπu/2) on u ∈ [−1, 1], scaled so that
max|g′| = L (so f is L-Lipschitz in x and exactly that steep along b). The unit there has a full key-query matrix
M, f̂(x) = Σᵢ yᵢ softmax_i(xᵢᵀMx), trained the same way from M = I; ``alignment`` is the cosine between M's
symmetric part and bbᵀ in the Frobenius inner product (1: M = c·bbᵀ; 1/√d: M = c·I, blind to the direction).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ._adam import Adam
from .incontext import BATCH, DEGREE, EVAL_TASKS, SLOPE_GRID, STEPS, evaluate

SUBSPACE_DIM = 8           # the sphere the direction tasks live on


def sphere(shape: tuple[int, ...], d: int, generator: torch.Generator) -> torch.Tensor:
    """Points uniform on the unit sphere in d dimensions: ``shape`` × d.

    Parameters
    ----------
    shape : tuple of int
    d : int
    generator : torch.Generator

    Returns
    -------
    torch.Tensor, shape (*shape, d)

    Examples
    --------
    >>> import torch
    >>> x = sphere((5, 3), 8, torch.Generator().manual_seed(0))
    >>> tuple(x.shape), bool(torch.allclose(x.norm(dim=-1), torch.ones(5, 3, dtype=torch.float64)))
    ((5, 3, 8), True)
    """
    x = torch.randn(*shape, d, generator=generator, dtype=torch.float64)
    return x / x.norm(dim=-1, keepdim=True)


def _direction_profile(n_tasks: int, lipschitz: float, generator: torch.Generator):
    """g(u) = Σ a_k cos(ω_k u) + b_k sin(ω_k u), ω_k = kπ/2, scaled so max over u ∈ [−1, 1] of |g′| is L."""
    k = torch.arange(1, DEGREE + 1, dtype=torch.float64)
    a = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    b = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    omega = k * math.pi / 2
    u = torch.linspace(-1, 1, SLOPE_GRID + 1, dtype=torch.float64)[:, None]
    slope = (a[:, None] * -omega * torch.sin(omega * u) + b[:, None] * omega * torch.cos(omega * u)).sum(-1)
    scale = lipschitz / slope.abs().amax(dim=1, keepdim=True)
    return a * scale, b * scale, omega


def direction_contexts(n_tasks: int, lipschitz: float, noise: float, n: int, direction: torch.Tensor,
                       generator: torch.Generator) -> dict:
    """In-context problems on the sphere whose functions vary along ``direction`` only (module docstring).

    Parameters
    ----------
    n_tasks : int
    lipschitz, noise : float
    n : int
    direction : torch.Tensor, shape (d,)
        A unit vector b.
    generator : torch.Generator

    Returns
    -------
    dict
        ``x`` (n_tasks, n, d), ``y`` (n_tasks, n), ``query`` (n_tasks, d), ``target`` (n_tasks,).

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> batch = direction_contexts(4, 1.0, 0.3, 16, sphere((), 8, g), g)
    >>> tuple(batch["x"].shape), tuple(batch["query"].shape)
    ((4, 16, 8), (4, 8))
    """
    a, b, k = _direction_profile(n_tasks, lipschitz, generator)
    x = sphere((n_tasks, n + 1), len(direction), generator)
    clean = evaluate(a, b, k, x @ direction)
    y = clean[:, :n] + noise * torch.randn(n_tasks, n, generator=generator, dtype=torch.float64)
    return {"x": x[:, :n], "y": y, "query": x[:, n], "target": clean[:, n]}


def matrix_prediction(batch: dict, m: torch.Tensor) -> torch.Tensor:
    """The softmax unit with a full key-query matrix: Σᵢ yᵢ softmax_i(xᵢᵀ M x).

    Parameters
    ----------
    batch : dict
        As ``direction_contexts`` returns it.
    m : torch.Tensor, shape (d, d)

    Returns
    -------
    torch.Tensor, shape (n_tasks,)

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> batch = direction_contexts(4, 1.0, 0.3, 16, sphere((), 8, g), g)
    >>> zero = matrix_prediction(batch, torch.zeros(8, 8, dtype=torch.float64))   # M = 0: the plain mean
    >>> bool(torch.allclose(zero, batch["y"].mean(1)))
    True
    """
    logits = torch.einsum("tnd,de,te->tn", batch["x"], m, batch["query"])
    return (torch.softmax(logits, dim=1) * batch["y"]).sum(1)


def alignment(m: np.ndarray, direction: np.ndarray) -> float:
    """cos∠(sym(M), bbᵀ) in the Frobenius inner product (module docstring).

    Parameters
    ----------
    m : numpy.ndarray, shape (d, d)
    direction : numpy.ndarray, shape (d,)
        A unit vector b.

    Returns
    -------
    float
        1 for M = c·bbᵀ (c > 0), 1/√d for M = c·I.

    Examples
    --------
    >>> import numpy as np
    >>> b = np.eye(4)[0]
    >>> alignment(3 * np.outer(b, b), b), alignment(np.eye(4), b)
    (1.0, 0.5)
    """
    sym, target = (m + m.T) / 2, np.outer(direction, direction)
    return float((sym * target).sum() / (np.linalg.norm(sym) * np.linalg.norm(target)))


def train_direction(lipschitz: float, noise: float, n: int, seed: int = 0, d: int = SUBSPACE_DIM,
                    steps: int = STEPS) -> dict:
    """Train the full M on tasks along a direction b drawn from ``seed``: M (symmetric part), b, the alignment,
    the loss curve, and the in-context error of the trained M and of the best M = w·I on a fixed draw.

    Parameters
    ----------
    lipschitz, noise : float
    n : int
    seed : int
    d : int
    steps : int

    Returns
    -------
    dict
        ``M``, ``direction``, ``alignment``, ``isotropic_alignment`` (1/√d), ``losses``, ``error``,
        ``isotropic_error`` (the best M = w·I), ``lipschitz``, ``d``.

    Examples
    --------
    >>> result = train_direction(2.0, 0.3, 32, steps=5)
    >>> result["M"].shape, len(result["losses"]), round(result["isotropic_alignment"], 4)
    ((8, 8), 5, 0.3536)
    """
    g = torch.Generator().manual_seed(seed)
    direction = sphere((), d, g)
    m = torch.eye(d, dtype=torch.float64, requires_grad=True)
    opt = Adam([m], lr=0.1)
    losses = []
    for _ in range(steps):
        batch = direction_contexts(BATCH, lipschitz, noise, n, direction, g)
        loss = ((matrix_prediction(batch, m) - batch["target"]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    learned = m.detach()
    held = direction_contexts(EVAL_TASKS, lipschitz, noise, n, direction, torch.Generator().manual_seed(50_000 + seed))
    with torch.no_grad():
        error = float(((matrix_prediction(held, learned) - held["target"]) ** 2).mean())
        iso = min(float(((matrix_prediction(held, w * torch.eye(d, dtype=torch.float64)) - held["target"]) ** 2)
                        .mean()) for w in np.logspace(-1, 2.5, 36))
    sym = ((learned + learned.T) / 2).numpy()
    return {"M": sym, "direction": direction.numpy(), "alignment": alignment(sym, direction.numpy()),
            "isotropic_alignment": 1 / math.sqrt(d), "losses": np.array(losses), "error": error,
            "isotropic_error": iso, "lipschitz": lipschitz, "d": d}
