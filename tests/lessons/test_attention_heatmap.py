"""Claims of the Attention heatmap page, on the weight matrix it draws, over seeds 0-4, both datasets, the n and
query-count sliders' ends, every kernel and bandwidths across the slider."""

import math

import numpy as np
import pytest
import torch

from explorer.attention import entropy
from explorer.bridge import nw_entropy_sweep
from explorer.data import DATASETS, make_dataset, query_grid
from explorer.i18n import t
from explorer.kernels import KERNELS
from explorer.lessons import attention_heatmap as AH
from explorer.lessons.shared import N
from explorer.regression import nw_weights
from tests.app.helpers import assert_clean, chart_data, page, set_bandwidth
from tests.lessons.sweep import SEEDS, ends

D = make_dataset("sine_mix", 200, 0.3, 0)
XQ = torch.linspace(float(query_grid(D)[0]), float(query_grid(D)[-1]), 100, dtype=torch.float64)
X = torch.tensor(D.x)


def _settings():
    """(dataset, n, n_queries): both datasets, each with the n slider at its ends and default (queries at their
    default), then the query slider at its ends (n at the dataset's default)."""
    for name in DATASETS:
        default_n, default_m = DATASETS[name].default_n, AH.N_QUERIES.default
        for n in (ends(N)[0], default_n, ends(N)[-1]):
            yield name, n, default_m
        for m in (ends(AH.N_QUERIES)[0], ends(AH.N_QUERIES)[-1]):
            yield name, default_n, m


def _cases(seeds):
    return [(name, n, seed, m) for name, n, m in _settings() for seed in seeds]


def _queries(d, m):
    g = query_grid(d)
    return torch.linspace(float(g[0]), float(g[-1]), m, dtype=torch.float64)


def _numpy_weights(xq, x, kernel, h):
    """The NW weights written out with the kernel profiles of DESIGN.md (no product code); the Gaussian and Laplace
    ones from their log-weights less each row's largest, so a far query does not give 0/0."""
    u = (np.asarray(xq)[:, None] - np.asarray(x)[None, :]) / h
    if kernel in ("gaussian", "laplace"):
        logk = -u * u / 2 if kernel == "gaussian" else -np.abs(u)
        k = np.exp(logk - logk.max(1, keepdims=True))
        return k / k.sum(1, keepdims=True)
    k = {"boxcar": (np.abs(u) <= 1) * 1.0, "constant": np.ones_like(u),
         "epanechnikov": np.clip(1 - u * u, 0, None), "triangular": np.clip(1 - np.abs(u), 0, None)}[kernel]
    s = k.sum(1, keepdims=True)
    return np.divide(k, s, out=np.zeros_like(k), where=s > 0)


@pytest.mark.sweep
def test_rows_are_averages_or_empty_and_a_narrow_kernel_draws_a_diagonal_band():
    """ah.notice, lines 1-2: rows are non-negative and sum to 1 or are all zero, for every kernel and h; a kernel
    narrow against the data's range (h at most a twentieth of it) puts each row's largest weight within 2h of the
    query, so sorted keys and queries draw a diagonal band."""
    for name, n, seed, m in _cases(SEEDS):
        d = make_dataset(name, n, 0.3, seed)
        x, xq = torch.tensor(d.x), _queries(d, m)
        span = float(x.max() - x.min())
        for kernel in KERNELS:
            for h in (0.01, 0.2, 20.0):
                w = nw_weights(xq, x, kernel, h).numpy()
                np.testing.assert_allclose(w, _numpy_weights(xq, x, kernel, h), atol=1e-12)
                sums = w.sum(-1)
                assert (w >= 0).all() and np.all((np.abs(sums - 1) < 1e-12) | (sums == 0))
                if kernel != "constant" and h <= span / 20:
                    ok = sums > 0
                    top = d.x[w.argmax(1)]
                    gap = np.abs(xq.numpy()[:, None] - d.x[None, :]).min(1)       # the nearest point's distance
                    assert np.all(np.abs(top - xq.numpy())[ok] <= np.maximum(2 * h, gap[ok] + 1e-12)), \
                        (name, n, seed, m, kernel, h)


