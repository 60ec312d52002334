"""Claims of the Attention heatmap page, on the weight matrix it draws at its defaults."""

import math

import numpy as np
import pytest
import torch

from explorer import lessons
from explorer.attention import entropy
from explorer.bridge import nw_entropy_sweep
from explorer.data import make_dataset, query_grid
from explorer.kernels import KERNELS
from explorer.regression import nw_weights
from explorer.ui.cache import loo_optimum  # noqa: F401  (the page's cached helpers import cleanly)
from tests.app.helpers import assert_clean, chart_data, page

D = make_dataset("sine_mix", 200, 0.3, 0)
XQ = torch.linspace(float(query_grid(D)[0]), float(query_grid(D)[-1]), 100, dtype=torch.float64)
X = torch.tensor(D.x)


def test_rows_are_averages_or_empty_and_the_band_is_diagonal():
    """ah.notice, lines 1-2: rows are non-negative, sum to 1 or are all zero; a local kernel's largest
    weight sits at the key nearest the query (a diagonal band when both are sorted)."""
    for kernel in KERNELS:
        for h in (0.01, 0.2, 10.0):
            w = nw_weights(XQ, X, kernel, h)
            sums = w.sum(-1)
            assert bool((w >= 0).all())
            assert bool(((sums - 1).abs() < 1e-12).logical_or(sums == 0).all())
    w = nw_weights(XQ, X, "gaussian", 0.2)
    nearest = (XQ[:, None] - X[None, :]).abs().argmin(1)
    assert int((w.argmax(1) - nearest).abs().max()) <= 3
    assert bool((w.argmax(1).diff() >= 0).all())                   # the band runs down the diagonal


def test_small_and_large_h_as_the_notice_says():
    """ah.notice, line 3: small h gives near one-hot rows; large h flat rows (within the quoted factor of
    1/N) with entropy near log N, for every kernel with a width."""
    log_n = math.log(len(D.x))
    for kernel in KERNELS:
        r = lessons.heatmap_regimes(D.x, kernel, XQ)
        assert r["entropy_large"] > 0.98 * log_n
        assert r["row_ratio_large"] < 3.0                        # the factor the sentence quotes
        if kernel != "constant":
            assert r["entropy_small"] < 0.3 * log_n, (kernel, r)
    w = nw_weights(XQ, X, "gaussian", 10.0)
    assert float((w * len(D.x)).max()) < 1.2 and float((w * len(D.x)).min()) > 0.8


def test_entropy_follows_the_local_density_and_falls_at_the_ends():
    """ah.notice, line 4: at the default h, entropy rises and falls with the number of training points
    near the query, and the end queries have lower entropy than their inner neighbours."""
    ent = entropy(nw_weights(XQ, X, "gaussian", 0.2)).numpy()
    density = np.log(torch.exp(-(XQ[:, None] - X[None, :]) ** 2 / (2 * 0.2 ** 2)).sum(1).numpy())
    assert np.corrcoef(ent, density)[0, 1] > 0.8
    assert ent[0] < ent[1:6].max() - 0.2 and ent[-1] < ent[-6:-1].max() - 0.2


def test_no_support_is_not_one_hot():
    """ah.no_support_caption / ah.row_none_text: a boxcar at h = 0.01 leaves queries without support;
    the page draws them as gaps (NaN), not as entropy 0, and says how many."""
    at = page("attention_heatmap")
    at.selectbox(key="nw.kernel").set_value("boxcar").run()
    at.select_slider(key="nw.bandwidth").set_value(0.01).run()
    assert_clean(at)
    w = nw_weights(XQ, X, "boxcar", 0.01)
    empty = int((w.sum(-1) == 0).sum())
    assert empty > 0
    ent = chart_data(at, "entropy")[0]["y"].astype(float)
    assert int(np.isnan(ent).sum()) == empty
    assert any(c.value.startswith(f"{empty} of 100 queries have no training point") for c in at.caption)
    at.slider(key="heat.query_x").set_value(float(XQ[np.flatnonzero(w.sum(-1).numpy() == 0)[0]])).run()
    assert any("has no training point within h" in m.value for m in at.markdown)


def test_sweep_means_leave_out_queries_without_support():
    """The sweep on the softmax page: with no-support rows left out, the mean max weight of a compact
    kernel never falls as h shrinks (it rose from 0.41 to 0.52 when they counted as 0)."""
    sweep = nw_entropy_sweep(torch.tensor(query_grid(D))[::4], X, "boxcar", np.logspace(-2, np.log10(20), 41))
    mw = sweep["max_weight"].to_numpy()
    assert np.all(np.diff(mw) <= 1e-12)
    assert sweep["supported"].iloc[0] < 1


def test_row_text_numbers():
    """ah.row_text: the numbers it quotes for the picked query are those of its weight row."""
    at = page("attention_heatmap")
    from explorer.ui.page_controls import AttentionHeatmap
    nearest = int(np.abs(XQ.numpy() - AttentionHeatmap.QUERY_X.default).argmin())   # the query the page draws
    w = nw_weights(XQ, X, "gaussian", 0.2)[nearest]
    text = next(m.value for m in at.markdown if m.value.startswith("Query x ="))
    assert f"**{float(w.max()):.3f}**" in text
    assert f"{int((w > 0.01).sum())} of 200" in text
    assert f"**{float(entropy(w)):.2f}** nats" in text


@pytest.mark.parametrize("x", [-2.9, -0.5, 0.04, 1.77, 3.0])
def test_query_x_picks_the_nearest_query(x):
    """ah.query_x_help: the weights drawn are those of the heatmap query nearest the chosen x."""
    at = page("attention_heatmap")
    at.slider(key="heat.query_x").set_value(x).run()
    assert_clean(at)
    nearest = float(XQ[int(np.abs(XQ.numpy() - x).argmin())])
    text = next(m.value for m in at.markdown if m.value.startswith("Query x ="))
    assert text.startswith(f"Query x = {nearest:.3f}:")
