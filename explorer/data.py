"""Seeded toy datasets for the kernel-regression pages.

Each dataset is defined once here (``DATASETS``); pages and the CLI enumerate this dict.
Arrays are float64 numpy, x sorted ascending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._checks import integer_in

MAX_POINTS = 20_000


@dataclass(frozen=True)
class Dataset:
    name: str
    x: np.ndarray                                 # (N,) sorted inputs
    y: np.ndarray                                 # (N,) noisy targets
    true_fn: Callable[[np.ndarray], np.ndarray] | None  # noise-free function, None for uploaded data
    x_range: tuple[float, float]                  # the interval x was drawn from (for plotting)
    description: str


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    display: str
    formula: str                                  # LaTeX
    true_fn: Callable[[np.ndarray], np.ndarray]
    x_range: tuple[float, float]
    default_n: int
    default_noise: float


def _sine_mix(x: np.ndarray) -> np.ndarray:
    return np.sin(x) + 0.5 * np.sin(2 * x)


def _d2l(x: np.ndarray) -> np.ndarray:
    return 2 * np.sin(x) + x


DATASETS: dict[str, DatasetSpec] = {
    "sine_mix": DatasetSpec("sine_mix", "Sine mix", r"y = \sin x + 0.5 \sin 2x + \varepsilon",
                            _sine_mix, (-3.0, 3.0), 200, 0.3),
    "d2l": DatasetSpec("d2l", "D2L 11.2", r"y = 2 \sin x + x + \varepsilon",
                       _d2l, (0.0, 5.0), 40, 1.0),
}


def make_dataset(name: str = "sine_mix", n: int | None = None, noise: float | None = None,
                 seed: int = 0) -> Dataset:
    """Draw ``n`` points x ~ U(x_range), sorted, with y = f(x) + N(0, noise²).

    The same (name, n, noise, seed) always gives the same arrays.
    """
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {', '.join(DATASETS)}; got {name!r}.")
    spec = DATASETS[name]
    n = spec.default_n if n is None else integer_in(n, "n", 2, MAX_POINTS)
    noise = spec.default_noise if noise is None else float(noise)
    if not np.isfinite(noise) or noise < 0 or noise > 10:
        raise ValueError(f"noise must be a standard deviation from 0 to 10, got {noise!r}.")
    seed = integer_in(seed, "seed", 0, 2**31 - 1)
    rng = np.random.default_rng(seed)
    lo, hi = spec.x_range
    x = np.sort(rng.uniform(lo, hi, size=n))
    y = spec.true_fn(x) + rng.normal(0.0, noise, size=n)
    desc = f"{spec.display}: n = {n}, noise sd = {noise:g}, seed = {seed}"
    return Dataset(name, x, y, spec.true_fn, spec.x_range, desc)


def sine_mix(n: int = 200, noise: float = 0.3, seed: int = 0) -> Dataset:
    """y = sin x + 0.5 sin 2x + ε, ε ~ N(0, noise²), x ~ U(-3, 3)."""
    return make_dataset("sine_mix", n, noise, seed)


def d2l(n: int = 40, noise: float = 1.0, seed: int = 0) -> Dataset:
    """y = 2 sin x + x + ε, ε ~ N(0, noise²), x ~ U(0, 5) sorted (D2L section 11.2)."""
    return make_dataset("d2l", n, noise, seed)


def query_grid(data: Dataset, m: int = 400) -> np.ndarray:
    """Evenly spaced query points covering the dataset's x range."""
    lo, hi = data.x_range
    return np.linspace(lo, hi, m)
