"""One wiring test per lesson page: it renders, and what its lesson says at the settings shown
(``<lesson>.sentences``) is on it, word for word, in both languages, with its question answered. That every
sentence is true is the lesson tests' job (tests/lessons, headless); this checks that the page places them."""

import importlib

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS
from explorer.lessons.params import defaults
from tests.app.helpers import ROOT, assert_clean

# the question each page asks (predict first), answered before the page is read
QUESTIONS = {"kernel_regression": "kr.loo", "attention_heatmap": "ah.wide", "softmax_kernel": "sk.gap",
             "icl_bandwidth": "ib.next", "masking": "mk.rows", "scaling": "sc.growth", "positional": "ps.length",
             "efficient_attention": "ef.gain", "live_training": "lt.head"}


def shown(at: AppTest) -> list[str]:
    """Every text the page shows: paragraphs, captions and boxes."""
    return [e.value for kind in ("markdown", "caption", "info", "success", "warning", "error") for e in at.get(kind)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", [lesson.name for lesson in LESSONS])
def test_the_page_shows_what_its_lesson_says(name, lang):
    lesson = importlib.import_module(f"explorer.lessons.{name}")
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=300)
    at.session_state["ui.lang"] = lang
    at.session_state["ui.predict"] = True
    at.session_state[f"predict.{QUESTIONS[name]}.done"] = True     # answered (Reveal: test_predict_ui.py)
    if name == "kernel_regression":
        at.session_state["kr.width_open"] = True        # the width rule's box open: its text is computed then
    at.run()
    assert_clean(at)
    texts = shown(at)
    extra = {"trainer": at.session_state["train.run"].trainer} if name == "live_training" else {}
    said = lesson.sentences(defaults(lesson.PARAMS), **extra)
    missing = [s.key for s in said if not any(s.in_lang(lang) in text for text in texts)]
    assert not missing, f"{name} ({lang}) does not show what its lesson says: {missing}"
