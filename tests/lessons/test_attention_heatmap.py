"""Claims of the Attention heatmap page, on the weight matrix it draws, over the sweep of its settings: seeds 0-4,
both datasets, the n, noise and query-count sliders' ends, every kernel and the bandwidth slider's ends and middle.
Headless: the lesson's functions, checked against weights written out here in numpy."""

import math

import numpy as np
import pytest
import torch

from explorer.attention import entropy
from explorer.bridge import nw_entropy_sweep
from explorer.data import make_dataset, query_grid
from explorer.lessons import attention_heatmap as AH
from explorer.lessons.params import defaults
from explorer.lessons.shared import BANDWIDTH, DATASET, KERNEL, NOISE, N, data_of
from tests.lessons.sweep import checks

D = make_dataset("sine_mix", 200, 0.3, 0)
XQ = torch.linspace(float(query_grid(D)[0]), float(query_grid(D)[-1]), 100, dtype=torch.float64)
X = torch.tensor(D.x)


DATA_SETTINGS = (DATASET, N, NOISE)


def _drawn(values):
    """The data the page draws at ``values``: the dataset, the weight matrix's data, its queries (numpy)."""
    data = data_of(values)
    res = AH.figures(values, data)["weights_heatmap"].data()
    return data, res, res["x_query"]


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


@checks(AH.notice, over=(*DATA_SETTINGS, AH.N_QUERIES, KERNEL, BANDWIDTH))
def test_rows_are_averages_or_empty_and_a_narrow_kernel_draws_a_diagonal_band(settings):
    """ah.notice, lines 1-2: rows are non-negative and sum to 1 or are all zero, for every kernel and h; a kernel
    narrow against the data's range (h at most a twentieth of it) puts each row's largest weight within 2h of the
    query, so sorted keys and queries draw a diagonal band."""
    for values in settings:
        data, res, xq = _drawn(values)
        kernel, h = values[KERNEL.key], values[BANDWIDTH.key]
        w = res["weights"]
        np.testing.assert_allclose(w, _numpy_weights(xq, data["x"], kernel, h), atol=1e-12)
        sums = w.sum(-1)
        assert (w >= 0).all() and np.all((np.abs(sums - 1) < 1e-12) | (sums == 0))
        span = float(np.ptp(data["x"]))
        if kernel != "constant" and h <= span / 20:
            ok = sums > 0
            top = data["x"][w.argmax(1)]
            gap = np.abs(xq[:, None] - data["x"][None, :]).min(1)       # the nearest point's distance
            assert np.all(np.abs(top - xq)[ok] <= np.maximum(2 * h, gap[ok] + 1e-12)), values
        assert AH.notice(res, AH.regimes_of(data, kernel, len(xq)), data, h)[0].key == "ah.notice"


@checks(AH.notice, AH.question, over=(*DATA_SETTINGS, AH.N_QUERIES, KERNEL),
        also=[{KERNEL: k, DATASET: name, N: n} for k in ("boxcar", "epanechnikov", "triangular")
              for name in ("sine_mix", "d2l") for n in (10, 200)])
