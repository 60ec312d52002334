"""The main figure follows the thumb: each lesson page's main chart carries frames of itself at values of its
principal control, and a plotly slider that plays them (what the browser draws during a drag is checked in
tests/e2e/test_follow.py). Here: the frames hold the right figure at each value, against references computed
apart from the page (the Nadaraya-Watson fit itself, softmax weights with masked keys at zero), at the control's
ends and middle; the slider starts at the page's value; a released step sets the page's control."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.data import dataset_arrays
from explorer.lessons import kernel_regression, masking, scaling
from explorer.lessons.shared import BANDWIDTH
from explorer.regression import nadaraya_watson
from explorer.ui.follow import MAX_STEPS, frame, steps, varying
from tests.app.helpers import _decode, assert_clean, page, set_bandwidth


def followed(at: AppTest) -> dict:
    """The page's chart that follows a control, as its figure dict (there is one per page)."""
    out = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    out = [spec for spec in out if (spec["layout"].get("meta") or {}).get("follow")]
    assert len(out) == 1, f"{len(out)} charts follow a control"
    return out[0]


def played(spec: dict) -> list[tuple[str, dict]]:
    """(step value as a link writes it, the frame the step plays), in the slider's order: a step of a figure whose
    frames move lines animates its frame by name; a step of one that needs a whole redraw does nothing itself and
    the component draws the frame its position names (``layout.meta.frames``, looked up by name in the browser)."""
    frames = {f["name"]: f for f in spec["frames"]}
    steps_ = spec["layout"]["sliders"][0]["steps"]
    if all(s["method"] == "animate" for s in steps_):
        return [(s["value"], frames[s["args"][0][0]]) for s in steps_]
    assert all(s["method"] == "skip" for s in steps_) and spec["layout"]["meta"]["redraw"]
    names = spec["layout"]["meta"]["frames"]
    assert len(names) == len(steps_) == len(spec["frames"])
    return [(s["value"], frames[name]) for s, name in zip(steps_, names, strict=True)]


def active_value(spec: dict) -> str:
    slider = spec["layout"]["sliders"][0]
    return slider["steps"][slider["active"]]["value"]


# ----------------------------------------------------------------------------- the grid and the frames' parts
def test_steps_keep_both_ends_and_stay_within_the_options():
    options = BANDWIDTH.options
    grid = steps(BANDWIDTH)
    assert len(grid) <= MAX_STEPS and grid[0] == options[0] and grid[-1] == options[-1]
    assert all(g in options for g in grid) and grid == sorted(grid)
    narrowed = steps(masking.VALID, hi=5)                    # a slider the page narrows (valid ≤ length)
    assert narrowed == [0, 1, 2, 3, 4, 5]
    wide = steps(masking.VALID)
    assert wide[0] == 0 and wide[-1] == 32 and len(wide) <= MAX_STEPS


def test_frames_carry_only_what_changes_and_skip_other_shapes():
    def fig(y, name, title="t"):
        return {"data": [{"type": "scatter", "x": np.arange(3.0), "y": np.arange(3.0)},
                         {"type": "scatter", "x": np.arange(3.0), "y": np.asarray(y, float), "name": name}],
                "layout": {"title": {"text": title}}}
    figs = [fig([0, 1, 2], "a"), fig([0, 1, 3], "b"), fig([0, 1, 3], "b", "u")]
    props, layout = varying(figs)
    assert props == {1: ["name", "y"]} and layout == ["title"]
    f = frame(figs[1], 0.5, (props, layout))
    assert f["traces"] == [1] and f["data"][0]["type"] == "scatter" and f["data"][0]["name"] == "b"
    np.testing.assert_array_equal(f["data"][0]["y"], [0, 1, 3])
    assert f["layout"] == {"title": {"text": "t"}} and f["name"] == "0.5"
    assert varying([fig([0, 1, 2], "a")] * 3) is None                     # nothing moves: no frames
    other = {"data": [{"type": "heatmap", "z": np.eye(2)}], "layout": {}}
    assert varying([figs[0], other]) is None                              # traces change kind: no frames


# ----------------------------------------------------------------------------- each page's frames, checked
@pytest.mark.parametrize("h", [0.01, 0.2, 20.0])              # the slider's ends and the sine mix's default
def test_kernel_regression_frames_are_the_fit_at_each_step(h):
    at = page("kernel_regression")
    set_bandwidth(at, h)
    assert_clean(at)
    spec = followed(at)
    assert float(active_value(spec)) == pytest.approx(h)
    d = dataset_arrays("sine_mix", 200, 0.3, 0)
    values = []
    for value, f in played(spec):
        h_step = float(value)
        values.append(h_step)
        (trace,) = [t for t in f["data"] if "y" in t]
        expected = nadaraya_watson(d["x_grid"], d["x"], d["y"], "gaussian", h_step).numpy()
        np.testing.assert_allclose(_decode(trace["y"]), expected, rtol=2e-6, atol=2e-6, equal_nan=True)
        assert f"h = {h_step:g}" in trace["name"]
    assert values == sorted(values) and len(values) <= MAX_STEPS + 1
    assert values[0] == BANDWIDTH.options[0] and values[-1] == BANDWIDTH.options[-1]


