import numpy as np
import pytest

from explorer.lessons.shared import TEMPERATURES
from tests.app.helpers import assert_clean, chart_data, page, set_bandwidth


def test_heatmap_default_and_controls():
    at = page("attention_heatmap")
    assert_clean(at)
    z0 = chart_data(at, "heatmap")[0]["z"]
    assert z0.min() >= 0
    np.testing.assert_allclose(np.asarray(z0, float).sum(axis=1), 1.0, atol=1e-5)

    set_bandwidth(at, 0.05)
    assert_clean(at)
    assert not np.allclose(chart_data(at, "heatmap")[0]["z"], z0)

    at.slider(key="heat.query_x").set_value(1.5).run()
    assert_clean(at)
    picked = next(c.value for c in at.markdown if c.value.startswith("Query x = "))
    xs = np.asarray(next(t for t in chart_data(at, "entropy") if "lines" in t.get("mode"))["x"], float)
    step = float(np.diff(xs).max())                                        # the page's query grid
    assert abs(float(picked.split("=")[1].split(":")[0]) - 1.5) <= step / 2    # the query nearest x = 1.5
    at.multiselect(key="heat.sweep").set_value([0.05, 1.0]).run()
    assert_clean(at)
    assert len(chart_data(at, "sweep")) == 2
    at.selectbox(key="nw.kernel").set_value("boxcar").run()
    assert_clean(at)


def test_heatmap_downsamples_big_matrices_but_says_so():
    at = page("attention_heatmap")
    at.slider(key="heat.n_queries").set_value(1000)
    at.slider(key="data.n").set_value(2000).run()
    assert_clean(at)
    z = chart_data(at, "heatmap")[0]["z"]
    assert z.size <= 250_000
    assert any("block-averaged" in c.value for c in at.caption)


def test_softmax_kernel_page_shows_the_identity_and_its_failure():
    at = page("softmax_kernel", timeout=120)
    assert_clean(at)
    assert float(at.metric[0].value) < 1e-7          # spread 0: dot == Gaussian
    at.slider(key="sk.spread").set_value(0.5).run()
    assert_clean(at)
    assert float(at.metric[0].value) > 1e-3          # unequal norms: they differ
    assert float(at.metric[1].value) < 1e-7          # the bias repairs it
    for key, value in [("sk.d", 64), ("sk.n_keys", 40), ("sk.seed", 3), ("sk.k_top", 2), ("sk.hidden", 3)]:
        widget = at.number_input(key=key) if key == "sk.seed" else at.slider(key=key)
        widget.set_value(value).run()
        assert_clean(at)
        if key == "sk.d":       # a move of d reruns only its parts: read the whole page (helpers.set_bandwidth)
            at.run()
    at.toggle(key="sk.tau_sqrt_d").set_value(False).run()
    at.select_slider(key="sk.tau").set_value(TEMPERATURES[10]).run()
    assert_clean(at)


def test_softmax_kernel_page_with_more_points_than_the_learned_layers_see():
    """Above 300 points the learned bandwidth and the attention layer train on a subsample; the page's text
    reads the layer's weights over those keys."""
    from tests.app.helpers import assert_clean, page

    at = page("softmax_kernel", timeout=180)
    at.session_state["data.n"] = 1000
    at.run()
    assert_clean(at)
    assert any("300" in m.value for m in at.markdown)


def _specs(at) -> dict[str, str]:
    """The page's charts by their keys (an element's id ends with its key)."""
    return {el.proto.id.rsplit("-", 1)[-1]: el.proto.spec for el in at.get("plotly_chart")}


