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

Tasks along a direction (``SUBSPACE_DIM`` dimensions, rank 1): x uniform on the unit sphere, f(x) = g(bᵀx) with b a
unit vector drawn once per seed and g(u) = Σ_k a_k cos(kπu/2) + b_k sin(kπu/2) on u ∈ [−1, 1], scaled so that
max|g′| = L (so f is L-Lipschitz in x and exactly that steep along b). The unit there has a full key-query matrix
M, f̂(x) = Σᵢ yᵢ softmax_i(xᵢᵀMx), trained the same way from M = I; ``alignment`` is the cosine between M's
symmetric part and bbᵀ in the Frobenius inner product (1: M = c·bbᵀ; 1/√d: M = c·I, blind to the direction).

References on the same tasks: the oracle bandwidth (the h of Gaussian NW on the chord distance with the lowest
mean error over ``ORACLE_TASKS`` tasks, searched on a log grid), and the bandwidth leave-one-out picks on each
context alone (the same grid and distance), whose median is reported.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

DEGREE = 6                 # the tasks' trigonometric polynomials: frequencies 1 to 6
SLOPE_GRID = 512           # angles on which each task's largest slope is made exactly L
STEPS = 120                # gradient steps of one training run
BATCH = 96                 # tasks per step
EVAL_TASKS = 2048          # tasks the reported errors average over (one fixed draw per seed)
ORACLE_TASKS = 2048
H_GRID = np.logspace(-2.5, 1, 71)
LIPSCHITZ = (0.5, 1.0, 2.0, 4.0, 8.0)      # the lesson's grid of L: a factor 16
SUBSPACE_DIM = 8           # the sphere the direction tasks live on


@functools.lru_cache(maxsize=1)
def _slope_basis() -> tuple[torch.Tensor, torch.Tensor]:
    """d/dθ of cos kθ and sin kθ on the slope grid: (degree, grid) each."""
    k = torch.arange(1, DEGREE + 1, dtype=torch.float64)[:, None]
    grid = torch.linspace(0, 2 * math.pi, SLOPE_GRID + 1, dtype=torch.float64)[:-1]
    return -k * torch.sin(k * grid), k * torch.cos(k * grid)


def tasks(n_tasks: int, lipschitz: float, generator: torch.Generator):
    """Random functions of largest slope ``lipschitz``: (a, b, k) with f(θ) = Σ_k a_k cos kθ + b_k sin kθ."""
    k = torch.arange(1, DEGREE + 1, dtype=torch.float64)
    a = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    b = torch.randn(n_tasks, DEGREE, generator=generator, dtype=torch.float64) / k
    d_cos, d_sin = _slope_basis()
    scale = lipschitz / (a @ d_cos + b @ d_sin).abs().amax(dim=1, keepdim=True)
    return a * scale, b * scale, k


def evaluate(a, b, k, theta):
    """f(θ) for each task (rows) at the angles ``theta`` (tasks × points)."""
    return (a[:, None, :] * torch.cos(k * theta[..., None]) + b[:, None, :] * torch.sin(k * theta[..., None])).sum(-1)


def draw_contexts(n_tasks: int, lipschitz: float, noise: float, n: int, generator: torch.Generator) -> dict:
    """A batch of in-context problems: context angles and noisy labels, a query angle and its true value."""
    a, b, k = tasks(n_tasks, lipschitz, generator)
    theta = torch.rand(n_tasks, n + 1, generator=generator, dtype=torch.float64) * 2 * math.pi
    clean = evaluate(a, b, k, theta)
    y = clean[:, :n] + noise * torch.randn(n_tasks, n, generator=generator, dtype=torch.float64)
    return {"theta": theta[:, :n], "y": y, "query": theta[:, n], "target": clean[:, n]}


def softmax_prediction(batch: dict, w: torch.Tensor) -> torch.Tensor:
    """The softmax unit with M = w·I on x = (cos θ, sin θ): xᵢᵀx = cos(θᵢ − θ)."""
    sim = torch.cos(batch["theta"] - batch["query"][:, None])
    return (torch.softmax(w * sim, dim=1) * batch["y"]).sum(1)


def linear_prediction(batch: dict, w: torch.Tensor) -> torch.Tensor:
    sim = torch.cos(batch["theta"] - batch["query"][:, None])
    return w * (sim * batch["y"]).mean(1)


def window(w: float) -> float:
    """The bandwidth of the Gaussian kernel the softmax unit with M = w·I is, on unit vectors: 1/√w."""
    return 1.0 / math.sqrt(w)


