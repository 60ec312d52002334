"""Claims of the Kernel regression page, checked on the data its figures draw, over the sweep of its settings (both
datasets, the n and noise sliders' ends and middle, every kernel, the bandwidth slider's ends and middle, seeds
0-4). Headless: the lesson's functions against estimates, errors and leave-one-out scores written out here."""

import math

import numpy as np
import pytest
import torch

from explorer.bandwidth import loo_cv_scores, select_bandwidth, silverman_bandwidth
from explorer.data import DATASETS, make_dataset, query_grid
from explorer.i18n import t
from explorer.kernels import KERNELS, equivalent_bandwidth
from explorer.lessons import kernel_regression as kr_lesson
from explorer.lessons import shared as shared_lesson
from explorer.lessons.params import defaults
from explorer.lessons.shared import (
    BANDWIDTH,
    BANDWIDTHS,
    DATASET,
    KERNEL,
    NOISE,
    N,
    data_of,
    presets,
    snap_bandwidth,
)
from explorer.regression import nadaraya_watson, nw_weights
from tests.lessons.sweep import checks
from tests.lessons.test_predictions import _loo_any
from tests.references import loo_error as _loo_all

# each dataset at its own n and noise (where its presets are labelled), besides one setting at a time
AT_DATASET_DEFAULTS = [{DATASET: name, N: spec.default_n, NOISE: spec.default_noise} for name, spec in DATASETS.items()]

WIDE = [k for k in KERNELS if KERNELS[k].canonical]          # every kernel with a width


def _fit(name, n, noise, seed, kernel, h):
    d = make_dataset(name, n, noise, seed)
    g = query_grid(d)
    est = nadaraya_watson(torch.tensor(g), torch.tensor(d.x), torch.tensor(d.y), kernel, h).numpy()
    return d, g, est


def _preset_mse(name, n, noise, seed, kernel="gaussian"):
    """Each preset's error against the true function on the query grid, computed here with plain numpy weights."""
    d = make_dataset(name, n, noise, seed)
    g = query_grid(d)
    out = {}
    for label, h in presets(name).items():
        logw = -(g[:, None] - d.x[None, :]) ** 2 / (2 * h * h)
        w = np.exp(logw - logw.max(1, keepdims=True))            # the log domain: a far query is no 0/0
        est = (w @ d.y) / w.sum(1)
        out[label] = float(np.nanmean((est - d.true_fn(g)) ** 2))
    return out


@checks(shared_lesson.presets_caption, lesson=kr_lesson, over=(), also=AT_DATASET_DEFAULTS)
def test_preset_labels_hold_at_each_datasets_defaults(settings):
    """nw.presets: at the dataset's own n and noise, "good" has the lowest error, by more than the 1.5x margin
    the verdict asks for, at every seed 0-4, and the caption labels them."""
    for values in settings:
        name, n, noise, seed = (values[p.key] for p in (DATASET, N, NOISE, shared_lesson.SEED))
        if (n, noise) != (DATASETS[name].default_n, DATASETS[name].default_noise):
            continue
        mse = _preset_mse(name, n, noise, seed)
        assert shared_lesson.preset_verdict(mse), (seed, mse)
        assert mse["over-fit"] > 1.5 * mse["good"] and mse["over-smooth"] > 1.5 * mse["good"]
        assert shared_lesson.presets_caption(name, "gaussian", data_of(values)).key == "nw.presets"
        assert all(h in BANDWIDTHS for h in presets(name).values())          # a preset is exactly on the grid


