"""A link that says something a page cannot use says so in one line and falls back to the defaults."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import ROOT, assert_clean, shown


def open_page(name, params):
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("params, said", [
    ({"h": "abc"}, "h=abc"), ({"kernel": "nope"}, "kernel=nope"), ({"lang": "xx"}, "lang=xx"),
    ({"lecture": "maybe"}, "lecture=maybe"), ({"scale.d": "128", "scale.nope": "1"}, "scale.nope=1"),
])
def test_unknown_or_malformed_link_keys_get_the_notice(params, said):
    at = open_page("scaling", params)
    assert_clean(at)
    assert len(at.warning) == 1 and said in shown(at.warning[0].value)
    assert at.session_state["scale.d"] == 128 and at.session_state["ui.lang"] == "en"
    assert at.session_state["ui.lecture"] is False


def test_a_valid_link_gets_no_notice():
    at = open_page("scaling", {"scale.d": "16", "lang": "zh", "lecture": "1"})
    assert_clean(at)
    assert len(at.warning) == 0 and at.session_state["scale.d"] == 16 and at.session_state["ui.lang"] == "zh"


def test_an_upload_in_a_link_says_it_cannot_travel_and_keeps_the_default_data():
    at = open_page("kernel_regression", {"data.name": "upload", "nw.kernel": "laplace"})
    assert_clean(at)
    assert any("cannot travel in a link" in i.value for i in at.info)
    assert at.session_state["data.name"] == "sine_mix" and at.session_state["nw.kernel"] == "laplace"
