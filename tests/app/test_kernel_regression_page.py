import math

import numpy as np

from explorer.data import DATASETS
from tests.app.helpers import assert_clean, chart_data, page, set_bandwidth


def estimate(at, label_start):
    for trace in chart_data(at, "fit"):
        if trace.get("name", "").startswith(label_start):
            return np.asarray(trace["y"], dtype=float)
    raise AssertionError(f"no trace starting with {label_start!r}")


def test_default_run_draws_every_figure():
    at = page("kernel_regression")
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 3
    assert any("MSE against the true function" in m.value for m in at.markdown)
    assert at.session_state["nw.bandwidth"] == 0.2          # the sine mix's "good" preset


def test_slider_preset_and_kernel_each_change_the_estimate():
    at = page("kernel_regression")
    before = estimate(at, "Gaussian, h = 0.2")

    set_bandwidth(at, 0.5)
    assert_clean(at)
    after_slider = estimate(at, "Gaussian, h = 0.5")
    assert not np.allclose(after_slider, before)

    at.button(key="preset.over-smooth").click().run()
    assert_clean(at)
    assert at.session_state["nw.bandwidth"] == 5.0
    gaussian_10 = estimate(at, "Gaussian, h = 5")
    assert not np.allclose(gaussian_10, after_slider)

    at.selectbox(key="nw.kernel").set_value("boxcar").run()
    assert_clean(at)
    assert not np.allclose(estimate(at, "Boxcar, h = 5"), gaussian_10)


def test_tiny_bandwidth_with_a_compact_kernel_reports_undefined_queries():
    at = page("kernel_regression")
    at.selectbox(key="nw.kernel").set_value("epanechnikov").run()
    set_bandwidth(at, 0.01)
    assert_clean(at)
    assert any("undefined at" in m.value for m in at.markdown)
    ys = estimate(at, "Epanechnikov, h = 0.01")
    assert np.isnan(ys).any() and not np.isnan(ys).all()


def test_use_the_optimum_moves_the_slider_near_the_loo_optimum():
    at = page("kernel_regression")
    at.button(key="use_optimum").click().run()
    assert_clean(at)
    h = at.session_state["nw.bandwidth"]
    optimum = float(at.metric[0].value)
    assert abs(math.log(h / optimum)) < math.log(1.03)


def test_overlay_and_compare_add_lines():
    at = page("kernel_regression")
    n_before = len(chart_data(at, "fit"))
    at.toggle(key="nw.overlay").set_value(True).run()
    at.multiselect(key="nw.compare").set_value(["laplace"]).run()
    assert_clean(at)
    # 1 kernel x 1 h  ->  the chosen kernel at the 3 presets (0.01, 0.2 = h, 5) + Laplace at h
    assert len(chart_data(at, "fit")) == n_before - 1 + 4


def test_every_kernel_and_every_overlay_stay_readable():
    """All five other kernels compared with three bandwidths overlaid: 3 + 5 = 8 curves, each its own look (six
    colours, then a colour again with another marker and dash), one
    table row each instead of a sentence each; the compare list never offers the chosen kernel, and choosing a
    compared kernel as the main one drops it from the comparison."""
    from explorer.kernels import KERNELS

    at = page("kernel_regression")
    offered = at.multiselect(key="nw.compare").options
    assert "Gaussian" not in offered and len(offered) == len(KERNELS) - 1
    at.toggle(key="nw.overlay").set_value(True).run()
    at.multiselect(key="nw.compare").set_value([k for k in KERNELS if k != "gaussian"]).run()
    assert_clean(at)
    curves = [t for t in chart_data(at, "fit") if "lines" in t.get("mode") and "h = " in t.get("name", "")]
    assert len(curves) == 3 + len(KERNELS) - 1
    assert len({(t["line"]["color"], t["line"]["dash"], t["marker"]["symbol"]) for t in curves}) == len(curves)
    assert len({t["line"]["color"] for t in curves}) == 6
    table = at.dataframe[0].value
    assert len(table) == len(curves) and not any("MSE against" in m.value for m in at.markdown)
    at.selectbox(key="nw.kernel").set_value("laplace").run()
    assert_clean(at)
    assert "laplace" not in at.session_state["nw.compare"] and "Laplace" not in at.multiselect(key="nw.compare").options


def test_the_typed_bandwidth_box_shows_h_says_when_it_snaps_and_ignores_an_empty_box():
    at = page("kernel_regression")
    set_bandwidth(at, 0.5)
    assert at.text_input(key="nw.typed").proto.placeholder == "0.5"
    at.text_input(key="nw.typed").input("0.7").run()
    assert_clean(at)
    h = at.session_state["nw.bandwidth"]
    assert h != 0.7 and abs(h / 0.7 - 1) < 0.03
    assert any("0.7 lies between two steps" in c.value and f"h = {h:g}" in c.value for c in at.caption)
    at.text_input(key="nw.typed").input("").run()
    assert_clean(at)
    assert not at.error and at.session_state["nw.bandwidth"] == h


def _specs(at) -> dict[str, str]:
    """The page's charts by their keys (an element's id ends with its key)."""
    return {el.proto.id.rsplit("-", 1)[-1]: el.proto.spec for el in at.get("plotly_chart")}


