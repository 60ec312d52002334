import math

import numpy as np
import pytest
import torch

from explorer import data
from explorer.device import get_device
from explorer.kernels import KERNELS, get_kernel

# Independent closed forms of every profile, written with numpy.
REFERENCE = {
    "gaussian": lambda u: np.exp(-u ** 2 / 2),
    "boxcar": lambda u: (np.abs(u) <= 1).astype(float),
    "constant": lambda u: np.ones_like(u),
    "epanechnikov": lambda u: np.maximum(0, 1 - u ** 2),
    "triangular": lambda u: np.maximum(0, 1 - np.abs(u)),
    "laplace": lambda u: np.exp(-np.abs(u)),
}


def test_every_kernel_has_a_reference_and_metadata():
    assert set(KERNELS) == set(REFERENCE)
    for k in KERNELS.values():
        assert k.latex.startswith("K(u)")


@pytest.mark.parametrize("name", list(REFERENCE))
def test_profiles_match_closed_forms(name):
    u = np.linspace(-3, 3, 121)
    got = KERNELS[name].profile(torch.as_tensor(u)).numpy()
    np.testing.assert_allclose(got, REFERENCE[name](u), atol=1e-12)
    if KERNELS[name].log_profile is not None:
        np.testing.assert_allclose(KERNELS[name].log_profile(torch.as_tensor(u)).exp().numpy(),
                                   REFERENCE[name](u), atol=1e-12)


@pytest.mark.parametrize("name", [k for k in KERNELS if KERNELS[k].poly])
def test_polynomial_capability_matches_the_profile(name):
    """``poly`` (read by the fast sums) is the kernel itself: c0 + c1 d + c2 d² on each side of the query."""
    left, right, closed = KERNELS[name].poly
    d = np.linspace(0, 0.999, 50)
    for coef, side in ((left, d), (right, -d)):
        np.testing.assert_allclose(coef[0] + coef[1] * side + coef[2] * side ** 2, REFERENCE[name](side), atol=1e-12)
    assert closed == bool(REFERENCE[name](np.array([1.0]))[0] > 0)


def test_dot_product_capability_means_a_quadratic_log_profile():
    """``dot_product`` kernels have log K(u) = -u²/2 · c, so log K((x - x_i)/h) splits into x·x_i and terms
    of one variable alone (the rank-2 rewrite); the others do not."""
    u = torch.linspace(-3, 3, 61, dtype=torch.float64)
    for name, k in KERNELS.items():
        quadratic = k.log_profile is not None and torch.allclose(k.log_profile(u), k.log_profile(torch.ones(1)) * u * u)
        assert k.dot_product == bool(quadratic and float(k.log_profile(torch.ones(1))) < 0), name


def test_epanechnikov_is_not_the_triangular_kernel():
    u = torch.tensor([0.5])
    assert float(get_kernel("epanechnikov")(u)) == pytest.approx(0.75)
    assert float(get_kernel("triangular")(u)) == pytest.approx(0.5)


def test_unknown_kernel_is_a_value_error():
    with pytest.raises(ValueError, match="kernel must be one of"):
        get_kernel("epanechikov")


def test_sine_mix_matches_its_definition():
    d = data.sine_mix(seed=3)
    assert d.x.shape == (200,) and np.all(np.diff(d.x) >= 0)
    assert d.x.min() >= -3 and d.x.max() <= 3
    residual = d.y - (np.sin(d.x) + 0.5 * np.sin(2 * d.x))
    assert abs(residual.std() - 0.3) < 0.06  # noise sd 0.3, 200 draws


def test_d2l_matches_its_definition():
    d = data.d2l(seed=1)
    assert d.x.shape == (40,) and np.all(np.diff(d.x) >= 0)
    assert d.x.min() >= 0 and d.x.max() <= 5
    np.testing.assert_allclose(d.true_fn(np.array([1.0])), [2 * math.sin(1.0) + 1.0])


def test_datasets_are_seeded():
    a, b, c = data.sine_mix(seed=7), data.sine_mix(seed=7), data.sine_mix(seed=8)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.y, c.y)
    assert data.make_dataset("d2l", n=15, noise=0.0, seed=2).y.shape == (15,)
    np.testing.assert_allclose(data.make_dataset("d2l", noise=0.0).y,
                               data.make_dataset("d2l", noise=0.0).true_fn(data.make_dataset("d2l").x))


@pytest.mark.parametrize("kwargs, word", [({"name": "nope"}, "dataset"), ({"n": 1}, "n"),
                                          ({"noise": -1}, "noise"), ({"seed": -3}, "seed")])
def test_bad_dataset_arguments(kwargs, word):
    with pytest.raises(ValueError, match=word):
        data.make_dataset(**kwargs)


def test_device_override(monkeypatch):
    monkeypatch.setenv("EXPLORER_DEVICE", "cpu")
    assert get_device().type == "cpu"
    monkeypatch.setenv("EXPLORER_DEVICE", "tpu")
    with pytest.raises(ValueError, match="EXPLORER_DEVICE"):
        get_device()
    monkeypatch.delenv("EXPLORER_DEVICE")
    assert get_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
