import math

import numpy as np
import pytest
import torch

from explorer import scaling


@pytest.mark.parametrize("d", [16, 128, 512])
def test_unscaled_logit_std_is_sqrt_d(d):
    row = scaling.logit_stats([d]).iloc[0]
    assert abs(row["logit_std"] / math.sqrt(d) - 1) < 0.06


@pytest.mark.parametrize("d", [16, 128, 512])
def test_scaled_logit_std_is_one(d):
    assert abs(scaling.logit_stats([d], scaled=True).iloc[0]["logit_std"] - 1) < 0.06


def test_saturation_grows_with_d_unscaled_but_not_scaled():
    un = scaling.logit_stats([4, 64, 1024])
    sc = scaling.logit_stats([4, 64, 1024], scaled=True)
    assert un["max_weight"].is_monotonic_increasing and un["entropy"].is_monotonic_decreasing
    assert un["max_weight"].iloc[-1] > 0.8
    for table in (un, sc):                       # entropy of a softmax row lies in [0, log n]
        assert ((table["entropy"] >= 0) & (table["entropy"] <= math.log(scaling.DEFAULT_N) + 1e-9)).all()
    assert sc["max_weight"].max() < 0.1
    assert set(un.columns) >= {"d", "logit_std", "max_weight", "entropy", "softmax_grad_norm"}


def test_jacobian_norm_matches_autograd():
    p = torch.softmax(torch.randn(5, 9, dtype=torch.float64), -1)
    for row, norm in zip(p, scaling.softmax_jacobian_norm(p), strict=True):
        logits = torch.log(row)
        jac = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, -1), logits)
        assert float(norm) == pytest.approx(float(jac.norm()), rel=1e-10)


def test_bad_arguments():
    with pytest.raises(ValueError, match="d"):
        scaling.logit_stats([0])
    with pytest.raises(ValueError, match="empty"):
        scaling.logit_stats([])


def test_the_logit_histogram_sends_bins_whose_density_integrates_to_one():
    """The histogram is binned before it is sent: 80 bars per sample over its own range, each bar the share of
    samples in its bin over the bin's width (counted here by comparison), so each sample's bars integrate to 1."""
    from explorer.figures.scaling import logit_histogram

    rng = np.random.default_rng(0)
    un, sc = rng.normal(0, 8, 4096), rng.normal(0, 1, 4096)
    fig = logit_histogram(un, sc, 64)
    assert [tr.type for tr in fig.data] == ["bar", "bar"]
    for trace, sample in zip(fig.data, (un, sc), strict=True):
        width = (sample.max() - sample.min()) / 80
        x, y = np.asarray(trace.x, float), np.asarray(trace.y, float)
        assert len(x) == 80 and np.sum(y) * width == pytest.approx(1.0, rel=1e-5)
        i = 40
        inside = np.sum((sample >= x[i] - width / 2) & (sample < x[i] + width / 2))
        assert y[i] == pytest.approx(inside / len(sample) / width, rel=1e-4)
