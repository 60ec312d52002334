import numpy as np

from explorer.lessons.shared import TEMPERATURES
from tests.app.helpers import assert_clean, chart_data, page


def test_heatmap_default_and_controls():
    at = page("attention_heatmap")
    assert_clean(at)
    z0 = chart_data(at, "heatmap")[0]["z"]
    assert z0.min() >= 0
    np.testing.assert_allclose(np.asarray(z0, float).sum(axis=1), 1.0, atol=1e-5)

    at.select_slider(key="nw.bandwidth").set_value(0.05).run()
    assert_clean(at)
    assert not np.allclose(chart_data(at, "heatmap")[0]["z"], z0)

    at.slider(key="heat.query_x").set_value(1.5).run()
    assert_clean(at)
    picked = next(c.value for c in at.markdown if c.value.startswith("Query x = "))
    xs = np.asarray(next(t for t in chart_data(at, "entropy") if t.get("mode") == "lines")["x"], float)
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