@pytest.mark.sweep
def test_the_small_and_large_h_lines_say_what_the_rows_do():
    """ah.notice_small_spike / ah.notice_small_band / ah.notice_small_none / ah.notice_small_flat /
    ah.notice_large: the small-h line says whichever of near one-hot, spread over a few
    points, no support or flat the rows at h = 0.01 are (largest weight and entropy computed here), and at h = 10
    every row lies within the quoted factor (< 3) of 1/N with entropy above 95 % of log N."""
    for name, n, seed, m in _cases(SEEDS):
        d = make_dataset(name, n, 0.3, seed)
        xq = _queries(d, m).numpy()
        for kernel in KERNELS:
            r = AH.heatmap_regimes(d.x, kernel, xq)
            w = _numpy_weights(xq, d.x, kernel, 0.01)
            ok = w.sum(1) > 0
            shape = AH.small_h_rows(r, n, kernel)
            if kernel == "constant":
                assert shape == "flat"
            elif not ok.any():
                assert shape == "none"
            else:
                mw = w[ok].max(1).mean()
                ent = float(entropy(torch.tensor(w[ok])).mean())
                assert r["max_weight_small"] == pytest.approx(mw, abs=1e-9)
                assert r["entropy_small"] == pytest.approx(ent, abs=1e-6)
                assert shape == ("spike" if mw > 0.5 else "flat" if ent > 0.95 * math.log(n) else "band")
            wide = _numpy_weights(xq, d.x, kernel, 10.0)
            assert (wide.max(1) / wide.min(1)).max() == pytest.approx(r["row_ratio_large"])
            assert r["row_ratio_large"] < 3
            assert float(entropy(torch.tensor(wide)).mean()) > 0.95 * math.log(n)


@pytest.mark.sweep
def test_the_entropy_line_is_shown_only_where_entropy_follows_the_data():
    """ah.notice_density / ah.notice_density_not: the page says entropy follows how crowded the points are only
    when, at the current h, it correlates with the log of the kernel's total weight (0.8 or more, computed here)
    and falls at both ends of the x range; otherwise it says it does not, with its range."""
    shown = {True: 0, False: 0}
    for name, n, seed, m in _cases(SEEDS):
        d = make_dataset(name, n, 0.3, seed)
        xq = _queries(d, m).numpy()
        for kernel in ("gaussian", "boxcar", "laplace"):
            for h in (0.01, 0.2, 20.0):
                w = _numpy_weights(xq, d.x, kernel, h)
                ok = w.sum(1) > 0
                ent = np.where(ok, -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(1), np.nan)
                got = AH.entropy_and_density(w, ent, xq, d.x, kernel, h)
                e = ent[ok]
                if ok.sum() >= 8 and np.ptp(e) > 1e-9:
                    total = _numpy_total(xq, d.x, kernel, h)[ok]
                    corr = np.corrcoef(e, np.log(total))[0, 1]
                    holds = corr >= 0.8 and e[0] < e[1:6].max() and e[-1] < e[-6:-1].max()
                else:
                    holds = False
                assert got["holds"] == holds, (name, n, seed, m, kernel, h)
                shown[holds] += 1
    assert shown[True] and shown[False]                  # both sentences occur over the sweep


def _numpy_total(xq, x, kernel, h):
    u = (np.asarray(xq)[:, None] - np.asarray(x)[None, :]) / h
    return {"gaussian": np.exp(-u * u / 2), "boxcar": (np.abs(u) <= 1) * 1.0,
            "laplace": np.exp(-np.abs(u))}[kernel].sum(1)


