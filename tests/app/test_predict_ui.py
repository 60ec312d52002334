"""Predict, then reveal, as the app runs it: the figure waits behind the question, the switch follows lecture mode
and the URL, every page asks in Chinese too. (That each revealed answer is right is checked headless in
tests/lessons/test_predictions.py.)"""

import re

import pytest

from tests.app.helpers import assert_clean, page


def ask(name: str, key: str, pick: int = 0):
    """The page with Predict first on: the question's options, then the page after answering ``pick``."""
    at = page(name)
    at.session_state["ui.predict"] = True
    at.run()
    assert_clean(at)
    radio = at.radio(key=f"predict.{key}.pick")
    options = radio.options
    charts_before = {e.proto.id for e in at.get("plotly_chart")}
    radio.set_value(pick).run()
    at.button(key=f"predict.{key}.reveal").click().run()
    assert_clean(at)
    revealed = verdict_text(at)
    answer = re.search(r"The answer: \*\*(.+?)\*\*", revealed).group(1)
    new = {e.proto.id for e in at.get("plotly_chart")} - charts_before
    assert new, "revealing drew no new figure"
    return at, options, answer, revealed


def verdict_text(at) -> str:
    """The revealed verdict (its headline, then the sentence on why), as one text."""
    texts = [m.value for m in at.markdown]
    i = next(i for i, v in enumerate(texts) if "The answer: **" in v)
    return f"{texts[i]} {texts[i + 1]}"


def test_the_figure_waits_until_revealed_and_the_switch_follows_lecture_mode_and_the_url():
    """ui.predict_help: off by default, on by default in lecture mode, ?predict= overrides; the figure appears only
    after Reveal."""
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import ROOT

    at = page("scaling")
    assert not at.session_state["ui.predict"] and not at.radio           # off by default: nothing asked
    at = AppTest.from_file(str(ROOT / "pages" / "scaling.py"), default_timeout=60)
    at.query_params["lecture"] = "1"
    at.run()
    assert at.session_state["ui.predict"] and "std" not in " ".join(e.proto.id for e in at.get("plotly_chart"))
    at = AppTest.from_file(str(ROOT / "pages" / "scaling.py"), default_timeout=60)
    at.query_params["lecture"] = "1"
    at.query_params["predict"] = "0"
    at.run()
    assert not at.session_state["ui.predict"] and not at.radio
    _, _, _, revealed = ask("scaling", "sc.growth", pick=0)   # the figure is drawn only after Reveal (ask checks it)
    assert revealed.startswith("#### :orange[**Not quite** (you said like d).]")


@pytest.mark.parametrize("name, key", [("kernel_regression", "kr.loo"), ("attention_heatmap", "ah.wide"),
                                       ("softmax_kernel", "sk.gap"), ("icl_bandwidth", "ib.next"),
                                       ("masking", "mk.rows"), ("scaling", "sc.growth"),
                                       ("efficient_attention", "ef.gain"), ("live_training", "lt.head")])
def test_every_page_asks_in_chinese_too(name, key):
    at = page(name)
    if name == "live_training":      # its question waits for a model whose heads matter: ten steps of training
        at.button(key="train.step").click().run()
    at.session_state["ui.predict"] = True
    at.session_state["ui.lang"] = "zh"
    at.run()
    assert_clean(at)
    question = next(m.value for m in at.markdown if m.value.startswith("**先预测**："))
    assert re.search(r"[\u4e00-\u9fff]{4}", question)
    assert all(re.search(r"[\u4e00-\u9fff]|h = |L\d", o) for o in at.radio(key=f"predict.{key}.pick").options)


def _height(at, key: str) -> int:
    import json

    return next(json.loads(e.proto.spec)["layout"]["height"] for e in at.get("plotly_chart") if key in e.proto.id)


def test_a_verdict_shortens_the_main_figure_under_it_and_no_other():
    """Lecture mode, answer revealed: Softmax is a kernel draws the verdict above its main figure, which gives up the
    verdict's row (on a whole run and when d moves alone); Kernel regression's verdict is under its LOO curve,
    far below the fit, which keeps its full height, also when the bandwidth moves alone."""
    from explorer.ui.figure import LECTURE_MAIN_HEIGHT
    from explorer.ui.predict import VERDICT_ROW

    for name, question, chart, moved, value, shortened in (
            ("softmax_kernel", "sk.gap", "side_by_side", "sk.d", 32, True),
            ("kernel_regression", "kr.loo", "fit", "nw.bandwidth", 0.5, False)):
        at = page(name, timeout=120)
        at.session_state["ui.lecture"] = at.session_state["ui.predict"] = True
        at.session_state[f"predict.{question}.done"] = True
        at.run()
        assert_clean(at)
        expected = LECTURE_MAIN_HEIGHT - (VERDICT_ROW if shortened else 0)
        assert _height(at, chart) == expected, name
        control = at.slider(key=moved) if name == "softmax_kernel" else at.select_slider(key=moved)
        control.set_value(value).run()                              # the part with the figure reruns alone
        assert_clean(at)
        assert _height(at, chart) == expected, (name, "after a move")
