"""Every page in a dark theme draws every figure without an error, and a page that waits for its question's answer
still writes its settings into the URL (a reload in lecture mode keeps the view)."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS, lesson
from tests.app.helpers import ROOT, assert_clean

NAMES = [lesson.name for lesson in LESSONS]
# buttons that draw more figures on demand, pressed so that those figures are drawn too
ON_DEMAND = {"efficient_attention": ["ef.measure"], "live_training": ["train.step", "train.kv_run"]}


def _dark(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=180)
    at.context["theme"] = "dark"
    return at.run()


@pytest.mark.parametrize("name", NAMES)
def test_every_figure_of_every_page_draws_in_the_dark_theme(name):
    at = _dark(name)
    assert_clean(at)
    for key in ON_DEMAND.get(name, []):
        at.button(key=key).click().run()
        assert_clean(at)
    charts = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    assert charts, name
    for spec in charts:                        # each one in its dark version: the page shows through
        assert spec["layout"]["paper_bgcolor"] == "rgba(0,0,0,0)", spec["layout"].get("title")
        assert spec["layout"]["font"]["color"] == "#fafafa"


def _controls(name: str):
    return lesson(name).module.PARAMS


@pytest.mark.parametrize("name", NAMES)
def test_a_page_waiting_for_its_answer_still_writes_its_url(name):
    """Lecture mode turns Predict first on: the page stops at its question, and the URL still carries lecture=1
    and every control's value."""
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=180)
    at.query_params["lecture"] = "1"
    at.run()
    if name == "live_training":      # its question waits for a model whose heads matter: ten steps of training
        at.button(key="train.step").click().run()
    assert_clean(at)
    assert at.radio, f"{name} asks nothing in lecture mode"
    written = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert written.get("lecture") == "1", written
    missing = [c.key for c in _controls(name) if c.key not in written]
    assert not missing, f"{name}: the URL lacks {missing}"