@pytest.mark.sweep
def test_the_notice_on_the_page_at_every_seed():
    """The page shows the notice lines the data calls for (ah.notice, ah.notice_small_spike / ah.notice_small_band,
    ah.notice_large), at seeds 0-4 of both datasets."""
    at = page("attention_heatmap")
    for name in DATASETS:
        at.selectbox(key="data.name").set_value(name).run()
        for seed in SEEDS:
            at.number_input(key="data.seed").set_value(seed).run()
            assert_clean(at)
            spec = DATASETS[name]
            d = make_dataset(name, spec.default_n, spec.default_noise, seed)
            xq = _queries(d, AH.N_QUERIES.default).numpy()
            r = AH.heatmap_regimes(d.x, "gaussian", xq)
            text = next(m.value for m in at.markdown if m.value.startswith("- Each row"))
            small = AH.small_h_rows(r, len(d.x), "gaussian")
            assert t(f"ah.notice_small_{small}", kernel=t("kernel.gaussian"), small=0.01,
                     mw_small=r['max_weight_small'], ent_small=r['entropy_small'], n=len(d.x)) in text
            assert f"mean entropy {r['entropy_large']:.2f} nats against log N = {math.log(len(d.x)):.2f}" in text


@pytest.mark.sweep
def test_no_support_is_not_one_hot():
    """ah.no_support_caption / ah.row_none_text: a compact kernel at small h leaves queries without support; the
    page draws them as gaps (NaN), not as entropy 0, and says how many, at seeds 0-4."""
    at = page("attention_heatmap")
    at.selectbox(key="nw.kernel").set_value("boxcar").run()
    set_bandwidth(at, 0.01)
    for seed in SEEDS:
        at.number_input(key="data.seed").set_value(seed).run()
        assert_clean(at)
        d = make_dataset("sine_mix", 200, 0.3, seed)
        xq = _queries(d, 100)
        w = _numpy_weights(xq, d.x, "boxcar", 0.01)
        empty = int((w.sum(-1) == 0).sum())
        assert empty > 0
        ent = chart_data(at, "entropy")[0]["y"].astype(float)
        assert int(np.isnan(ent).sum()) == empty
        assert any(c.value == t("ah.no_support_caption", n=empty, m=100, kernel=t("kernel.boxcar")) for c in at.caption)
    at.slider(key="heat.query_x").set_value(float(xq[np.flatnonzero(w.sum(-1) == 0)[0]])).run()
    assert any("has no training point within h" in m.value for m in at.markdown)


def test_sweep_means_leave_out_queries_without_support():
    """The sweep on the softmax page: with no-support rows left out, the mean max weight of a compact
    kernel never falls as h shrinks (it rose from 0.41 to 0.52 when they counted as 0)."""
    sweep = nw_entropy_sweep(torch.tensor(query_grid(D))[::4], X, "boxcar", np.logspace(-2, np.log10(20), 41))
    mw = sweep["max_weight"].to_numpy()
    assert np.all(np.diff(mw) <= 1e-12)
    assert sweep["supported"].iloc[0] < 1


@pytest.mark.sweep
def test_row_text_numbers():
    """ah.row_text: the numbers it quotes for the picked query are those of its weight row (numpy), at seeds 0-4
    and three bandwidths."""
    at = page("attention_heatmap")
    nearest = int(np.abs(XQ.numpy() - AH.QUERY_X.default).argmin())   # the query the page draws
    for seed in SEEDS:
        at.number_input(key="data.seed").set_value(seed).run()
        d = make_dataset("sine_mix", 200, 0.3, seed)
        for h in (0.05, 0.2, 1.0):
            set_bandwidth(at, h)
            w = _numpy_weights(_queries(d, 100), d.x, "gaussian", h)[nearest]
            text = next(m.value for m in at.markdown if m.value.startswith("Query x ="))
            assert f"**{float(w.max()):.3f}**" in text
            assert f"{int((w > 0.01).sum())} of 200" in text
            assert f"**{float(-(w[w > 0] * np.log(w[w > 0])).sum()):.2f}** nats" in text


@pytest.mark.parametrize("x", [-2.9, -0.5, 0.04, 1.77, 3.0])
def test_query_x_picks_the_nearest_query(x):
    """ah.query_x_help: the weights drawn are those of the heatmap query nearest the chosen x."""
    at = page("attention_heatmap")
    at.slider(key="heat.query_x").set_value(x).run()
    assert_clean(at)
    nearest = float(XQ[int(np.abs(XQ.numpy() - x).argmin())])
    text = next(m.value for m in at.markdown if m.value.startswith("Query x ="))
    assert text.startswith(f"Query x = {nearest:.3f}:")
