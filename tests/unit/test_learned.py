import numpy as np
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


def test_parametric_attention_beats_the_mean_and_rows_sum_to_one():
    d = data.sine_mix(seed=0, n=120)
    model, losses = learned.fit_parametric_attention(d.x, d.y, hidden=4, steps=300, seed=0)
    assert losses["loss"].iloc[-1] < 0.5 * np.var(d.y)
    x = torch.as_tensor(d.x)
    _, w = model(x, x, torch.as_tensor(d.y))
    torch.testing.assert_close(w.sum(-1), torch.ones(120, dtype=torch.float64))