def test_the_small_and_large_h_lines_say_what_the_rows_do(settings):
    """ah.notice_small_spike / ah.notice_small_band / ah.notice_small_none / ah.notice_small_flat /
    ah.notice_large / ah.predict_why: the small-h line says whichever of near one-hot (largest weight above 0.9 on
    average: the Laplace kernel's 0.64 at the defaults is not), spread over a few points, no support or flat the rows
    at h = 0.01 are (largest weight and entropy computed here), and at h = 10 every row lies
    within the quoted factor (< 3) of 1/N with entropy above 95 % of log N; the question's answer is that shape."""
    for values in settings:
        data, res, xq = _drawn(values)
        kernel, n = values[KERNEL.key], len(data["x"])
        r = AH.regimes_of(data, kernel, len(xq))
        small = AH.notice(res, r, data, values[BANDWIDTH.key])[1]
        w = _numpy_weights(xq, data["x"], kernel, 0.01)
        ok = w.sum(1) > 0
        if kernel == "constant":
            assert small.key == "ah.notice_small_flat"
        elif not ok.any():
            assert small.key == "ah.notice_small_none"
        else:
            mw = w[ok].max(1).mean()
            ent = float(entropy(torch.tensor(w[ok])).mean())
            assert small.values["mw_small"] == pytest.approx(mw, abs=1e-9)
            assert small.values["ent_small"] == pytest.approx(ent, abs=1e-6)
            shape = "spike" if mw > 0.9 else "flat" if ent > 0.95 * math.log(n) else "band"
            assert small.key == f"ah.notice_small_{shape}", values
            # the statistic names the rows it covers: empty rows (no training point within h) are counted
            clause = f"over the {ok.sum()} of {len(ok)} query rows that have a training point within h, the other " \
                     f"{(~ok).sum()} being empty"
            assert (clause in str(small)) == (not ok.all()), (values, str(small))
            if values[KERNEL.key] == "laplace" and values[N.key] == 200 and values[DATASET.key] == "sine_mix":
                assert small.key == "ah.notice_small_band", values     # 0.64 on average: not near one-hot
        wide = _numpy_weights(xq, data["x"], kernel, 10.0)
        assert (wide.max(1) / wide.min(1)).max() == pytest.approx(r["row_ratio_large"])
        assert r["row_ratio_large"] < 3
        large_entropy = float(entropy(torch.tensor(wide)).mean())
        assert large_entropy > 0.95 * math.log(n)
        question = AH.question(r, n, kernel)
        assert AH.ROW_SHAPES[question.answer] == "flat" and question.why.values["ent"] == pytest.approx(large_entropy)


@checks(AH.notice, over=(*DATA_SETTINGS, AH.N_QUERIES, KERNEL, BANDWIDTH))
def test_the_entropy_line_is_shown_only_where_entropy_follows_the_data(settings):
    """ah.notice_density / ah.notice_density_not: the page says entropy follows how crowded the points are only
    when, at the current h, it correlates with the log of the kernel's total weight (0.8 or more, computed here)
    and falls at both ends of the x range; otherwise it says it does not, with its range."""
    shown = {True: 0, False: 0}
    for values in settings:
        data, res, xq = _drawn(values)
        kernel, h = values[KERNEL.key], values[BANDWIDTH.key]
        w = _numpy_weights(xq, data["x"], kernel, h)
        ok = w.sum(1) > 0
        ent = np.where(ok, -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(1), np.nan)
        e = ent[ok]
        if ok.sum() >= 8 and np.ptp(e) > 1e-9:
            total = _numpy_total(xq, data["x"], kernel, h)[ok]
            corr = np.corrcoef(e, np.log(total))[0, 1]
            holds = bool(corr >= 0.8 and e[0] < e[1:6].max() and e[-1] < e[-6:-1].max())
        else:
            holds = False
        said = AH.notice(res, AH.regimes_of(data, kernel, len(xq)), data, h)[3]
        assert said.key == ("ah.notice_density" if holds else "ah.notice_density_not"), values
        shown[holds] += 1
    assert shown[True] and shown[False]                  # both sentences occur over the sweep


def _numpy_total(xq, x, kernel, h):
    u = (np.asarray(xq)[:, None] - np.asarray(x)[None, :]) / h
    return {"gaussian": np.exp(-u * u / 2), "boxcar": (np.abs(u) <= 1) * 1.0, "constant": np.ones_like(u),
            "epanechnikov": np.clip(1 - u * u, 0, None), "triangular": np.clip(1 - np.abs(u), 0, None),
            "laplace": np.exp(-np.abs(u))}[kernel].sum(1)


@checks(AH.support_caption, AH.row_text, over=DATA_SETTINGS, together=(KERNEL, BANDWIDTH))
def test_no_support_is_not_one_hot(settings):
    """ah.no_support_caption / ah.row_none_text: a compact kernel at small h leaves queries without support; the
    page draws them as gaps (NaN entropy), not as entropy 0, and says how many (counted here); a query without
    support is said to have no training point within h."""
    seen = 0
    for values in settings:
        data, res, xq = _drawn(values)
        w = _numpy_weights(xq, data["x"], values[KERNEL.key], values[BANDWIDTH.key])
        empty = int((w.sum(-1) == 0).sum())
        assert int(np.isnan(res["entropy"]).sum()) == empty
        caption = AH.support_caption(res)
        assert (caption is None) == (empty == 0) and (caption is None or caption.values["n"] == empty)
        if empty:
            seen += 1
            x = float(xq[np.flatnonzero(w.sum(-1) == 0)[0]])
            assert AH.row_text(res, x).key == "ah.row_none_text"
    assert seen


