"""Softmax attention learns its bandwidth in context (Collins et al., 2024, arXiv 2402.11639), on the circle.

Tasks: functions on the unit circle, f(θ) = L·g(θ) / max|g'|, where g is a random trigonometric polynomial of
degree ``DEGREE`` (coefficients N(0, 1/k²)): every task has largest slope exactly L in the angle θ (the maximum is
taken on a grid of ``SLOPE_GRID`` angles). A context is n points θᵢ uniform on the circle with labels
yᵢ = f(θᵢ) + σ·ε; the query θ is uniform too, and the target is f(θ) (noise-free).

Model: one attention unit on the inputs xᵢ = (cos θᵢ, sin θᵢ) with key-query matrix M = w·I,

    f̂(x) = Σᵢ yᵢ · softmax_i(w · xᵢᵀx),

trained by gradient descent on the in-context squared error over fresh tasks. On unit vectors
xᵢᵀx = 1 − ‖x − xᵢ‖²/2, and the factor exp(w) cancels in the softmax, so the unit *is* Nadaraya-Watson with the
Gaussian kernel on the chord distance ‖x − xᵢ‖ = 2 sin(|θ − θᵢ|/2) and bandwidth h = 1/√w, exactly (``window``).
Linear attention, f̂(x) = (w/n) Σᵢ yᵢ xᵢᵀx, is trained the same way: it has no window to adapt.

Tasks that vary along one direction of a sphere, learned by a full key-query matrix: ``explorer.incontext_direction``.

References on the same tasks: the oracle bandwidth (the h of Gaussian NW on the chord distance with the lowest
mean error over ``ORACLE_TASKS`` tasks, searched on a log grid), and the bandwidth leave-one-out picks on each
context alone (the same grid and distance), whose median is reported.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ._adam import Adam

DEGREE = 6                 # the tasks' trigonometric polynomials: frequencies 1 to 6
SLOPE_GRID = 512           # angles on which each task's largest slope is made exactly L
STEPS = 120                # gradient steps of one training run
BATCH = 96                 # tasks per step
EVAL_TASKS = 2048          # tasks the reported errors average over (one fixed draw per seed)
ORACLE_TASKS = 2048
H_GRID = np.logspace(-2.5, 1, 71)
LIPSCHITZ = (0.5, 1.0, 2.0, 4.0, 8.0)      # the lesson's grid of L: a factor 16


@functools.lru_cache(maxsize=1)
def _slope_basis() -> tuple[torch.Tensor, torch.Tensor]:
    """d/dθ of cos kθ and sin kθ on the slope grid: (degree, grid) each."""
    k = torch.arange(1, DEGREE + 1, dtype=torch.float64)[:, None]
    grid = torch.linspace(0, 2 * math.pi, SLOPE_GRID + 1, dtype=torch.float64)[:-1]
    return -k * torch.sin(k * grid), k * torch.cos(k * grid)


def tasks(n_tasks: int, lipschitz: float, generator: torch.Generator):
    """Random functions of largest slope ``lipschitz``: (a, b, k) with f(θ) = Σ_k a_k cos kθ + b_k sin kθ.

    Parameters
    ----------
    n_tasks : int
    lipschitz : float
        L: every task's largest slope |f'(θ)| (on ``SLOPE_GRID`` angles).
    generator : torch.Generator

    Returns
    -------
    (a, b, k) : (torch.Tensor (n_tasks, DEGREE), torch.Tensor (n_tasks, DEGREE), torch.Tensor (DEGREE,))

    Examples
    --------
    >>> import math, torch
    >>> a, b, k = tasks(3, 2.0, torch.Generator().manual_seed(0))
    >>> theta = torch.linspace(0, 2 * math.pi, 512 + 1, dtype=torch.float64)[:-1]
    >>> kt = k * theta[:, None]
    >>> slope = (-a[:, None] * k * torch.sin(kt) + b[:, None] * k * torch.cos(kt)).sum(-1)     # f'(θ)
    >>> [round(v, 9) for v in slope.abs().amax(1).tolist()]
    [2.0, 2.0, 2.0]
    """
    k = torch.arange(1, DEGREE + 1, dtype=torch.float64)
    a = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    b = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    d_cos, d_sin = _slope_basis()
    scale = lipschitz / (a @ d_cos + b @ d_sin).abs().amax(dim=1, keepdim=True)
    return a * scale, b * scale, k


def evaluate(a, b, k, theta):
    """f(θ) for each task (rows) at the angles ``theta`` (tasks × points).

    Parameters
    ----------
    a, b, k : torch.Tensor
        As ``tasks`` returns them.
    theta : torch.Tensor, shape (n_tasks, points)

    Returns
    -------
    torch.Tensor, shape (n_tasks, points)

    Examples
    --------
    >>> import torch
    >>> a, b = torch.tensor([[1.0, 0.0]], dtype=torch.float64), torch.tensor([[0.0, 0.5]], dtype=torch.float64)
    >>> theta = torch.tensor([[0.0, math.pi / 4]], dtype=torch.float64)
    >>> evaluate(a, b, torch.tensor([1.0, 2.0], dtype=torch.float64), theta)[0].tolist()   # cos θ + 0.5 sin 2θ
    [1.0, 1.2071067811865475]
    """
    return (a[:, None, :] * torch.cos(k * theta[..., None]) + b[:, None, :] * torch.sin(k * theta[..., None])).sum(-1)


def draw_contexts(n_tasks: int, lipschitz: float, noise: float, n: int, generator: torch.Generator) -> dict:
    """A batch of in-context problems: context angles and noisy labels, a query angle and its true value.

    Parameters
    ----------
    n_tasks : int
    lipschitz : float
    noise : float
        σ of the label noise.
    n : int
        Context points per task.
    generator : torch.Generator

    Returns
    -------
    dict
        ``theta`` (n_tasks, n), ``y`` (n_tasks, n), ``query`` (n_tasks,), ``target`` (n_tasks,).

    Examples
    --------
    >>> import torch
    >>> batch = draw_contexts(4, 1.0, 0.3, 16, torch.Generator().manual_seed(0))
    >>> {name: tuple(v.shape) for name, v in batch.items()}
    {'theta': (4, 16), 'y': (4, 16), 'query': (4,), 'target': (4,)}
    """
    a, b, k = tasks(n_tasks, lipschitz, generator)
    theta = torch.rand(n_tasks, n + 1, generator=generator, dtype=torch.float64) * 2 * math.pi
    clean = evaluate(a, b, k, theta)
    y = clean[:, :n] + noise * torch.randn(n_tasks, n, generator=generator, dtype=torch.float64)
    return {"theta": theta[:, :n], "y": y, "query": theta[:, n], "target": clean[:, n]}


def softmax_prediction(batch: dict, w: torch.Tensor) -> torch.Tensor:
    """The softmax unit with M = w·I on x = (cos θ, sin θ): xᵢᵀx = cos(θᵢ − θ).

    Parameters
    ----------
    batch : dict
        As ``draw_contexts`` returns it.
    w : torch.Tensor or float
        The unit's weight, > 0.

    Returns
    -------
    torch.Tensor, shape (n_tasks,)

    Examples
    --------
    >>> import torch
    >>> batch = draw_contexts(4, 1.0, 0.3, 16, torch.Generator().manual_seed(0))
    >>> bool(torch.allclose(softmax_prediction(batch, torch.tensor(25.0)), nw_chord(batch, window(25.0))))
    True
    """
    sim = torch.cos(batch["theta"] - batch["query"][:, None])
    return (torch.softmax(w * sim, dim=1) * batch["y"]).sum(1)


def linear_prediction(batch: dict, w: torch.Tensor) -> torch.Tensor:
    """Linear attention, f̂(x) = (w/n) Σᵢ yᵢ xᵢᵀx: no softmax, so no window to adapt.

    Parameters
    ----------
    batch : dict
        As ``draw_contexts`` returns it.
    w : torch.Tensor or float

    Returns
    -------
    torch.Tensor, shape (n_tasks,)

    Examples
    --------
    >>> import torch
    >>> batch = draw_contexts(2, 1.0, 0.0, 8, torch.Generator().manual_seed(0))
    >>> tuple(linear_prediction(batch, torch.tensor(1.0)).shape)
    (2,)
    """
    sim = torch.cos(batch["theta"] - batch["query"][:, None])
    return w * (sim * batch["y"]).mean(1)


def window(w: float) -> float:
    """The bandwidth of the Gaussian kernel the softmax unit with M = w·I is, on unit vectors: 1/√w.

    Parameters
    ----------
    w : float
        > 0.

    Returns
    -------
    float

    Examples
    --------
    >>> window(4.0), window(100.0)
    (0.5, 0.1)
    """
    return 1.0 / math.sqrt(w)


def nw_chord(batch: dict, h: float) -> torch.Tensor:
    """Gaussian NW on the chord distance with bandwidth h (= the softmax unit with w = 1/h²).

    Parameters
    ----------
    batch : dict
        As ``draw_contexts`` returns it.
    h : float

    Returns
    -------
    torch.Tensor, shape (n_tasks,)

    Examples
    --------
    >>> import torch
    >>> batch = draw_contexts(3, 1.0, 0.0, 12, torch.Generator().manual_seed(0))
    >>> wide = nw_chord(batch, 100.0)                      # a very wide window: the context's mean label
    >>> bool(torch.allclose(wide, batch["y"].mean(1), atol=1e-4))
    True
    """
    chord2 = 2 - 2 * torch.cos(batch["theta"] - batch["query"][:, None])
    return (torch.softmax(-chord2 / (2 * h * h), dim=1) * batch["y"]).sum(1)


def train(lipschitz: float, noise: float, n: int, seed: int = 0, kind: str = "softmax", steps: int = STEPS) -> dict:
    """Train w (softmax: w = exp(s), so it stays positive) on fresh tasks; the learned w, its window, the loss
    curve and the in-context error on a fixed evaluation draw.

    Parameters
    ----------
    lipschitz : float
    noise : float
    n : int
    seed : int
    kind : {"softmax", "linear"}
    steps : int

    Returns
    -------
    dict
        ``w``, ``window`` (NaN for linear attention), ``losses`` (one per step) and ``error``.

    Examples
    --------
    >>> result = train(2.0, 0.3, 32, seed=0, steps=20)
    >>> len(result["losses"]), result["window"] == window(result["w"])
    (20, True)
    """
    g = torch.Generator().manual_seed(seed)
    s = torch.tensor(0.0 if kind == "softmax" else 1.0, dtype=torch.float64, requires_grad=True)
    opt = Adam([s], lr=0.1)
    predict = softmax_prediction if kind == "softmax" else linear_prediction
    param = (lambda: s.exp()) if kind == "softmax" else (lambda: s)
    losses = []
    for _ in range(steps):
        batch = draw_contexts(BATCH, lipschitz, noise, n, g)
        loss = ((predict(batch, param()) - batch["target"]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    w = float(param().detach())
    held = draw_contexts(EVAL_TASKS, lipschitz, noise, n, torch.Generator().manual_seed(10_000 + seed))
    with torch.no_grad():
        err = float(((predict(held, torch.tensor(w, dtype=torch.float64)) - held["target"]) ** 2).mean())
    return {"w": w, "window": window(w) if kind == "softmax" else math.nan, "losses": np.array(losses),
            "error": err}


def oracle_bandwidth(lipschitz: float, noise: float, n: int, seed: int = 0) -> dict:
    """The NW bandwidth (chord distance) with the lowest mean error over ``ORACLE_TASKS`` tasks, and the curve.

    Parameters
    ----------
    lipschitz, noise : float
    n : int
    seed : int

    Returns
    -------
    dict
        ``h`` (a value of ``H_GRID``), its ``error``, and the ``curve`` of errors over ``H_GRID``.

    Examples
    --------
    >>> steep, flat = oracle_bandwidth(8.0, 0.3, 32), oracle_bandwidth(0.5, 0.3, 32)
    >>> steep["h"] < flat["h"]                              # steeper tasks want a narrower window
    True
    """
    batch = draw_contexts(ORACLE_TASKS, lipschitz, noise, n, torch.Generator().manual_seed(20_000 + seed))
    errors = np.array([float(((nw_chord(batch, h) - batch["target"]) ** 2).mean()) for h in H_GRID])
    i = int(np.argmin(errors))
    return {"h": float(H_GRID[i]), "error": float(errors[i]), "curve": errors}


def loo_bandwidth(lipschitz: float, noise: float, n: int, seed: int = 0, contexts: int = 64) -> float:
    """The median over ``contexts`` contexts of the bandwidth leave-one-out picks on each: each context point
    predicted by Gaussian NW on the chord distance from the others, the h of ``H_GRID`` with the lowest error.
    (On the circle, not the line: ``explorer.bandwidth.select_bandwidth`` measures |θ − θᵢ| without the wrap.)

    Parameters
    ----------
    lipschitz, noise : float
    n : int
    seed : int
    contexts : int

    Returns
    -------
    float

    Examples
    --------
    >>> h = loo_bandwidth(2.0, 0.3, 32, contexts=16)
    >>> bool(H_GRID[0] <= h <= H_GRID[-1])
    True
    """
    batch = draw_contexts(contexts, lipschitz, noise, n, torch.Generator().manual_seed(30_000 + seed))
    theta, y = batch["theta"], batch["y"]
    chord2 = 2 - 2 * torch.cos(theta[:, :, None] - theta[:, None, :])                  # (contexts, n, n)
    chord2 = chord2.masked_fill(torch.eye(n, dtype=torch.bool), math.inf)             # a point never sees itself
    # one bandwidth at a time: (contexts, n, n) stays in cache where all 71 at once took 600 MB at n = 128
    errors = torch.stack([(((torch.softmax(chord2 / (-2 * h * h), dim=-1) * y[:, None, :]).sum(-1) - y) ** 2).mean(-1)
                          for h in H_GRID.tolist()])                                     # (h, contexts)
    return float(np.median(H_GRID[errors.argmin(0).numpy()]))


def grid_point(lipschitz: float, noise: float, n: int, seed: int = 0, steps: int = STEPS) -> dict:
    """One setting of the lesson's table: the softmax unit and linear attention trained on its tasks, their
    in-context errors, and the oracle and leave-one-out bandwidths beside the learned window.

    Parameters
    ----------
    lipschitz, noise : float
    n : int
    seed : int
    steps : int

    Returns
    -------
    dict
        ``L``, ``noise``, ``n``, ``seed``, ``w``, ``window``, ``loo``, ``oracle``, ``softmax_error``,
        ``linear_error``, ``oracle_error``.

    Examples
    --------
    >>> row = grid_point(2.0, 0.3, 32, steps=10)
    >>> sorted(row)[:4], row["oracle_error"] <= row["softmax_error"] + 1e-3
    (['L', 'linear_error', 'loo', 'n'], True)
    """
    soft, lin = train(lipschitz, noise, n, seed, steps=steps), train(lipschitz, noise, n, seed, "linear", steps)
    oracle = oracle_bandwidth(lipschitz, noise, n, seed)
    return {"L": lipschitz, "noise": noise, "n": n, "seed": seed, "w": soft["w"], "window": soft["window"],
            "loo": loo_bandwidth(lipschitz, noise, n, seed), "oracle": oracle["h"],
            "softmax_error": soft["error"], "linear_error": lin["error"], "oracle_error": oracle["error"]}
