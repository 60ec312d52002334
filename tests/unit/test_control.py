"""Settings declared once (``explorer.lessons.params.Param``): the spec checks values, reads and writes them in
the URL, and every page's settings are the ones its URL carries."""

import pytest

from explorer.lessons import LESSONS
from explorer.lessons.params import Param as Control
from tests.app.helpers import assert_clean, page

PAGES = {item.name: item.module for item in LESSONS}

SLIDER = Control("x.n", "slider", 10, "data.n", lo=10, hi=2000, step=10)
FLOAT = Control("x.noise", "slider", 0.3, "data.noise", lo=0.0, hi=2.0)
PICK = Control("x.kernel", "select", "gaussian", "nw.kernel", options=("gaussian", "boxcar"), names="kernel.")
GRID = Control("x.h", "select_slider", 0.2, "nw.bandwidth", options=(0.1, 0.2, 0.5), fmt="g")
MANY = Control("x.hs", "multiselect", [0.1], "ah.sweep_pick", options=(0.1, 0.2, 0.5), max_selections=2)
FLAG = Control("x.on", "toggle", True, "kr.overlay")


@pytest.mark.parametrize("control, raw, value", [
    (SLIDER, "200", 200), (SLIDER, "2e2", 200), (FLOAT, "1.5", 1.5), (PICK, "boxcar", "boxcar"),
    (GRID, "0.5", 0.5), (GRID, "0.50000", 0.5), (MANY, "0.2,0.5", [0.2, 0.5]), (FLAG, "off", False),
    (FLAG, "1", True),
])
def test_parse_reads_what_dump_writes(control, raw, value):
    parsed = control.parse(raw)
    assert parsed == value and type(parsed) is type(value)
    assert control.parse(control.dump(parsed)) == parsed


@pytest.mark.parametrize("control, raw", [
    (SLIDER, "5"), (SLIDER, "2001"), (SLIDER, "20.5"), (SLIDER, "abc"), (FLOAT, "nan"), (FLOAT, "inf"),
    (PICK, "nope"), (GRID, "0.3"), (MANY, "0.1,0.2,0.5"), (MANY, "0.7"), (FLAG, "maybe"),
])
def test_parse_refuses_what_the_widget_cannot_hold(control, raw):
    with pytest.raises(ValueError):
        control.parse(raw)


def test_an_unknown_widget_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        Control("x.y", "dial", 1, "data.n")


def test_each_control_key_is_declared_on_one_page_only():
    from explorer.lessons.shared import SHARED

    shared = {c.key for c in SHARED}
    seen = {}
    for name, lesson in PAGES.items():
        for c in lesson.PARAMS:
            if c.key not in shared:
                assert c.key not in seen, (c.key, seen.get(c.key), name)
                seen[c.key] = name


def _controls(name):
    return PAGES[name].PARAMS


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_url_carries_every_control_of_the_page(name):
    at = page(name, timeout=120)
    assert_clean(at)
    assert all(c.key in at.session_state for c in _controls(name))
    drawn = {c.key for c in _controls(name)} - {"nw.overlay_h"}       # drawn only while the overlay is on
    assert drawn <= set(at.query_params), drawn - set(at.query_params)


def test_help_states_the_range_the_widget_shows():
    """A help's "from … to …" comes from the spec's range (stated once), narrowed when the page narrows the
    slider for a run, in either language; a switch's help has no range."""
    n = Control("x.n", "slider", 200, "data.n", "data.n_help", lo=10, hi=2000, step=10)
    assert n.help_text("en") == "From 10 to 2000 points." and n.help_text("zh") == "10 到 2000 个点。"
    valid = Control("x.valid", "slider", 6, "mk.valid", "mk.valid_help", lo=0, hi=32)
    assert valid.help_text("en", hi=8) == "0 to L = 8."
    noise = Control("x.noise", "slider", 0.3, "data.noise", "data.noise_help", lo=0.0, hi=2.0, step=0.05)
    assert noise.help_text("en").endswith("(0 to 2).")
    h = Control("x.h", "select_slider", 1.0, "ef.h", "ef.h_help", options=(0.2, 1.0, 5.0), fmt="g")
    assert h.help_text("en").startswith("From 0.2 to 5:")
    assert FLAG.help_text("en") is None
    same = Control("x.same", "toggle", True, "kr.same_width", "kr.same_width_help")
    assert "{" not in same.help_text("en")


def _one_value_script():
    import streamlit as st

    from explorer.lessons.params import Param
    from explorer.ui.control import draw

    st.session_state["got"] = draw(Param("x.step", "slider", 1, "ef.step", lo=1, hi=200), hi=1)


def test_a_slider_narrowed_to_one_value_is_said_not_drawn():
    """A range narrowed to one value (the online softmax's steps when every key fits in one block) cannot be a
    slider (Streamlit refuses min = max): the value is returned and said in a caption."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_one_value_script).run()
    assert not at.exception and not at.slider and at.session_state["got"] == 1
    assert at.caption[0].value.endswith("1 (the only value these settings allow)")