def test_sweep_means_leave_out_queries_without_support():
    """The sweep on the softmax page: with no-support rows left out, the mean max weight of a compact
    kernel never falls as h shrinks (it rose from 0.41 to 0.52 when they counted as 0)."""
    sweep = nw_entropy_sweep(torch.tensor(query_grid(D))[::4], X, "boxcar", np.logspace(-2, np.log10(20), 41))
    mw = sweep["max_weight"].to_numpy()
    assert np.all(np.diff(mw) <= 1e-12)
    assert sweep["supported"].iloc[0] < 1


@checks(AH.row_text, over=(*DATA_SETTINGS, BANDWIDTH, AH.QUERY_X, AH.N_QUERIES), extra={AH.QUERY_X: (-2.9, 1.77)})
def test_row_text_numbers(settings):
    """ah.row_text: the numbers it quotes for the picked query are those of its weight row (numpy), for the query
    nearest the chosen x."""
    for values in settings:
        data, res, xq = _drawn(values)
        nearest = int(np.abs(xq - values[AH.QUERY_X.key]).argmin())
        w = _numpy_weights(xq, data["x"], values[KERNEL.key], values[BANDWIDTH.key])[nearest]
        said = AH.row_text(res, values[AH.QUERY_X.key])
        if w.sum() == 0:
            assert said.key == "ah.row_none_text"
            continue
        assert said.values["x"] == xq[nearest]
        assert said.values["wmax"] == pytest.approx(w.max(), abs=1e-12)
        assert said.values["n_big"] == int((w > 0.01).sum()) and said.values["n"] == len(data["x"])
        assert said.values["h"] == pytest.approx(-(w[w > 0] * np.log(w[w > 0])).sum(), abs=1e-9)


@checks(AH.help_texts)
@pytest.mark.parametrize("x", [-2.9, -0.5, 0.04, 1.77, 3.0])
def test_query_x_picks_the_nearest_query(x):
    """ah.query_x_help: the weights drawn are those of the heatmap query nearest the chosen x."""
    values = {**defaults(AH.PARAMS), AH.QUERY_X.key: x}
    res = _drawn(values)[1]
    nearest = float(XQ[int(np.abs(XQ.numpy() - x).argmin())])
    assert str(AH.row_text(res, x)).startswith(f"Query x = {nearest:.3f}:")


@checks(AH.size_caption, over=(N, AH.N_QUERIES))
def test_the_size_caption_counts_the_matrix_and_says_when_it_is_averaged(settings):
    """ah.size / ah.downsampled: queries × keys = weights, and the block averaging only past the cells drawn."""
    for values in settings:
        data, res, xq = _drawn(values)
        said = AH.size_caption(res)
        m, n = len(xq), len(data["x"])
        assert (said.values["m"], said.values["n"], said.values["cells"]) == (m, n, m * n)
        assert (said.values["downsampled"] != "") == (m * n > AH.DISPLAY_CELLS), values


@checks(AH.sweep_caption, over=(N, AH.N_QUERIES, AH.SWEEP))
def test_the_sweep_says_when_its_panels_are_block_averaged(settings):
    """ah.sweep_averaged: said exactly when a panel has fewer cells than its full matrix (queries × keys, counted
    here from the data), with the factor by which each axis shrank (the full size over the drawn one, rounded down
    to a power of two) and the panel count; nothing when every weight is drawn."""
    averaged = 0
    for values in settings:
        data = data_of(values)
        m, n = values[AH.N_QUERIES.key], len(data["x"])
        sweep = AH.figures(values, data)["sigma_sweep"].data()
        drawn = sweep["panels"][0]["weights"].shape
        said = AH.sweep_caption(sweep)
        assert (said is None) == (drawn == (m, n)), values
        if said is not None:
            assert said.values["factor"] == m // drawn[0] == n // drawn[1] and said.values["factor"] > 1
            assert (said.values["m"], said.values["n"], said.values["panels"]) == (m, n, len(sweep["panels"]))
            averaged += 1
    assert averaged, "no setting averaged the sweep: the caption was never checked"