def test_masking_frames_follow_the_valid_length_only_when_the_mask_has_one():
    at = page("masking")
    assert not [el for el in at.get("plotly_chart")
                if (json.loads(el.proto.spec)["layout"].get("meta") or {}).get("follow")]     # causal: no length
    at.selectbox(key="mask.kind").set_value("padding").run()
    for length in (2, 8, 32):                                     # the length slider's ends and default
        at.slider(key="mask.length").set_value(length).run()
        assert_clean(at)
        spec = followed(at)
        shown = played(spec)
        valid_now = at.session_state["mask.valid"]             # kept from before, clamped to the length
        assert [int(v) for v, _ in shown] == sorted({*steps(masking.VALID, hi=length), valid_now})
        assert int(active_value(spec)) == valid_now
        for value, f in shown:
            valid = int(value)
            z = _decode(f["data"][0]["z"]).astype(float)           # the correct (pre-softmax) weights
            if valid == 0:
                continue                                           # no key left: nothing to weigh
            np.testing.assert_allclose(z[:, valid:], 0, atol=1e-6)
            np.testing.assert_allclose(z.sum(1), 1, atol=1e-5)


def test_scaling_frames_mark_each_d():
    at = page("scaling")
    assert_clean(at)
    spec = followed(at)
    shown = played(spec)
    assert [int(v) for v, _ in shown] == list(scaling.D.options)   # 11 values: every one gets a frame
    for value, f in shown:
        marks = [s.get("x0") for s in f["layout"].get("shapes", [])] + \
            [a.get("x") for a in f["layout"].get("annotations", [])]
        assert any((m is not None and np.isclose(float(m), np.log10(int(value)))) or m == int(value)
                   for m in marks), f"no mark at d = {value}"


@pytest.mark.parametrize("name, control", [("softmax_kernel", "sk.d"), ("efficient_attention", "ef.m"),
                                           ("attention_heatmap", "nw.bandwidth")])
def test_each_step_plays_a_different_figure(name, control):
    at = page(name, timeout=120)
    assert_clean(at)
    spec = followed(at)
    assert spec["layout"]["meta"]["follow"] == control
    shown = played(spec)
    assert len(shown) >= 3
    arrays = [json.dumps(f["data"]) for _, f in shown]
    assert len(set(arrays)) == len(arrays), "two steps play the same figure"


def test_the_attention_matrix_follows_a_drag_with_frames_of_a_few_rows():
    """The heatmap's frames hold at most FRAME_ROWS query rows (the release redraws every row): twelve frames of
    the default 100 x 200 matrix made each rerun send 1.5 MB. With 2,000 keys a frame would pass FRAME_CELLS: no
    frames, the matrix is drawn for the value the slider is released at."""
    from explorer.ui.follow import FRAME_CELLS, FRAME_ROWS

    def rows(z) -> int:                  # plotly's typed array ({"shape": "100,200", ...}) or a nested list
        return int(str(z["shape"]).split(",")[0]) if isinstance(z, dict) else len(z)

    at = page("attention_heatmap", timeout=120)
    spec = followed(at)
    assert rows(spec["data"][0]["z"]) == 100
    shown = played(spec)                  # (the frame at the current h is the drawn figure's own: every row)
    assert len(shown) >= 3 and all(rows(f["data"][0]["z"]) <= FRAME_ROWS for v, f in shown if float(v) != 0.2)
    at.slider(key="data.n").set_value(2000).run()
    assert_clean(at)
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert FRAME_ROWS * 2000 > FRAME_CELLS and not any((c["layout"].get("meta") or {}).get("follow") for c in charts)


def test_softmax_kernel_follows_the_temperature_once_it_is_free():
    at = page("softmax_kernel", timeout=120)
    at.toggle(key="sk.tau_sqrt_d").set_value(False).run()
    assert_clean(at)
    assert followed(at)["layout"]["meta"]["follow"] == "sk.tau"


# ----------------------------------------------------------------------------- a release sets the control
def _release_script():
    import streamlit as st

    from explorer.lessons.shared import BANDWIDTH
    from explorer.ui.control import draw
    from explorer.ui.follow import take_value

    raw = st.session_state.get("released")
    if raw is not None:
        st.session_state["taken"] = take_value(BANDWIDTH, raw)
    draw(BANDWIDTH)


def test_a_released_step_sets_the_control_and_a_bad_one_changes_nothing():
    at = AppTest.from_function(_release_script).run()
    assert at.session_state["nw.bandwidth"] == 0.2
    at.session_state["released"] = "0.5"
    at.run()
    assert at.session_state["taken"] is True and at.session_state["nw.bandwidth"] == 0.5
    assert at.select_slider(key="nw.bandwidth").value == 0.5
    at.session_state["released"] = "0.123"                  # not one of the slider's values
    at.run()
    assert at.session_state["taken"] is False and at.session_state["nw.bandwidth"] == 0.5
    assert kernel_regression.BANDWIDTH is BANDWIDTH
