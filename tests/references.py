"""Independent references that tests in several directories compare the package against."""

import math

import numpy as np


def loo_error(x, y, kernel: str, h: float) -> float:
    """The leave-one-out mean squared error of Nadaraya-Watson with ``kernel`` at bandwidth ``h``: the n × n weights
    written out in numpy from the textbook kernels, each point's own weight removed, the Gaussian and Laplace ones
    from their log-weights less each row's largest (so a tiny h gives the nearest neighbours' mean, not 0/0); inf
    when some point has no other point within reach of a compact kernel. (tests/lessons/test_kernel_regression.py
    checks it against the loop over the points.)"""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    u = (x[:, None] - x[None, :]) / h
    if kernel in ("gaussian", "laplace"):
        logw = -u * u / 2 if kernel == "gaussian" else -np.abs(u)
        np.fill_diagonal(logw, -np.inf)
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
    else:
        w = {"boxcar": (np.abs(u) <= 1) * 1.0, "epanechnikov": np.clip(1 - u * u, 0, None),
             "triangular": np.clip(1 - np.abs(u), 0, None)}[kernel]
        np.fill_diagonal(w, 0.0)
    total = w.sum(axis=1)
    if (total == 0).any():
        return math.inf
    return float(np.mean((w @ y / total - y) ** 2))