def nw_chord(batch: dict, h: float) -> torch.Tensor:
    """Gaussian NW on the chord distance with bandwidth h (= the softmax unit with w = 1/h²)."""
    chord2 = 2 - 2 * torch.cos(batch["theta"] - batch["query"][:, None])
    return (torch.softmax(-chord2 / (2 * h * h), dim=1) * batch["y"]).sum(1)


def train(lipschitz: float, noise: float, n: int, seed: int = 0, kind: str = "softmax", steps: int = STEPS) -> dict:
    """Train w (softmax: w = exp(s), so it stays positive) on fresh tasks; the learned w, its window, the loss
    curve and the in-context error on a fixed evaluation draw."""
    g = torch.Generator().manual_seed(seed)
    s = torch.tensor(0.0 if kind == "softmax" else 1.0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([s], lr=0.1)
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
    """The NW bandwidth (chord distance) with the lowest mean error over ``ORACLE_TASKS`` tasks, and the curve."""
    batch = draw_contexts(ORACLE_TASKS, lipschitz, noise, n, torch.Generator().manual_seed(20_000 + seed))
    errors = np.array([float(((nw_chord(batch, h) - batch["target"]) ** 2).mean()) for h in H_GRID])
    i = int(np.argmin(errors))
    return {"h": float(H_GRID[i]), "error": float(errors[i]), "curve": errors}


def loo_bandwidth(lipschitz: float, noise: float, n: int, seed: int = 0, contexts: int = 64) -> float:
    """The median over ``contexts`` contexts of the bandwidth leave-one-out picks on each: each context point
    predicted by Gaussian NW on the chord distance from the others, the h of ``H_GRID`` with the lowest error.
    (On the circle, not the line: ``explorer.bandwidth.select_bandwidth`` measures |θ − θᵢ| without the wrap.)"""
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
    in-context errors, and the oracle and leave-one-out bandwidths beside the learned window."""
    soft, lin = train(lipschitz, noise, n, seed, steps=steps), train(lipschitz, noise, n, seed, "linear", steps)
    oracle = oracle_bandwidth(lipschitz, noise, n, seed)
    return {"L": lipschitz, "noise": noise, "n": n, "seed": seed, "w": soft["w"], "window": soft["window"],
            "loo": loo_bandwidth(lipschitz, noise, n, seed), "oracle": oracle["h"],
            "softmax_error": soft["error"], "linear_error": lin["error"], "oracle_error": oracle["error"]}


# --------------------------------------------------------------------------- tasks that vary along one direction
def sphere(shape: tuple[int, ...], d: int, generator: torch.Generator) -> torch.Tensor:
    """Points uniform on the unit sphere in d dimensions: ``shape`` × d."""
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
    """In-context problems on the sphere whose functions vary along ``direction`` only (module docstring)."""
    a, b, k = _direction_profile(n_tasks, lipschitz, generator)
    x = sphere((n_tasks, n + 1), len(direction), generator)
    clean = evaluate(a, b, k, x @ direction)
    y = clean[:, :n] + noise * torch.randn(n_tasks, n, generator=generator, dtype=torch.float64)
    return {"x": x[:, :n], "y": y, "query": x[:, n], "target": clean[:, n]}


def matrix_prediction(batch: dict, m: torch.Tensor) -> torch.Tensor:
    """The softmax unit with a full key-query matrix: Σᵢ yᵢ softmax_i(xᵢᵀ M x)."""
    logits = torch.einsum("tnd,de,te->tn", batch["x"], m, batch["query"])
    return (torch.softmax(logits, dim=1) * batch["y"]).sum(1)


def alignment(m: np.ndarray, direction: np.ndarray) -> float:
    """cos∠(sym(M), bbᵀ) in the Frobenius inner product (module docstring)."""
    sym, target = (m + m.T) / 2, np.outer(direction, direction)
    return float((sym * target).sum() / (np.linalg.norm(sym) * np.linalg.norm(target)))


def train_direction(lipschitz: float, noise: float, n: int, seed: int = 0, d: int = SUBSPACE_DIM,
                    steps: int = STEPS) -> dict:
    """Train the full M on tasks along a direction b drawn from ``seed``: M (symmetric part), b, the alignment,
    the loss curve, and the in-context error of the trained M and of the best M = w·I on a fixed draw."""
    g = torch.Generator().manual_seed(seed)
    direction = sphere((), d, g)
    m = torch.eye(d, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([m], lr=0.1)
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
