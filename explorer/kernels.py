"""Kernel profiles for Nadaraya-Watson regression, defined once for the whole product.

Each kernel is a profile of ``u = (x - x_i) / h``. NW normalises the weights, so constant factors
do not matter and are left out. Kernels with unbounded support also give their log-profile, so that
weights can be computed as a softmax in the log domain (a tiny bandwidth never gives 0/0).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._checks import one_of


@dataclass(frozen=True)
class Kernel:
    """A kernel profile K(u) of u = (x - x_i)/h, with what the product knows about it (``KERNELS`` holds them).
    Nadaraya-Watson normalises the weights, so a profile's constant factor does not matter.

    Parameters
    ----------
    name : str
        The key used everywhere (links, the command line, tests).
    latex : str
        The profile K(u) in LaTeX.
    profile : callable
        K(u), tensor in and out.
    log_profile : callable or None
        log K(u), for the kernels without compact support (weights computed in the log domain, so a tiny h never
        gives 0/0); None for compact kernels.
    compact : bool
        True when K(u) = 0 for |u| > 1: a query with no training point within h has no estimate.
    sd : float, optional
        The standard deviation of the normalised kernel, in units of h (Gaussian 1, boxcar 1/√3, ...).
    canonical : float, optional
        The canonical bandwidth (R(K) / μ₂(K)²)^(1/5) of Marron & Nolan (1988): equal canonical widths make kernels
        of different shapes comparable.
    dot_product : bool
        log K((x - x_i)/h) = x·x_i/h² + terms of x or x_i alone (the Gaussian): the fast paths may use a matrix
        product.
    fast : str, optional
        The ``explorer.fastsum`` family that sums this kernel in linear time: "gauss", "laplace" or "polynomial".
    poly : tuple, optional
        Polynomial kernels: the coefficients (c0, c1, c2) of K in d = (x - x_i)/h for x_i <= x and for x_i > x,
        and whether |u| = 1 is inside the support.

    Examples
    --------
    >>> import torch
    >>> k = get_kernel("epanechnikov")
    >>> k(torch.tensor([0.0, 0.5, 2.0])).tolist(), k.compact
    ([1.0, 0.75, 0.0], True)
    """

    name: str                      # key used everywhere (URLs, CLI, tests)
    latex: str                     # the profile K(u) as LaTeX
    profile: Callable[[torch.Tensor], torch.Tensor]
    log_profile: Callable[[torch.Tensor], torch.Tensor] | None  # None for compact kernels
    compact: bool                  # True when K(u) = 0 for |u| > 1
    sd: float | None = None        # standard deviation of the normalised kernel, in units of h
    canonical: float | None = None  # canonical bandwidth (R(K) / mu_2(K)^2)^(1/5) (Marron & Nolan 1988)
    # what the fast paths of explorer.regression may use (capabilities, so no code tests a kernel's name):
    dot_product: bool = False      # log K((x - x_i)/h) = x·x_i/h² + terms of x or x_i alone (Gaussian)
    fast: str | None = None        # the explorer.fastsum family: "gauss", "laplace" or "polynomial"
    poly: tuple | None = None      # polynomial kernels: coefficients (c0, c1, c2) of K in d = (x - x_i)/h
                                   # for x_i <= x and for x_i > x, and whether |u| = 1 is inside

    def __call__(self, u: torch.Tensor) -> torch.Tensor:
        return self.profile(u)


def _gaussian_log(u: torch.Tensor) -> torch.Tensor:
    return -0.5 * u * u


def _laplace_log(u: torch.Tensor) -> torch.Tensor:
    return -u.abs()


KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in (
        Kernel("gaussian", r"K(u) = \exp\left(-\tfrac{u^2}{2}\right)",
               lambda u: torch.exp(_gaussian_log(u)), _gaussian_log, compact=False,
               sd=1.0, canonical=(1 / (2 * math.sqrt(math.pi))) ** 0.2, dot_product=True, fast="gauss"),
        Kernel("boxcar", r"K(u) = \mathbf{1}[\,|u| \le 1\,]",
               lambda u: (u.abs() <= 1).to(u.dtype), None, compact=True,
               sd=1 / math.sqrt(3), canonical=(0.5 / (1 / 3) ** 2) ** 0.2, fast="polynomial",
               poly=((1.0, 0.0, 0.0), (1.0, 0.0, 0.0), True)),
        Kernel("constant", r"K(u) = 1",
               lambda u: torch.ones_like(u), lambda u: torch.zeros_like(u), compact=False),
        Kernel("epanechnikov", r"K(u) = \max(0,\ 1 - u^2)",
               lambda u: (1 - u * u).clamp_min(0), None, compact=True,
               sd=1 / math.sqrt(5), canonical=(0.6 / 0.2 ** 2) ** 0.2, fast="polynomial",
               poly=((1.0, 0.0, -1.0), (1.0, 0.0, -1.0), False)),
        Kernel("triangular", r"K(u) = \max(0,\ 1 - |u|)",
               lambda u: (1 - u.abs()).clamp_min(0), None, compact=True,
               sd=1 / math.sqrt(6), canonical=((2 / 3) / (1 / 6) ** 2) ** 0.2, fast="polynomial",
               poly=((1.0, -1.0, 0.0), (1.0, 1.0, 0.0), False)),
        Kernel("laplace", r"K(u) = \exp(-|u|)",
               lambda u: torch.exp(_laplace_log(u)), _laplace_log, compact=False,
               sd=math.sqrt(2), canonical=(0.25 / 2 ** 2) ** 0.2, fast="laplace"),
    )
}


def get_kernel(name: str) -> Kernel:
    """Look a kernel up by name.

    Parameters
    ----------
    name : str
        One of ``KERNELS``: gaussian, boxcar, constant, epanechnikov, triangular, laplace.

    Returns
    -------
    Kernel
        Its profile K(u) (K(0) = 1), log-profile, support and capabilities.

    Examples
    --------
    >>> import torch
    >>> get_kernel("epanechnikov")(torch.tensor([0.0, 0.5, 2.0])).tolist()
    [1.0, 0.75, 0.0]
    >>> get_kernel("nope")
    Traceback (most recent call last):
    ...
    ValueError: kernel must be one of gaussian, boxcar, constant, epanechnikov, triangular, laplace; got 'nope'.
    """
    return KERNELS[one_of(name, KERNELS, "kernel")]


def equivalent_bandwidth(h: float, kernel: str, reference: str = "gaussian") -> float:
    """The bandwidth that gives ``kernel`` the same effective width as ``reference`` has at ``h``.

    Kernels are compared through their canonical bandwidths δ_K = (R(K) / μ₂(K)²)^(1/5) (Marron & Nolan
    1988): h_K = h · δ_K / δ_reference. At equal canonical width, two kernels have the same asymptotic
    bias-variance trade-off, so their leave-one-out optima nearly coincide.

    Parameters
    ----------
    h : float
        The reference kernel's bandwidth.
    kernel, reference : str
        Kernels with a finite canonical bandwidth (not "constant").

    Returns
    -------
    float

    Examples
    --------
    >>> round(equivalent_bandwidth(1.0, "epanechnikov"), 4)
    2.2138
    >>> equivalent_bandwidth(0.3, "gaussian")
    0.3
    """
    k, ref = get_kernel(kernel), get_kernel(reference)
    if k.canonical is None or ref.canonical is None:
        return float(h)
    return float(h) * k.canonical / ref.canonical


def ignores_h(kernel: str) -> bool:
    """Whether ``kernel`` gives every point the same weight whatever the bandwidth (the constant kernel): its fit,
    leave-one-out curve, "optimum" and weight rows do not depend on h.

    Parameters
    ----------
    kernel : str
        A name in ``KERNELS``.

    Returns
    -------
    bool

    Examples
    --------
    >>> ignores_h("constant"), ignores_h("boxcar")
    (True, False)
    """
    return get_kernel(kernel).canonical is None
