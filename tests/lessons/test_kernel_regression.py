"""Claims of the Kernel regression page, checked on the data its figures draw."""

import math

import numpy as np
import pytest
import torch

from explorer import lessons
from explorer.data import DATASETS, make_dataset, query_grid
from explorer.i18n import t
from explorer.kernels import KERNELS, equivalent_bandwidth
from explorer.regression import (
    loo_cv_scores,
    nadaraya_watson,
    nw_weights,
    select_bandwidth,
    silverman_bandwidth,
)
from explorer.ui.controls import BANDWIDTHS, presets, snap_bandwidth
from tests.app.helpers import assert_clean, page, upload

WIDE = [k for k in KERNELS if KERNELS[k].canonical]          # every kernel with a width


def _fit(name, n, noise, seed, kernel, h):
    d = make_dataset(name, n, noise, seed)
    g = query_grid(d)
    est = nadaraya_watson(torch.tensor(g), torch.tensor(d.x), torch.tensor(d.y), kernel, h).numpy()
    return d, g, est


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_preset_labels_hold_at_each_datasets_defaults(name, seed):
    """nw.presets: at the dataset's own n and noise, "good" has the lowest error, clearly."""
    spec = DATASETS[name]
    mse = {}
    for label, h in presets(name).items():
        d, g, est = _fit(name, spec.default_n, spec.default_noise, seed, "gaussian", h)
        mse[label] = lessons.curve_mse(est, d.true_fn(g))
    assert lessons.preset_verdict(mse), mse
    assert mse["over-fit"] > 2 * mse["good"] and mse["over-smooth"] > 2 * mse["good"]
    assert all(h in BANDWIDTHS for h in presets(name).values())          # a preset is exactly on the grid


def test_presets_caption_follows_the_data_shown():
    """nw.presets at the defaults; nw.presets_fail when the data no longer bears the labels out."""
    at = page("kernel_regression")
    assert_clean(at)
    caption = next(c.value for c in at.caption if c.value.startswith("Presets"))
    listing = " · ".join(f"{h:g} {t('nw.preset.' + label)}" for label, h in presets("sine_mix").items())
    assert caption == t("nw.presets", presets=listing, kernel=t("kernel.gaussian"))
    at.slider(key="data.noise").set_value(0.0).run()        # no noise: the smallest h fits best
    caption = next(c.value for c in at.caption if c.value.startswith("Presets"))
    assert caption.startswith(t("nw.presets_fail", presets=listing, dataset=t("dataset.sine_mix"), n=200,
                                noise="0.3", kernel=t("kernel.gaussian"))[:60])
    d, g, est = _fit("sine_mix", 200, 0.0, 0, "gaussian", 0.01)
    _, _, good = _fit("sine_mix", 200, 0.0, 0, "gaussian", 0.2)
    assert lessons.curve_mse(est, d.true_fn(g)) < lessons.curve_mse(good, d.true_fn(g))


def test_picking_a_dataset_loads_its_defaults():
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("d2l").run()
    assert_clean(at)
    spec = DATASETS["d2l"]
    assert at.session_state["data.n"] == spec.default_n == 40
    assert at.session_state["data.noise"] == spec.default_noise == 1.0
    assert at.session_state["nw.bandwidth"] == spec.presets[1] == 0.5


def _moments(kernel):
    u = np.linspace(-40, 40, 800_001)
    k = KERNELS[kernel].profile(torch.tensor(u)).numpy()
    k = k / np.trapezoid(k, u)                              # normalised kernel
    return u, k, np.sqrt(np.trapezoid(u * u * k, u)), np.trapezoid(k * k, u)


@pytest.mark.parametrize("kernel", WIDE)
def test_kernel_widths_and_canonical_bandwidths_by_integration(kernel):
    """kr.width_text: the standard deviations it lists and the δ_K rule, by numerical integration."""
    _, _, sd, rk = _moments(kernel)
    stated = {"gaussian": 1, "boxcar": 1 / math.sqrt(3), "epanechnikov": 1 / math.sqrt(5),
              "triangular": 1 / math.sqrt(6), "laplace": math.sqrt(2)}[kernel]
    assert sd == pytest.approx(stated, rel=1e-4)
    assert KERNELS[kernel].sd == pytest.approx(sd, rel=1e-4)
    assert KERNELS[kernel].canonical == pytest.approx((rk / sd ** 4) ** 0.2, rel=1e-4)


