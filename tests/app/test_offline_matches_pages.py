"""The offline lesson files say and draw what the pages do (``explorer.offline``, ``explorer-export --interactive``).

For every lesson with an offline file, at three of its states (the first, the page's default and the last; for a
lesson with a second choice, also another value of it), the page is run with the same setting in AppTest and the
file's state is read against it: every sentence of the state is a text the page shows, the question's choices are
the page's, and the main figure's traces hold the page's numbers (float32 in the file: to 1e-6 relative)."""

import base64
import functools
import json
import re

import numpy as np
import pytest

from explorer.lessons import lesson
from explorer.offline import RECIPES
from explorer.offline import lesson_states as computed_states
from tests.app.helpers import assert_clean, page, shown

TEXTS = ("markdown", "caption", "info", "success", "warning", "error")
lesson_states = functools.cache(computed_states)        # (each lesson's states computed once for this file)


def _lines(html_text: str) -> list[str]:
    """What a reader sees of the file's HTML, line by line (a list item or a <br> starts a line)."""
    text = re.sub(r"</li>|<br>", "\n", html_text)
    text = re.sub(r"<[^>]+>", "", text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _arrays(trace: dict) -> dict:
    """The trace's numeric arrays (plotly's base64 typed arrays decoded), by name."""
    out = {}
    for key in ("x", "y", "z"):
        value = trace.get(key)
        if isinstance(value, dict) and "bdata" in value:
            arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
            out[key] = arr.reshape(-1)
        elif isinstance(value, list) and value and all(isinstance(v, int | float) for v in np.ravel(value)):
            out[key] = np.asarray(value, dtype=float).reshape(-1)
    return out


def _set(at, param, value):
    widget = {"select_slider": at.select_slider, "slider": at.slider, "select": at.selectbox}[param.kind]
    widget(key=param.key).set_value(value).run()
    return at.run()          # a move that reruns only its parts: the whole page once more, to read all of it


# Live training's file is a recorded run (the page trains live): tests/e2e/test_offline.py checks its states against
# a model trained to each recorded step and the lesson's own sentences about it
PAGED = [name for name, recipe in RECIPES.items() if recipe.control != "step"]


def _cases():
    for name in PAGED:
        recipe = RECIPES[name]
        mod = lesson(name).module
        control = getattr(mod, recipe.control)
        values = recipe.states(control)
        picks = sorted({0, values.index(control.default) if control.default in values else 0, len(values) - 1})
        yield name, 0, picks
        if recipe.second:
            yield name, 1, [picks[len(picks) // 2]]


@pytest.mark.parametrize("name, second, picks", list(_cases()), ids=lambda v: str(v))
def test_each_offline_state_says_and_draws_what_the_page_does(name, second, picks):
    recipe, mod = RECIPES[name], lesson(name).module
    states = lesson_states(name)
    control = getattr(mod, recipe.control)
    at = page(name)
    if recipe.second:
        other = getattr(mod, recipe.second)
        _set(at, other, other.options[second])
    for k in picks:
        if states["inert"][second]:       # the control is disabled on the page too: its default state is read
            k = states["control"]["start"]
        else:
            at = _set(at, control, recipe.states(control)[k])
        assert_clean(at)
        state = states["states"][second][k]
        said = [shown(e.value) for kind in TEXTS for e in at.get(kind)]
        for sentence in state["sentences"]:
            for text in _lines(sentence):
                assert any(text in s for s in said), f"{name} state {k}: {text[:80]!r} is not on the page"
        offline = [_arrays(t) for t in state["figures"][0]["figure"]["data"]]
        charts = [[_arrays(t) for t in json.loads(el.proto.spec)["data"]] for el in at.get("plotly_chart")]
        same = [c for c in charts if len(c) == len(offline) and all(a.keys() == b.keys() and all(
            a[key].shape == b[key].shape for key in a) for a, b in zip(c, offline, strict=True))]
        assert same, f"{name} state {k}: no chart on the page has the file's traces"
        assert any(all(np.allclose(b[key], a[key], rtol=1e-6, atol=1e-6, equal_nan=True)
                       for a, b in zip(c, offline, strict=True) for key in a) for c in same), \
            f"{name} state {k}: the file's numbers differ from the page's"


@pytest.mark.parametrize("name", PAGED)
def test_each_offline_question_is_the_pages_at_its_opening_state(name):
    """With Predict first on, the page asks its question with radios: the file's question at the state it opens on
    has the same words and the same choices in the same order."""
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import ROOT

    recipe, mod = RECIPES[name], lesson(name).module
    states = lesson_states(name)
    row = states["second"]["start"] if states["second"] else 0
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=60)
    at.session_state["ui.predict"] = True
    if recipe.second:
        at.session_state[getattr(mod, recipe.second).key] = getattr(mod, recipe.second).options[row]
    at.run()
    assert_clean(at)
    question = states["states"][row][states["control"]["start"]]["question"]
    assert question is not None and at.radio, name
    assert [" ".join(_lines(c)) for c in question["choices"]] == [shown(o) for o in at.radio[0].options]
    page_text = " ".join(shown(e.value) for kind in TEXTS for e in at.get(kind))
    assert " ".join(_lines(question["asked"])) in page_text + " " + shown(at.radio[0].label)


def test_each_lesson_page_offers_its_offline_file():
    """The download button at the end of each lesson page; the file it gives is the lesson in the page's language
    and mode (made on demand, then cached: ``cache.offline_lesson``)."""
    from explorer.ui.cache import offline_lesson

    for name in ("masking", "live_training"):
        at = page(name)
        assert_clean(at)
        buttons = [b for b in at.get("download_button") if b.proto.id and f"offline.{name}" in b.proto.id]
        assert len(buttons) == 1, name
    text = offline_lesson("masking", "zh", True).decode()
    assert "<h1>掩码</h1>" in text and '<body class="lecture">' in text and "<script src=" not in text
