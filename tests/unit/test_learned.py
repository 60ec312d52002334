import math

import numpy as np
import pytest
import torch

from explorer import bandwidth as bw
from explorer import data, learned


def test_learned_bandwidth_with_leave_one_out_lands_near_the_loo_optimum():
    d = data.d2l(seed=0)
    grid = np.logspace(-2, 1, 60)
    h_grid = grid[int(np.argmin(bw.loo_cv_scores(d.x, d.y, "gaussian", grid).numpy()))]
    hist = learned.learn_bandwidth(d.x, d.y, leave_one_out=True, h0=2.0, steps=300)
    assert 0.5 * h_grid <= hist["h"].iloc[-1] <= 2 * h_grid
    assert hist["loss"].iloc[-1] < hist["loss"].iloc[0]


def test_bandwidth_collapses_without_leave_one_out():
    d = data.d2l(seed=0)
    hist = learned.learn_bandwidth(d.x, d.y, leave_one_out=False, h0=1.0, steps=300)
    assert hist["h"].iloc[-1] < 0.05
    assert hist["h"].is_monotonic_decreasing


def _autograd_loss(x, y, log_h, leave_one_out):
    """The NW training MSE as torch's autograd sees it: softmax of -(x_i - x_j)²/(2h²), the diagonal masked."""
    logits = -(x[:, None] - x[None, :]) ** 2 / (2 * torch.exp(2 * log_h))
    if leave_one_out:
        logits = logits.masked_fill(torch.eye(len(x), dtype=torch.bool), -math.inf)
    return ((torch.softmax(logits, dim=1) @ y - y) ** 2).mean()


def test_the_hand_written_gradient_is_autograds_at_every_bandwidth_with_and_without_leave_one_out():
    """learn_bandwidth's loss and derivative in log h, written out by hand, against autograd on the same formula: from
    h far below the points' spacing (the logits down to -1e9, where the weights are cut off at e^-700 of a row's
    largest) to h wider than the data."""
    d = data.sine_mix(seed=3, n=150)
    x, y = torch.as_tensor(d.x), torch.as_tensor(d.y)
    for leave_one_out in (True, False):
        sq = (x[:, None] - x[None, :]) ** 2
        if leave_one_out:
            sq.fill_diagonal_(0.0)
        for h in (1e-4, 3e-3, 0.05, 0.3, 2.0, 50.0):
            log_h = torch.tensor(math.log(h), dtype=torch.float64, requires_grad=True)
            expected = _autograd_loss(x, y, log_h, leave_one_out)
            expected.backward()
            loss, grad = learned._loss_and_gradient(sq.clone(), y, h * h, leave_one_out)
            reference = float(expected.detach())
            assert loss == pytest.approx(reference, rel=1e-12, abs=1e-300), (h, leave_one_out)
            assert grad == pytest.approx(float(log_h.grad), rel=1e-9, abs=1e-12 * reference), (h, leave_one_out)


def test_the_bandwidths_path_is_adams_on_autograds_gradient():
    """300 steps of torch.optim.Adam (β = 0.9, 0.9) on the autograd loss trace the h that learn_bandwidth returns."""
    d = data.sine_mix(seed=1, n=80)
    x, y = torch.as_tensor(d.x), torch.as_tensor(d.y)
    for leave_one_out in (True, False):
        log_h = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.Adam([log_h], lr=0.05, betas=(0.9, 0.9))
        path = []
        for _ in range(300):
            path.append(float(log_h.detach().exp()))
            opt.zero_grad()
            _autograd_loss(x, y, log_h, leave_one_out).backward()
            opt.step()
        path.append(float(log_h.detach().exp()))
        got = learned.learn_bandwidth(d.x, d.y, leave_one_out=leave_one_out, steps=300)["h"].to_numpy()
        np.testing.assert_allclose(got, path, rtol=1e-9)


def test_parametric_attention_beats_the_mean_and_rows_sum_to_one():
    d = data.sine_mix(seed=0, n=120)
    model, losses = learned.fit_parametric_attention(d.x, d.y, hidden=4, steps=300, seed=0)
    assert losses["loss"].iloc[-1] < 0.5 * np.var(d.y)
    x = torch.as_tensor(d.x)
    _, w = model(x, x, torch.as_tensor(d.y))
    torch.testing.assert_close(w.sum(-1), torch.ones(120, dtype=torch.float64))