SEEDS = range(5)
N_RANGE = (10, 200, 2000)            # the n slider's ends and its default
NOISE_RANGE = (0.0, 0.3, 2.0)        # the noise slider's ends and its default


def _width_text_on_page(name, n, noise, seed):
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value(name).run()
    at.slider(key="data.n").set_value(n).run()
    at.slider(key="data.noise").set_value(noise).run()
    at.number_input(key="data.seed").set_value(seed).run()
    assert_clean(at)
    return next(m.value for m in at.markdown if m.value.startswith(t("kr.width_text")[:40]))


@pytest.mark.sweep
@pytest.mark.parametrize("name", list(DATASETS))
def test_width_text_says_what_the_optima_do_at_every_seed(name):
    """kr.width_optima / kr.width_optima_not_closer: the page quotes the five global LOO optima's ratio raw and in
    Gaussian units (computed here with the canonical bandwidths written out, not the product's conversion), and
    says the units bring them closer exactly when they do; over seeds 0-4 at the dataset's defaults."""
    delta = {"gaussian": 0.7764, "boxcar": 1.3510, "epanechnikov": 1.7188, "triangular": 1.8882, "laplace": 0.5743}
    spec = DATASETS[name]
    for seed in SEEDS:
        d = make_dataset(name, spec.default_n, spec.default_noise, seed)
        optima = {k: select_bandwidth(d.x, d.y, k) for k in WIDE}
        units = [h * delta["gaussian"] / delta[k] for k, h in optima.items()]
        raw = max(optima.values()) / min(optima.values())
        ratio = max(units) / min(units)
        key = "kr.width_optima" if ratio < raw else "kr.width_optima_not_closer"
        text = _width_text_on_page(name, spec.default_n, spec.default_noise, seed)
        assert t(key, lo=f"{min(units):.3g}", hi=f"{max(units):.3g}", units=f"{ratio:.1f}", raw=f"{raw:.1f}") \
            in text, (seed, text)


@pytest.mark.sweep
def test_width_text_at_the_ends_of_the_n_and_noise_sliders():
    """The same sentence at the n and noise sliders' ends and middle (sine mix, seed 0): its numbers and its branch
    are the optima's."""
    for n in N_RANGE:
        for noise in NOISE_RANGE:
            d = make_dataset("sine_mix", n, noise, 0)
            agree = lessons.width_agreement({k: select_bandwidth(d.x, d.y, k) for k in WIDE})
            key = "kr.width_optima" if agree["closer"] else "kr.width_optima_not_closer"
            want = t(key, lo=f"{agree['lo']:.3g}", hi=f"{agree['hi']:.3g}", units=f"{agree['units']:.1f}",
                     raw=f"{agree['raw']:.1f}")
            assert want in _width_text_on_page("sine_mix", n, noise, 0), (n, noise)
    # Silverman's rule carries over by the same factor as the widths
    d = make_dataset("sine_mix", 200, 0.3, 0)
    for k in WIDE:
        assert silverman_bandwidth(d.x, k) == pytest.approx(silverman_bandwidth(d.x) * equivalent_bandwidth(1, k))


def test_kernel_regression_notice():
    """kr.notice, line by line, on the default data and over every kernel and the bandwidth range."""
    d = make_dataset("sine_mix", 200, 0.3, 0)
    g = torch.tensor(query_grid(d))
    x, y = torch.tensor(d.x), torch.tensor(d.y)
    for kernel in KERNELS:
        for h in (0.01, 0.05, 0.2, 1.0, 20.0):
            est = nadaraya_watson(g, x, y, kernel, h)
            ok = ~torch.isnan(est)
            assert bool(((est[ok] >= y.min() - 1e-12) & (est[ok] <= y.max() + 1e-12)).all())   # in [min y, max y]
            near = ((g[:, None] - x[None, :]).abs() <= h).any(1)
            if KERNELS[kernel].compact:
                assert torch.equal(~ok, ~near)                  # undefined exactly where no point is within h
            else:
                assert bool(ok.all())                           # Gaussian, Laplace (and constant) always defined
    # large h tends to the mean of y; small h follows the noise (rougher than the truth)
    wide = nadaraya_watson(g, x, y, "gaussian", 20.0)
    assert float((wide - y.mean()).abs().max()) < 0.1 * float(y.std())
    narrow = nadaraya_watson(g, x, y, "gaussian", 0.01).numpy()
    good = nadaraya_watson(g, x, y, "gaussian", 0.2).numpy()
    assert np.abs(np.diff(narrow, 2)).sum() > 5 * np.abs(np.diff(good, 2)).sum()
    # Silverman's rule and leave-one-out give different answers (the notice quotes both)
    assert abs(math.log(silverman_bandwidth(d.x) / select_bandwidth(d.x, d.y))) > 0.2