@checks(shared_lesson.presets_caption, lesson=kr_lesson, over=(DATASET, N, NOISE))
def test_presets_caption_follows_the_data_shown(settings):
    """nw.presets / nw.presets_fail: the caption labels the presets exactly when the errors on the data shown bear the
    labels out (errors written out here), at the n and noise sliders' ends and middle, both datasets and seeds 0-4
    (Gaussian kernel); otherwise it says at which n and noise they were labelled."""
    for values in settings:
        name, n, noise, seed = (values[p.key] for p in (DATASET, N, NOISE, shared_lesson.SEED))
        holds = shared_lesson.preset_verdict(_preset_mse(name, n, noise, seed))
        said = shared_lesson.presets_caption(name, "gaussian", data_of(values))
        assert said.key == ("nw.presets" if holds else "nw.presets_fail"), values
        assert said.values["n"] == DATASETS[name].default_n and said.values["noise"] == DATASETS[name].default_noise


def _moments(kernel):
    u = np.linspace(-40, 40, 800_001)
    k = KERNELS[kernel].profile(torch.tensor(u)).numpy()
    k = k / np.trapezoid(k, u)                              # normalised kernel
    return u, k, np.sqrt(np.trapezoid(u * u * k, u)), np.trapezoid(k * k, u)


@checks(kr_lesson.help_texts, kr_lesson.width_rows)
@pytest.mark.parametrize("kernel", WIDE)
def test_kernel_widths_and_canonical_bandwidths_by_integration(kernel):
    """kr.width_text / kr.same_width_help: the standard deviations it lists and the δ_K rule (the toggle draws
    each compared kernel at h × δ_K / δ of the chosen one), by numerical integration."""
    _, _, sd, rk = _moments(kernel)
    stated = {"gaussian": 1, "boxcar": 1 / math.sqrt(3), "epanechnikov": 1 / math.sqrt(5),
              "triangular": 1 / math.sqrt(6), "laplace": math.sqrt(2)}[kernel]
    assert sd == pytest.approx(stated, rel=1e-4)
    assert KERNELS[kernel].sd == pytest.approx(sd, rel=1e-4)
    assert KERNELS[kernel].canonical == pytest.approx((rk / sd ** 4) ** 0.2, rel=1e-4)
    row = next(r for r in kr_lesson.width_rows() if r.values["kernel"].key == f"kernel.{kernel}")
    assert row.values["delta"] == pytest.approx((rk / sd ** 4) ** 0.2, rel=1e-4)


def test_the_vectorised_leave_one_out_is_the_loop():
    d = make_dataset("d2l", 40, 1.0, 3)
    for kernel in ("gaussian", "laplace", "boxcar", "epanechnikov", "triangular"):
        for h in (0.01, 0.3, 3.0):
            assert _loo_all(d.x, d.y, kernel, h) == pytest.approx(_loo_any(d.x, d.y, kernel, h), rel=1e-12)


def _flat_edge(data, kernel, h_opt):
    """The product's ``flat_below``, checked by brute force (the leave-one-out weights written out in numpy): when it
    reports a flat stretch up to ``edge``, five bandwidths from the search range's lower end to ``edge`` score the same
    (to 1e-6) and the optimum no better; when it reports none, the range's lower end scores worse than the optimum."""
    from explorer.bandwidth import flat_below, search_grid

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    edge, low = flat_below(x, y, kernel, h_opt), search_grid(x, kernel)[0]
    at_low, at_opt = _loo_all(x, y, kernel, low), _loo_all(x, y, kernel, h_opt)
    if edge is None:
        assert at_low > at_opt * (1 + 1e-9), (kernel, at_low, at_opt)
    else:
        scores = [_loo_all(x, y, kernel, h) for h in np.geomspace(low, edge, 5)]
        assert max(scores) - min(scores) <= 1e-6 * min(scores) and at_opt >= min(scores) * (1 - 1e-9), scores
    return edge


