"""Claims of the sidebar's reset buttons, checked through the app's router."""

from streamlit.testing.v1 import AppTest

from explorer.lessons import masking as Masking
from explorer.lessons import scaling as Scaling
from tests.app.helpers import ROOT, assert_clean


def test_reset_this_page_and_reset_everything():
    """ui.reset_page_help: every control of the page back to its default, the other pages keep theirs;
    ui.reset_all_help: every page back to its defaults, the trained model and the upload dropped, the language
    and lecture mode kept."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/live_training.py").run()
    at.button(key="train.step").click().run()
    assert at.session_state["train.run"].trainer.step_count == 10
    at.switch_page("pages/scaling.py").run()
    at.session_state["scale.d"], at.session_state["scale.n"] = 16, 64
    at.run()
    at.switch_page("pages/masking.py").run()
    at.session_state["mask.kind"], at.session_state["mask.length"] = "padding", 20
    at.run()
    at.button(key="reset.masking").click().run()
    assert_clean(at)
    assert {c.key: at.session_state[c.key] for c in Masking.PARAMS} == {c.key: c.default for c in Masking.PARAMS}
    at.switch_page("pages/scaling.py").run()
    assert at.session_state["scale.d"] == 16 and at.session_state["scale.n"] == 64   # another page's: kept
    at.session_state["data.uploaded"] = {"sha": "0" * 16, "x": [0.0, 1.0], "y": [0.0, 1.0], "description": "t"}
    at.selectbox(key="ui.lang").set_value("zh").run()
    at.button(key="reset.all").click().run()
    assert_clean(at)
    assert {c.key: at.session_state[c.key] for c in Scaling.PARAMS} == {c.key: c.default for c in Scaling.PARAMS}
    assert at.session_state["ui.lang"] == "zh" and at.session_state["ui.lecture"] is False
    assert "train.run" not in at.session_state and "data.uploaded" not in at.session_state
    at.switch_page("pages/masking.py").run()
    assert at.session_state["mask.kind"] == "causal"