def test_a_bandwidth_move_reruns_only_its_parts():
    """On the heatmap page a bandwidth move redraws the matrix, the one query's row and entropy, their sentences
    and the notice (it quotes h), not the sweep of other bandwidths (four more matrices); those parts draw what a
    whole run draws at the new h. With no bandwidth picked the sweep shows h, and the move reruns the whole page."""
    at = page("attention_heatmap")
    before = _specs(at)
    assert set(before) == {"heatmap", "query_row", "entropy", "sweep"}
    at.select_slider(key="nw.bandwidth").set_value(0.5).run()
    assert_clean(at)
    alone = _specs(at)
    assert set(alone) == {"heatmap", "query_row", "entropy"} and not at.title
    assert all(alone[k] != before[k] for k in ("heatmap", "query_row"))
    assert any(m.value.startswith("Query x =") for m in at.markdown) and at.query_params["nw.bandwidth"] == "0.5"
    notice = [m.value for m in at.markdown if "attention" in m.value and not m.value.startswith("Query x")]
    at.run()
    whole = _specs(at)
    assert all(whole[k] == alone[k] for k in alone) and whole["sweep"] == before["sweep"]
    assert notice and all(any(m.value == n for m in at.markdown) for n in notice)     # the notice as a whole run
    at.multiselect(key="heat.sweep").set_value([]).run()
    set_bandwidth(at, 1.0)
    at.select_slider(key="nw.bandwidth").set_value(2.0).run()
    assert len(_specs(at)) == 4 and at.title                    # the sweep shows h: the whole page


def test_a_move_of_d_on_softmax_is_a_kernel_reruns_only_its_parts():
    """A move of d (τ = √d) redraws the side-by-side comparison, its numbers and the temperature and top-k
    sections, not the learned bandwidth or the parametric layer (trained on the data, whatever d); those parts
    draw what a whole run draws at the new d. Before the page's question is answered the page stops at it, and
    the move reruns the whole page; once answered, the parts again."""
    at = page("softmax_kernel", timeout=180)
    before = _specs(at)
    at.slider(key="sk.d").set_value(64).run()
    assert_clean(at)
    alone = _specs(at)
    assert set(alone) == {"side_by_side", "spread_curve", "tau_sweep", "h_sweep", "topk_curve", "topk_heatmap"}
    assert not at.title and at.query_params["sk.d"] == "64" and alone["side_by_side"] != before["side_by_side"]
    assert any("τ = 8" in m.value for m in at.markdown)                    # the widths at τ = √64
    at.run()
    whole = _specs(at)
    assert all(whole[k] == alone[k] for k in alone) and whole["learned_h"] == before["learned_h"]

    at = page("softmax_kernel", timeout=180)
    at.session_state["ui.predict"] = True
    at.run()
    at.slider(key="sk.d").set_value(64).run()
    assert_clean(at)
    assert at.title and not _specs(at)                                     # the page waits for the answer
    at.radio(key="predict.sk.gap.pick").set_value(0).run()
    at.button(key="predict.sk.gap.reveal").click().run()
    assert_clean(at)
    assert "learned_h" in _specs(at)                                       # the reveal draws the whole page
    at.slider(key="sk.d").set_value(32).run()
    assert_clean(at)
    assert "learned_h" not in _specs(at) and "side_by_side" in _specs(at)


def test_the_bandwidth_lesson_trains_the_grid_point_it_lacks_behind_its_progress_bar(monkeypatch):
    """The kept grid points are in place (tests/conftest.py); one of the defaults' five is taken away: the page
    trains it (its progress bar says which), draws the sweep with it, and the point is the one training gives."""
    import streamlit as st

    from explorer.i18n import t
    from explorer.lessons import icl_bandwidth as IB
    from explorer.lessons.params import defaults

    v = defaults(IB.PARAMS)
    key = (IB.LIPSCHITZ[-1], v[IB.NOISE.key], v[IB.N.key], v[IB.SEED.key])
    kept = IB._POINTS.pop(key)
    said = []
    progress = st.delta_generator.DeltaGenerator.progress

    def progress_told(self, value, text=None):
        said.append(text)
        return progress(self, value, text=text)
    monkeypatch.setattr(st.delta_generator.DeltaGenerator, "progress", progress_told)
    try:
        at = page("icl_bandwidth")
        assert_clean(at)
        assert said == [t("ib.training", "en", l=key[0], i=1, of=1)], said
        assert key in IB._POINTS and IB.missing(*key[1:]) == []
        for name, value in kept.items():
            assert IB._POINTS[key][name] == pytest.approx(value, rel=1e-4), name
        assert len(chart_data(at, "learned_window")[0]["x"]) == len(IB.LIPSCHITZ)
    finally:
        IB._POINTS[key] = kept
