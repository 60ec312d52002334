"""Controls declared once: the spec checks values, reads and writes them in the URL, and every page's
controls are the ones its URL carries."""

import pytest

from explorer.ui.control import Control
from explorer.ui.page_controls import PAGES
from tests.app.helpers import assert_clean, page

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
    with pytest.raises(ValueError, match="widget must be one of"):
        Control("x.y", "dial", 1, "data.n")


def test_each_control_key_is_declared_on_one_page_only():
    from explorer.ui.controls import SHARED_CONTROLS

    shared = {c.key for c in SHARED_CONTROLS}
    seen = {}
    for name, spec in PAGES.items():
        for c in spec.ALL:
            if c.key not in shared:
                assert c.key not in seen, (c.key, seen.get(c.key), name)
                seen[c.key] = name


def _controls(name):
    from explorer.ui import live

    return live.CONTROLS if name == "live_training" else PAGES[name].ALL


@pytest.mark.parametrize("name", [*sorted(PAGES), "live_training"])
def test_the_url_carries_every_control_of_the_page(name):
    at = page(name, timeout=120)
    assert_clean(at)
    assert all(c.key in at.session_state for c in _controls(name))
    drawn = {c.key for c in _controls(name)} - {"nw.overlay_h"}       # drawn only while the overlay is on
    assert drawn <= set(at.query_params), drawn - set(at.query_params)
