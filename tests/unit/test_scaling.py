import math

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