def test_a_minimum_at_the_search_ranges_end_is_said_as_a_flat_curve():
    """d2l, n = 10, seed 0: the Gaussian's leave-one-out curve is flat below h ≈ 0.035 (0.5261 at 0.0346 and at
    0.0046): the notice and the width text say so instead of quoting where the search range ends."""
    values = {**defaults(kr_lesson.PARAMS), DATASET.key: "d2l", N.key: 10, NOISE.key: 1.0, KERNEL.key: "gaussian"}
    data = data_of(values)
    loo = kr_lesson.figures(values, data)["loo_cv"].data()
    errors = kr_lesson.preset_errors(data, "gaussian", presets("d2l").values())
    first = kr_lesson.notice(data, loo, "gaussian", errors)[0]
    assert first.key == "kr.notice_first_plateau" and round(first.values["edge"], 4) == 0.0346
    assert "flat below h ≈ 0.0346" in str(first) and "picks h" not in str(first)
    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    assert _loo_any(x, y, "gaussian", 0.0346) == pytest.approx(_loo_any(x, y, "gaussian", 0.0046), rel=1e-9)
    optima = {k: select_bandwidth(x, y, k) for k in WIDE}
    said = kr_lesson.width_text(optima, {k: _flat_edge(data, k, h) for k, h in optima.items()})[1]
    assert said.key == "kr.width_optima_flat" and "Gaussian" in str(said)


@checks(kr_lesson.width_text, over=(N, NOISE), also=AT_DATASET_DEFAULTS)
def test_width_text_says_what_the_optima_do(settings):
    """kr.width_optima / kr.width_optima_not_closer: the page quotes the five global LOO optima's ratio raw and in
    Gaussian units (computed here with the canonical bandwidths written out, not the product's conversion), and says
    the units bring them closer exactly when they do; over seeds 0-4, both datasets at their defaults and the n and
    noise sliders' ends and middle."""
    delta = {"gaussian": 0.7764, "boxcar": 1.3510, "epanechnikov": 1.7188, "triangular": 1.8882, "laplace": 0.5743}
    for values in settings:
        data = data_of(values)
        optima = {k: select_bandwidth(data["x"], data["y"], k) for k in WIDE}
        units = [h * delta["gaussian"] / delta[k] for k, h in optima.items()]
        raw = max(optima.values()) / min(optima.values())
        ratio = max(units) / min(units)
        flats = {k: _flat_edge(data, k, h) for k, h in optima.items()}
        said = kr_lesson.width_text(optima, flats)[1]
        if any(edge is not None for edge in flats.values()):      # an optimum at the search's end: not compared
            assert said.key == "kr.width_optima_flat", values
            assert said.values["edge"] == max(e for e in flats.values() if e is not None)
            continue
        assert said.key == ("kr.width_optima" if ratio < raw else "kr.width_optima_not_closer"), values
        assert said.values["units"] == pytest.approx(ratio, rel=1e-3) and said.values["raw"] == pytest.approx(raw)
    # Silverman's rule carries over by the same factor as the widths
    d = make_dataset("sine_mix", 200, 0.3, 0)
    for k in WIDE:
        assert silverman_bandwidth(d.x, k) == pytest.approx(silverman_bandwidth(d.x) * equivalent_bandwidth(1, k))


SWEEP_DATA = [(name, n, noise) for name in DATASETS for n in (10, DATASETS[name].default_n, 2000)
              for noise in (0.0, DATASETS[name].default_noise, 2.0)]


