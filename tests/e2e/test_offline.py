"""The offline lesson files in Chromium, opened from disk with every network request refused and counted
(``explorer-export --interactive``): the keyboard moves each file's slider to three states, and at each the figure
holds the numbers the lesson computes at that setting and the sentences are the file's for that state; the figures'
text alternative comes before them, the choice beside the slider switches the state's row, Reveal opens the answer,
and axe-core finds no serious violation. What the states say against the pages is
tests/app/test_offline_matches_pages.py's."""

import base64
import functools
import html
import json
import re

import numpy as np
import pytest

from explorer.lessons import lesson
from explorer.lessons.params import defaults
from explorer.offline import RECIPES, RECORDED_STEPS, export_interactive

Axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe

READ = """() => { const gd = document.getElementById('figure');
  const plain = v => v && v.bdata ? {bdata: v.bdata, dtype: v.dtype} : (ArrayBuffer.isView(v) ? Array.from(v) : v);
  return {value: document.getElementById('value').textContent,
          sentences: document.getElementById('sentences').textContent,
          traces: gd.data.map(t => ({x: plain(t.x), y: plain(t.y), z: plain(t.z)}))}; }"""


def _array(value):
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
    if isinstance(value, list) and value and all(isinstance(v, int | float) for v in np.ravel(value)):
        return np.asarray(value, dtype=float).reshape(-1)
    return None


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("offline")
    export_interactive(out)
    return out


def _states(folder, name) -> dict:
    """The states the file holds (its JSON), read back from the file."""
    text = (folder / f"{name}.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="states">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


@functools.cache
def _expected(name, k, row=None):
    """The lesson's main figure at the file's state ``k`` (and ``row`` of its second choice), computed here; for
    Live training's recorded run, of a model trained here to that step, with what the page says about it."""
    recipe, mod = RECIPES[name], lesson(name).module
    if recipe.control == "step":
        from explorer.training import Trainer

        values = defaults(mod.PARAMS)
        trainer = Trainer.for_task(values[mod.TASK.key], seed=values[mod.SEED.key])
        trainer.step(RECORDED_STEPS[k])
        said = [s.in_lang("en") for s in (*mod.head_notes(trainer), mod.watch(trainer))]
        return _traces(mod.figures(values, trainer)[mod.MAIN].figure("en")), said
    control = getattr(mod, recipe.control)
    values = {**defaults(mod.PARAMS), control.key: recipe.states(control)[k]}
    if recipe.second:
        second = getattr(mod, recipe.second)
        values[second.key] = second.options[row]
    return _traces(mod.figures(values)[mod.MAIN].figure("en")), None


def _traces(fig):
    return [{key: _array(getattr(t, key, None)) for key in ("x", "y", "z")} for t in fig.data]


@pytest.mark.parametrize("name", list(RECIPES))
def test_each_lesson_file_moves_offline_and_shows_the_lessons_numbers(browser, folder, name):
    states = _states(folder, name)
    row = states["second"]["start"] if states["second"] else 0
    context, refused = browser.offline_context(viewport={"width": 1280, "height": 900})
    errors = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((folder / f"{name}.html").as_uri())
        page.wait_for_selector("#figure .main-svg")
        slider = page.locator("#state")
        slider.focus()
        last = len(states["control"]["values"]) - 1
        for key, k in (("ArrowRight", min(states["control"]["start"] + 1, last)), ("End", last), ("Home", 0)):
            slider.press(key)
            shown = page.evaluate(READ)
            assert shown["value"] == states["control"]["values"][k]
            for sentence in states["states"][row][k]["sentences"]:
                assert html.unescape(re.sub(r"<[^>]+>", "", sentence)) in shown["sentences"], (name, k, sentence[:60])
            expected, said = _expected(name, k, row)
            for sentence in said or ():        # (a recorded run: the lesson's own words about the model)
                plain = re.sub(r"\*\*|\$", "", sentence).replace("- ", "", 1) if sentence.startswith("- ") \
                    else re.sub(r"\*\*|\$", "", sentence)
                assert plain in shown["sentences"], (name, k, plain[:60])
            assert len(shown["traces"]) == len(expected)
            for got, want in zip(shown["traces"], expected, strict=True):
                for axis, value in want.items():
                    if value is not None:
                        drawn = _array(got[axis])
                        assert drawn is not None and drawn.shape == value.reshape(-1).shape, (name, k, axis)
                        assert np.allclose(drawn, value.reshape(-1), rtol=1e-6, atol=1e-6, equal_nan=True), \
                            (name, k, axis)
        page.locator("#reveal summary").click()
        assert page.locator("#verdict").inner_text().strip()
        alt = page.locator("#alt").text_content()      # the figures in words, before them (describe's text)
        assert all(f["alt"] in alt for f in states["states"][row][0]["figures"]) and len(alt) > 40
        violations = [(v["id"], v["impact"]) for v in Axe().run(page).response["violations"]
                      if v["impact"] in ("serious", "critical")]
        assert violations == [], violations
        if states["second"]:                 # the choice beside the slider
            other = (row + 1) % len(states["second"]["values"])
            page.locator("#second").select_option(str(other))
            text = page.locator("#sentences").text_content()
            assert html.unescape(re.sub(r"<[^>]+>", "", states["states"][other][0]["sentences"][0])) in text
        page.screenshot(path=str(folder / f"{name}.png"))
    finally:
        context.close()
    assert refused == [] and errors == [], (refused[:3], errors[:3])


def test_one_lesson_in_chinese_for_a_projector_is_one_file(browser, tmp_path):
    """One lesson asked alone: one file with plotly.js inside it, in 中文 and lecture style, that draws offline."""
    report = export_interactive(tmp_path, lang="zh", lecture=True, lessons=("scaling",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scaling.html"]
    text = (tmp_path / "scaling.html").read_text(encoding="utf-8")
    assert '<script src=' not in text and 'lang="zh-CN"' in text and report["lesson_bytes"]["scaling"] < 3 * 2**20
    context, refused = browser.offline_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto((tmp_path / "scaling.html").as_uri())
        page.wait_for_selector("#figure .main-svg")
        assert page.locator("h1").inner_text() == "除以 √d"
        assert "lecture" in page.locator("body").get_attribute("class")
    finally:
        context.close()
    assert refused == []
