"""``explorer.plot``: each one-liner draws the numbers of the function it names, in the lessons' style."""

import numpy as np
import pytest

from explorer import plot
from explorer.figures.describe import data_array, description
from explorer.figures.style import LECTURE
from explorer.lessons import lesson
from explorer.lessons.params import defaults
from explorer.regression import nadaraya_watson, nw_weights
from explorer.training import Trainer


def values(trace, axis):
    return np.asarray(data_array(trace[axis]), dtype=float)


def test_fit_draws_the_nadaraya_watson_estimate_of_every_kernel_and_bandwidth():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 6, 40))
    y = np.sin(x) + 0.2 * rng.normal(size=40)
    fig = plot.fit(x=x, y=y, kernel=["gaussian", "epanechnikov"], bandwidth=[0.2, 1.0], true=np.sin)
    drawn = {tr.name: tr for tr in fig.data}
    assert set(drawn) == {"training points", "true function", "gaussian, h = 0.2", "gaussian, h = 1",
                          "epanechnikov, h = 0.2", "epanechnikov, h = 1"}
    for kernel in ("gaussian", "epanechnikov"):
        for h in (0.2, 1.0):
            line = drawn[f"{kernel}, h = {h:g}"]
            grid = values(line, "x")
            want = nadaraya_watson(grid, x, y, kernel, h).numpy()
            np.testing.assert_allclose(values(line, "y"), want, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(values(drawn["true function"], "y"), np.sin(values(drawn["true function"], "x")))
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert "Line chart" in description(fig)


def test_attention_draws_the_matrix_it_is_given_rows_as_queries():
    w = nw_weights([0.0, 0.5, 2.0], [0.0, 1.0, 2.0, 3.0], "gaussian", 0.7)
    fig = plot.attention(weights=w, queries=[0.0, 0.5, 2.0], keys=[0.0, 1.0, 2.0, 3.0], lang="zh")
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=float), w.numpy())
    assert fig.layout.xaxis.title.text == "键" and fig.layout.yaxis.title.text == "查询"
    with pytest.raises(ValueError, match="2-dimensional"):
        plot.attention(weights=np.ones(3))


def test_heads_and_entropy_show_the_trainers_own_numbers():
    trainer = Trainer.for_task("induction", seed=0, n_layers=2, n_heads=2)
    with pytest.raises(ValueError, match="no steps yet"):
        plot.entropy(trainer=trainer)
    trainer.step(4)
    maps = trainer.attention_maps()
    fig = plot.heads(trainer=trainer)
    for i, trace in enumerate(fig.data[:4]):
        np.testing.assert_allclose(np.asarray(trace.z, dtype=float), maps[i // 2][i % 2].numpy(), atol=1e-7)
    ent = plot.entropy(trainer=trainer)
    first = next(tr for tr in ent.data if tr.name == "L1 H0")
    np.testing.assert_allclose(values(first, "y"), [row["entropy_l1_h0"] for row in trainer.history])


def test_lesson_gives_the_pages_figure_at_the_settings_asked_for_and_names_what_is_allowed():
    module = lesson("scaling").module
    settings = {**defaults(module.PARAMS), "scale.d": 256}
    want = module.figures(settings)["logit_std"].figure("en")
    got = plot.lesson(name="scaling", figure="logit_std", settings={"scale.d": 256})
    for a, b in zip(got.data, want.data, strict=True):
        np.testing.assert_allclose(values(a, "y"), values(b, "y"))
    with pytest.raises(ValueError, match=r"no setting d_max; its settings are scale\.d"):
        plot.lesson(name="scaling", figure="logit_std", settings={"d_max": 256})
    with pytest.raises(ValueError, match="figure must be one of logit_std"):
        plot.lesson(name="scaling", figure="nope")
    with pytest.raises(ValueError, match="name must be one of kernel_regression"):
        plot.lesson(name="nope", figure="fit")
    with pytest.raises(ValueError, match=r"scale\.d must be one of .*; got 1000000000"):
        plot.lesson(name="scaling", figure="logit_std", settings={"scale.d": 10**9})
    with pytest.raises(ValueError, match=r"nw\.bandwidth must be one of 0\.01, .*\(133 values\); got 0\.3"):
        plot.lesson(name="kernel_regression", figure="fit", settings={"nw.bandwidth": 0.3})


def test_lecture_mode_draws_larger_type_and_thicker_lines():
    normal = plot.kernels(names=["gaussian"])
    big = plot.kernels(names=["gaussian"], lecture=True)
    assert big.layout.font.size == LECTURE.font_size > (normal.layout.font.size or 0)
    assert big.data[0].line.width == LECTURE.line_width > normal.data[0].line.width


def test_fit_legends_give_a_bandwidth_to_three_significant_digits_unless_two_would_read_alike():
    """For slides: "h = 0.0396", not "h = 0.0395508" (a leave-one-out optimum); two bandwidths that agree to three
    digits keep as many as tell them apart, so no curve loses its label."""
    x = np.linspace(0, 6, 30)
    names = [t.name for t in plot.fit(x=x, y=np.sin(x), bandwidth=[0.0395508, 1.0]).data][1:]
    assert names == ["h = 0.0396", "h = 1"]
    close = [t.name for t in plot.fit(x=x, y=np.sin(x), bandwidth=[0.12341, 0.12349]).data][1:]
    assert close == ["h = 0.1234", "h = 0.1235"]