@checks(kr_lesson.notice, over=(DATASET, N, NOISE), also=AT_DATASET_DEFAULTS)
def test_kernel_regression_notice_holds_over_the_sliders(settings):
    """kr.notice, lines 1-3, for every kernel, seeds 0-4, both datasets, n and noise at their ends and defaults,
    and bandwidths across the slider: the estimate stays in [min y, max y]; compact kernels are undefined exactly
    where no point lies within h and the others never; at a small h each estimate rests on points within a few h
    of its query; as h grows without bound it becomes the mean of y."""
    for values in settings:
        d = make_dataset(*(values[p.key] for p in (DATASET, N, NOISE, shared_lesson.SEED)))
        g = torch.tensor(query_grid(d))
        x, y = torch.tensor(d.x), torch.tensor(d.y)
        near = (g[:, None] - x[None, :]).abs()
        for kernel in KERNELS:
            for h in (0.01, 0.2, 20.0):
                est = nadaraya_watson(g, x, y, kernel, h)
                ok = ~torch.isnan(est)
                assert bool(((est[ok] >= y.min() - 1e-12) & (est[ok] <= y.max() + 1e-12)).all())
                if KERNELS[kernel].compact:
                    assert torch.equal(~ok, ~(near <= h).any(1)), (values, kernel, h)
                else:
                    assert bool(ok.all()), (values, kernel, h)
            far = nadaraya_watson(g, x, y, kernel, 1e6)
            assert float((far - y.mean()).abs().max()) < 1e-6 * (1 + float(y.abs().max()))
        # small h (Gaussian): queries with a point within h put less than 1e-6 of their weight beyond 6h
        w = nw_weights(g, x, "gaussian", 0.01)
        covered = (near <= 0.01).any(1)
        assert float((w * (near > 0.06))[covered].sum(1).max()) < 1e-6


@checks(kr_lesson.notice, over=(DATASET, N, NOISE, KERNEL), also=AT_DATASET_DEFAULTS)
def test_silverman_and_the_loo_optimum_the_notice_quotes(settings):
    """kr.notice, line 4, and kr.notice_first / kr.notice_error: the page quotes Silverman's h (the formula written
    out here, for the Gaussian kernel), the leave-one-out optimum, and the preset errors against the true function
    (the Gaussian's written out here), over the sweep."""
    for values in settings:
        name, n, noise, seed = (values[p.key] for p in (DATASET, N, NOISE, shared_lesson.SEED))
        kernel = values[KERNEL.key]
        data = data_of(values)
        loo = kr_lesson.figures(values, data)["loo_cv"].data()
        errors = kr_lesson.preset_errors(data, kernel, presets(name).values())
        said = kr_lesson.notice(data, loo, kernel, errors)
        if kernel == "constant":                        # no optimum to quote: test_the_constant_kernel_is_said_...
            assert [x.key for x in said] == ["kr.notice_first_flat", "kr.notice"]
            continue
        first, _, rest = said
        h_opt = select_bandwidth(data["x"], data["y"], kernel)
        assert first.values["h"] == h_opt and rest.values["h"] == h_opt
        flat = _flat_edge(data, kernel, h_opt)
        assert first.key == ("kr.notice_first" if flat is None else "kr.notice_first_plateau"), values
        if kernel == "gaussian":
            q75, q25 = np.quantile(data["x"], [0.75, 0.25])
            silverman = 0.9 * min(data["x"].std(ddof=1), (q75 - q25) / 1.34) * len(data["x"]) ** -0.2
            assert rest.values["silverman"] == pytest.approx(silverman)
            mse = _preset_mse(name, n, noise, seed)
            quoted = {e.values["h"]: e.values["mse"] for e in first.values["errors"].parts}
            for label, h in presets(name).items():
                assert quoted[h] == pytest.approx(mse[label], rel=1e-9), (values, label)


def _loo_brute(x, y, h):
    errors = []
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        w = np.exp(-(x[i] - x[others]) ** 2 / (2 * h * h))
        errors.append((w @ y[others] / w.sum() - y[i]) ** 2)
    return float(np.mean(errors))