def test_a_bandwidth_move_reruns_only_its_parts():
    """Moving the bandwidth reruns the fit with its readouts, the LOO curve (it marks the current h) and the typed
    box (its placeholder is h), nothing else; those parts draw what a whole run draws at the new h, write the link
    and the export names. A move of any other control, and a typed h, rerun the whole page."""
    at = page("kernel_regression")
    before = _specs(at)
    assert set(before) == {"fit", "shapes", "loo"}
    at.select_slider(key="nw.bandwidth").set_value(0.5).run()
    assert_clean(at)
    alone = _specs(at)
    assert set(alone) == {"fit", "loo"}                                        # the kernel shapes were not redrawn
    assert not at.title and not at.select_slider and not at.selectbox           # nor the page around the parts
    assert [t.proto.placeholder for t in at.text_input] == ["0.5"]
    assert [m.value for m in at.markdown if m.value.startswith("**Gaussian, h = 0.5**")]
    assert at.query_params["nw.bandwidth"] == "0.5"
    assert at.session_state["ui.export_stem"] == "kernel-regression_gaussian_h0.5"
    assert all(alone[k] != before[k] for k in alone)
    at.run()                                            # the whole page at h = 0.5: the same two figures
    whole = _specs(at)
    assert len(whole) == 3 and all(whole[k] == alone[k] for k in alone)

    at.selectbox(key="nw.kernel").set_value("laplace").run()         # another control: the whole page
    assert_clean(at)
    assert len(_specs(at)) == 3 and at.title
    at.text_input(key="nw.typed").input("abc").run()                 # a refused h: why, and h as it was
    assert at.error and at.session_state["nw.bandwidth"] == 0.5
    at.text_input(key="nw.typed").input("2").run()                   # a typed h: the slider too, so the page
    assert_clean(at)
    assert len(_specs(at)) == 3 and at.select_slider(key="nw.bandwidth").value == 2.0


def test_a_bandwidth_move_before_the_question_is_answered_reruns_the_whole_page():
    """With predict-first on (lecture mode's default) the page stops at the LOO question until it is answered, so
    the LOO part is not drawn: a bandwidth move then reruns the whole page (no error), and once the question is
    answered it reruns the parts again."""
    at = page("kernel_regression")
    at.session_state["ui.predict"] = True
    at.run()
    assert set(_specs(at)) == {"fit", "shapes"}
    at.select_slider(key="nw.bandwidth").set_value(0.5).run()
    assert_clean(at)
    assert set(_specs(at)) == {"fit", "shapes"} and at.title and at.query_params["nw.bandwidth"] == "0.5"
    at.radio(key="predict.kr.loo.pick").set_value(0).run()
    at.button(key="predict.kr.loo.reveal").click().run()
    assert_clean(at)
    assert set(_specs(at)) == {"fit", "shapes", "loo"}
    at.select_slider(key="nw.bandwidth").set_value(1.0).run()
    assert_clean(at)
    assert set(_specs(at)) == {"fit", "loo"}


def test_picking_a_dataset_loads_its_defaults():
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("d2l").run()
    assert_clean(at)
    spec = DATASETS["d2l"]
    assert at.session_state["data.n"] == spec.default_n == 40
    assert at.session_state["data.noise"] == spec.default_noise == 1.0
    assert at.session_state["nw.bandwidth"] == spec.presets[1] == 0.5


def test_each_kernels_optimum_is_computed_when_the_width_rule_is_opened_not_before():
    """The box comparing the five kernels' leave-one-out optima (most of a 5,000-row upload's first fit) computes
    them when a student opens it; closed, the page computes the shown kernel's optimum only."""
    from explorer.ui import cache

    cache.loo_optimum.clear()
    at = page("kernel_regression")
    assert_clean(at)
    said = "One h is a different width for each kernel"
    assert len(cache.loo_optimum.kept) == 0 and not any(said in m.value for m in at.markdown)
    at.session_state["kr.width_open"] = True
    at.run()
    assert_clean(at)
    assert len(cache.loo_optimum.kept) == 5 and any(said in m.value for m in at.markdown)


def test_a_curve_flat_below_its_minimum_names_no_optimum():
    """d2l, 10 points, seed 0: the Gaussian smoother's leave-one-out curve is flat below its minimum (found here
    with bandwidth.flat_below on the same points). The tile then says where the flat stretch ends instead of naming
    an optimum, offers no 'Use the optimum', and the LOO chart's legend marks the flat stretch, not an optimum; on
    the default data (a curve with a dip) the optimum is named, as before."""
    from explorer.bandwidth import flat_below, search_grid, select_bandwidth
    from explorer.data import make_dataset
    from explorer.i18n import t

    at = page("kernel_regression")
    assert at.metric[0].label == t("kr.optimum", "en") and at.button(key="use_optimum")
    at.selectbox(key="data.name").set_value("d2l").run()
    at.slider(key="data.n").set_value(10).run()
    assert_clean(at)
    data = make_dataset("d2l", n=10, noise=at.session_state["data.noise"], seed=at.session_state["data.seed"])
    edge = flat_below(data.x, data.y, "gaussian", select_bandwidth(data.x, data.y, "gaussian"))
    assert edge is not None

    def loo(h):                         # leave-one-out MSE written out: each point from the others' Gaussian weights
        logits = -0.5 * ((data.x[:, None] - data.x[None, :]) / h) ** 2
        np.fill_diagonal(logits, -np.inf)
        w = np.exp(logits - logits.max(1, keepdims=True))       # (shifted: at small h every weight underflows)
        return float(np.mean((w @ data.y / w.sum(1) - data.y) ** 2))

    below = [h for h in search_grid(data.x, "gaussian") if h <= edge]
    assert len(below) > 1 and max(abs(loo(h) / loo(below[0]) - 1) for h in below) < 1e-6    # flat up to the edge
    assert at.metric[0].label == t("kr.optimum_flat", "en") and at.metric[0].value == f"{edge:.3g}"
    assert not [b for b in at.button if b.key == "use_optimum"]
    names = [trace.get("name", "") for trace in chart_data(at, "loo")]
    assert any(n.startswith(t("fig.loo_flat", "en")) for n in names)
    assert not any(n.startswith(t("fig.loo_optimum", "en")) for n in names)