def test_loo_text_and_the_first_notice_line():
    """kr.loo_text: the curve is high at both ends; compact kernels have no score at the smallest h.
    kr.notice_first / kr.notice_error quote errors and the optimum that the page computes."""
    d = make_dataset("sine_mix", 200, 0.3, 0)
    hs = np.logspace(-2, np.log10(20), 41)
    scores = loo_cv_scores(d.x, d.y, "gaussian", hs).numpy()
    best = scores.min()
    assert scores[0] > 1.3 * best and scores[-1] > 3 * best
    assert math.isinf(loo_cv_scores(d.x, d.y, "boxcar", [0.01]).item())
    at = page("kernel_regression")
    first = next(m.value for m in at.markdown if m.value.startswith("- On this data"))
    h_opt = select_bandwidth(d.x, d.y, "gaussian")
    assert f"h ≈ {h_opt:.3g}" in first
    _, g, est = _fit("sine_mix", 200, 0.3, 0, "gaussian", 0.2)
    assert t("kr.notice_error", mse=f"{lessons.curve_mse(est, d.true_fn(g)):.3f}", h="0.2") in first


def test_formula_text_gaussian_weights_are_a_softmax():
    """kr.formula_text: with the Gaussian kernel, the NW weights are softmax_i(−(x − xᵢ)²/(2h²))."""
    d = make_dataset("sine_mix", 50, 0.3, 0)
    q = torch.linspace(-3, 3, 17, dtype=torch.float64)
    x = torch.tensor(d.x)
    ref = torch.softmax(-(q[:, None] - x[None, :]) ** 2 / (2 * 0.3 ** 2), dim=1)
    assert torch.allclose(nw_weights(q, x, "gaussian", 0.3), ref, atol=1e-14)


def test_undefined_readout_counts_the_queries_with_no_point_within_h():
    """kr.undefined: the count it prints is the number of grid queries with no training point within h."""
    at = page("kernel_regression")
    at.selectbox(key="nw.kernel").set_value("boxcar").run()
    at.select_slider(key="nw.bandwidth").set_value(0.01).run()
    d = make_dataset("sine_mix", 200, 0.3, 0)
    g = query_grid(d)
    empty = int((~(np.abs(g[:, None] - d.x[None, :]) <= 0.01).any(1)).sum())
    assert empty > 0
    assert any(f"undefined at {empty} of {len(g)} query points" in m.value for m in at.markdown)


def test_snap_caption():
    """kr.snap: every bandwidth from 0.01 to 20 snaps to a grid value within the percentage it quotes."""
    bound = lessons.snap_error(BANDWIDTHS)
    worst = max(max(snap_bandwidth(h) / h, h / snap_bandwidth(h)) - 1 for h in np.logspace(-2, np.log10(20), 4001))
    assert worst <= bound + 1e-12 and worst > 0.9 * bound
    assert bound < 0.05
    assert f"{bound:.1%}" in t("kr.snap", pct=f"{bound:.1%}")


def test_upload_presets_and_notice():
    """nw.presets_upload / kr.notice_first_upload: an upload gets unlabelled presets and the LOO optimum
    computed on its own rows."""
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("upload").run()
    rows = "x,y\n" + "\n".join(f"{x:.3f},{math.sin(x) + 0.1 * math.cos(7 * x):.4f}" for x in np.linspace(-3, 3, 60))
    upload(at, ("s.csv", rows.encode(), "text/csv"))
    assert_clean(at)
    assert any(c.value == t("nw.presets_upload") for c in at.caption)
    grid = np.linspace(-3, 3, 60)
    xs = np.array([float(f"{x:.3f}") for x in grid])          # the values the file holds
    ys = np.array([float(f"{math.sin(x) + 0.1 * math.cos(7 * x):.4f}") for x in grid])
    h = select_bandwidth(xs, ys, "gaussian")
    assert any(m.value.startswith(t("kr.notice_first_upload", h=f"{h:.3g}").strip()) for m in at.markdown)