@checks(kr_lesson.loo_text, kr_lesson.loo_ends_caption, over=(DATASET, N, NOISE), also=AT_DATASET_DEFAULTS)
def test_loo_text_and_its_caption_over_the_sliders(settings):
    """kr.loo_text: a compact kernel has no score exactly below the largest nearest-neighbour distance (and a
    score above it), over seeds 0-4, both datasets and the n and noise sliders. kr.loo_ends: the caption quotes the
    ratios of the curve the page draws, whose ends are checked here against a numpy leave-one-out loop."""
    LOO_BANDWIDTHS = kr_lesson.LOO_BANDWIDTHS

    for values in settings:
        name, n = values[DATASET.key], values[N.key]
        seed = values[shared_lesson.SEED.key]
        d = make_dataset(name, n, values[NOISE.key], seed)
        xs = np.sort(d.x)
        gaps = np.diff(xs)
        reach = np.maximum.reduce([np.minimum(np.r_[gaps[:1], gaps], np.r_[gaps, gaps[-1:]])])
        largest = float(reach.max())
        for kernel in ("boxcar", "epanechnikov", "triangular"):
            hs = [largest * 0.99, largest * 1.01]
            below, above = loo_cv_scores(d.x, d.y, kernel, hs).numpy()
            assert math.isinf(below) and math.isfinite(above), (name, n, seed, kernel)
        scores = np.array([_loo_brute(d.x, d.y, h) for h in (LOO_BANDWIDTHS[0], LOO_BANDWIDTHS[-1])])
        best = loo_cv_scores(d.x, d.y, "gaussian", LOO_BANDWIDTHS).numpy().min()
        said = kr_lesson.loo_ends_caption(kr_lesson.figures(values)["loo_cv"].data(), "gaussian")
        if np.isfinite(scores[0]):
            assert said.values["h_lo"] == LOO_BANDWIDTHS[0]
            assert said.values["r_lo"] == pytest.approx(scores[0] / best, rel=1e-6), values
        assert said.values["r_hi"] == pytest.approx(scores[1] / best, rel=1e-6), values


@checks(kr_lesson.formula_text)
def test_formula_text_gaussian_weights_are_a_softmax():
    """kr.formula_text: with the Gaussian kernel, the NW weights are softmax_i(−(x − xᵢ)²/(2h²))."""
    d = make_dataset("sine_mix", 50, 0.3, 0)
    q = torch.linspace(-3, 3, 17, dtype=torch.float64)
    x = torch.tensor(d.x)
    ref = torch.softmax(-(q[:, None] - x[None, :]) ** 2 / (2 * 0.3 ** 2), dim=1)
    assert torch.allclose(nw_weights(q, x, "gaussian", 0.3), ref, atol=1e-14)


@checks(kr_lesson.readouts, over=(DATASET, N, NOISE), together=(KERNEL, BANDWIDTH))
def test_undefined_readout_counts_the_queries_with_no_point_within_h(settings):
    """kr.readout / kr.undefined: the readout quotes the fit's error against the true function (written out here for
    the Gaussian kernel) and the number of grid queries with no training point within h (counted here), for every
    kernel at the bandwidth slider's ends and middle, over the data settings and seeds 0-4."""
    for values in settings:
        data = data_of(values)
        kernel, h = values[KERNEL.key], values[BANDWIDTH.key]
        fit = kr_lesson.figures(values, data)["fit"].data()
        (line,) = kr_lesson.readouts(fit)
        g = data["x_grid"]
        empty = int((~(np.abs(g[:, None] - data["x"][None, :]) <= h).any(1)).sum()) if KERNELS[kernel].compact else 0
        undefined = line.values["undefined"]
        assert (undefined == "") == (empty == 0), values
        if empty:
            assert (undefined.values["n"], undefined.values["m"]) == (empty, len(g))
        if kernel == "gaussian":
            logw = -(g[:, None] - data["x"][None, :]) ** 2 / (2 * h * h)
            w = np.exp(logw - logw.max(1, keepdims=True))
            est = (w @ data["y"]) / w.sum(1)
            assert line.values["line"].values["mse"] == pytest.approx(np.mean((est - data["true"]) ** 2), rel=1e-6)


@checks(kr_lesson.snap_caption, over=(DATASET, N, NOISE, KERNEL),
        also=[{N: 2000, NOISE: 0.0}, {N: 500, NOISE: 0.0, KERNEL: "laplace"}, {N: 10, NOISE: 0.0}])
def test_snap_caption(settings):
    """kr.snap / kr.snap_outside: every bandwidth from 0.01 to 20 snaps to a grid value within the percentage it
    quotes; a value a button sets outside that range (the leave-one-out optimum, whose search goes down to a
    thousandth of the data's span, or Silverman's h) is said to be moved to the range's end, and only then; the
    constant kernel's "optimum" (it ignores h) is not offered. Over the sweep, and at noise 0 with n = 2,000 (the
    optimum 0.006 of the sine mix at seed 0) and n = 500 with the Laplace kernel."""
    bound = kr_lesson.snap_error(BANDWIDTHS)
    worst = max(max(snap_bandwidth(h) / h, h / snap_bandwidth(h)) - 1 for h in np.logspace(-2, np.log10(20), 4001))
    assert worst <= bound + 1e-12 and worst > 0.9 * bound
    assert bound < 0.05
    outside = 0
    for values in settings:
        kernel = values[KERNEL.key]
        loo = kr_lesson.figures(values)["loo_cv"].data()
        said = kr_lesson.snap_caption(BANDWIDTHS, loo, kernel)
        assert f"{bound:.1%}" in str(said[0])
        moved = {s.values["what"].key: s.values["h"] for s in said[1:]}
        for what, h in (("kr.optimum", loo["optimum"]), ("kr.silverman", loo["silverman"])):
            offered = what != "kr.optimum" or kernel != "constant"
            assert (what in moved) == (offered and not 0.01 <= h <= 20), (values, what, h)
        outside += bool(moved)
    assert outside                                       # the sweep reaches values outside the slider


@checks(shared_lesson.presets_caption, kr_lesson.notice)
def test_upload_presets_and_notice():
    """nw.presets_upload / kr.notice_first_upload: an upload gets unlabelled presets and the LOO optimum
    computed on its own rows."""
    grid = np.linspace(-3, 3, 60)
    xs = np.array([float(f"{x:.3f}") for x in grid])
    ys = np.array([float(f"{math.sin(x) + 0.1 * math.cos(7 * x):.4f}") for x in grid])
    data = {"x": xs, "y": ys, "x_grid": np.linspace(xs.min(), xs.max(), 400), "true": None}
    assert shared_lesson.presets_caption("upload:abc", "gaussian", data).key == "nw.presets_upload"
    values = {**defaults(kr_lesson.PARAMS), DATASET.key: "upload"}
    loo = kr_lesson.figures(values, data)["loo_cv"].data()
    first = kr_lesson.notice(data, loo, "gaussian", None)[0]
    assert first.key == "kr.notice_first_upload" and first.values["h"] == select_bandwidth(xs, ys, "gaussian")


@checks(kr_lesson.notice, over=(DATASET, N, NOISE), fixed={KERNEL: "constant"})
def test_the_constant_kernel_is_said_to_ignore_h(settings):
    """kr.notice_first_flat: the constant kernel's fit is the mean of y at every h (written out here) and its
    leave-one-out curve is flat, so the notice quotes no "optimum" but the one error, at every data setting."""
    for values in settings:
        data = data_of(values)
        curve = loo_cv_scores(data["x"], data["y"], "constant", [0.01, 0.2, 20.0]).numpy()
        assert np.ptp(curve) < 1e-12 * max(1.0, float(np.abs(curve).max()))
        errors = kr_lesson.preset_errors(data, "constant", presets(values[DATASET.key]).values())
        first = kr_lesson.notice(data, {"optimum": math.nan, "silverman": math.nan}, "constant", errors)[0]
        assert first.key == "kr.notice_first_flat" and "h" not in first.values
        assert first.values["mse"] == pytest.approx(np.mean((data["y"].mean() - data["true"]) ** 2), rel=1e-9)
    loo = kr_lesson.figures(settings[0])["loo_cv"]                         # nor does its figure mark an optimum
    names = [trace.name or "" for trace in loo.figure("en").data]
    assert not any(name.startswith(t("fig.loo_optimum")) for name in names), names
