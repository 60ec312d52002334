"""Everyone in the room, checked in Chromium: axe-core on every page, the keyboard alone, a screen reader's words.

axe-core (bundled by axe-playwright-python) runs on each page once, the pages spread over light, dark, lecture mode
and 中文 so that each of the four is checked on two pages or more. A serious or critical violation fails the test
unless it is one of ``STREAMLIT_OWN``: markup of Streamlit's own components that the app cannot change, each
checked to lie where it is said to (so a violation of the app's own markup with the same rule still fails).
Colour contrast is axe's WCAG AA measurement (4.5:1 for text) of the page as drawn, the app's own style sheet
included; a disabled control's label is exempt, as in WCAG 1.4.3.
"""

import pytest

from explorer.lessons import LESSONS
from tests.conftest import until
from tests.e2e.conftest import ARTIFACTS, as_viewer
from tests.e2e.test_browser import wait_idle

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

# rule -> (where Streamlit draws it, what it is). No upstream issue was found for these (Streamlit's issue tracker
# searched for the rule names and "sidebar navigation" on 2026-12-05).
STREAMLIT_OWN = {
    "list": ('[data-testid="stSidebarNav"]', "the sidebar's page list puts section headers (div) inside its <ul>"),
    "listitem": ('[data-testid="stSidebarNav"]', "the same list's items sit in a div, not in the <ul>"),
}
PAGES = ["", *(item.name for item in LESSONS)]
SETTINGS = [("en", "light", False), ("en", "dark", False), ("en", "light", True), ("zh", "dark", False)]


def _where(page, selectors: list) -> list[bool]:
    """For each axe target: whether it lies inside ``selectors[0]``'s region (a list: one target per node)."""
    return page.evaluate("([targets, region]) => targets.map(t => { const e = document.querySelector(t); "
                         "return !!(e && e.closest(region)); })", selectors)


def _disabled_label(page, target: str) -> bool:
    return page.evaluate("t => { const e = document.querySelector(t); const box = e && e.closest("
                         "'[data-testid=\"stElementContainer\"], .stElementContainer'); "
                         "return !!(box && box.querySelector('[disabled], [aria-disabled=\"true\"]')); }", target)


def open_in(page, url: str, width: int, height: int, scheme: str = "light"):
    """``url`` opened in ``page`` (the file's tab: tests/e2e/conftest.py) at ``width`` x ``height`` px for a viewer
    whose OS prefers ``scheme``."""
    as_viewer(page, width, height, scheme).goto(url)
    return page


@pytest.mark.parametrize("i, name", list(enumerate(PAGES)), ids=PAGES)
def test_axe_finds_no_serious_violation_of_the_apps_own_markup(page, server_url, i, name):
    lang, scheme, lecture = SETTINGS[i % len(SETTINGS)]
    query = f"?lang={lang}" + ("&lecture=1" if lecture else "")
    page = open_in(page, f"{server_url}/{name}{query}", 1280 if lecture else 1400, 900, scheme)
    page.wait_for_selector("h1")
    wait_idle(page)
    results = axe_playwright.Axe().run(page).response
    problems, upstream = [], []
    for v in results["violations"]:
        if v["impact"] not in ("serious", "critical"):
            continue
        targets = [n["target"][0] for n in v["nodes"]]
        if v["id"] == "color-contrast":
            targets = [t for t in targets if not _disabled_label(page, t)]
        if v["id"] in STREAMLIT_OWN:
            inside = _where(page, [targets, STREAMLIT_OWN[v["id"]][0]])
            upstream += [t for t, ok in zip(targets, inside, strict=True) if ok]
            targets = [t for t, ok in zip(targets, inside, strict=True) if not ok]
        problems += [f"{v['id']} ({v['impact']}): {v['help']} at {t}" for t in targets]
    page.screenshot(path=str(ARTIFACTS / f"axe-{name or 'home'}-{lang}-{scheme}{'-lecture' if lecture else ''}.png"))
    assert problems == []


# each page's main control: the setting its main figure is first drawn for
MAIN_CONTROL = {"kernel_regression": "nw.bandwidth", "attention_heatmap": "nw.bandwidth", "softmax_kernel": "sk.d",
                "icl_bandwidth": "ib.lipschitz", "masking": "mask.length", "scaling": "scale.d",
                "efficient_attention": "ef.h", "live_training": "train.circuit_head"}
PLOTS = "() => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].map(e => e.data))"


@pytest.mark.parametrize("i, name", list(enumerate(MAIN_CONTROL)), ids=list(MAIN_CONTROL))
def test_the_keyboard_alone_reaches_each_pages_main_control_and_moves_its_figure(page, server_url, i, name):
    """Lecture mode on a 1280 x 720 projector (the sidebar folded), light and dark in turn: Tab from the top
    reaches the page's main control in the page's order, the focus on screen at every press and drawn; the arrow
    keys move the control, and the figures follow. (Predict first is off: with it on, the figure waits for a guess,
    which the keyboard also gives: the radios and Reveal are in the Tab order.)"""
    from explorer.i18n import t
    from explorer.lessons import lesson
    param = next(p for p in lesson(name).module.PARAMS if p.key == MAIN_CONTROL[name])
    label = t(param.label, "en")
    scheme = ("light", "dark")[i % 2]
    # predict=0: the figures drawn, not held for a guess
    page = open_in(page, f"{server_url}/{name}?lecture=1&predict=0", 1280, 720, scheme)
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    before = page.evaluate(PLOTS)
    seen = []
    for _ in range(60):
        page.keyboard.press("Tab")
        box = page.evaluate("() => { const e = document.activeElement, r = e.getBoundingClientRect(); "
                            "return [e.getAttribute('aria-label') || '', r.x, r.width]; }")
        seen.append(box)
        focused, x, w = box
        assert x + w > 0 and x < 1280, f"focus off screen after {len(seen)} presses: {box}"   # not the sidebar
        if focused == label:
            break
    else:
        pytest.fail(f"{label!r} not reached in 60 Tab presses: {[b[0] for b in seen]}")
    drawn = page.evaluate("() => { const s = getComputedStyle(document.activeElement); "
                          "return [s.outlineStyle, s.boxShadow]; }")
    assert drawn != ["none", "none"], "the focus is not drawn"
    # a slider moves with the arrow keys; a select box opens on the down arrow (its list waited for: it opens a
    # moment later on a busy machine), which then moves to the next option, and Enter picks it
    if param.kind != "select":
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
    else:
        page.keyboard.press("ArrowDown")
        page.locator('[role="listbox"]').first.wait_for(timeout=30_000)
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
    # the move's rerun may start later than an idle check looks (a busy machine): wait for the figures to change
    assert until(lambda: page.evaluate(PLOTS) != before, timeout=60), "the figures did not follow the keyboard"
    wait_idle(page)
    page.screenshot(path=str(ARTIFACTS / f"keyboard-{name}-lecture-{scheme}.png"))


def test_a_screen_reader_reads_each_figure_in_words_and_each_choice_by_its_text(page, server_url):
    """Every chart has its description just before it (in the page's language), and the predict question's
    radios are named by their choices, not by their index."""
    page = open_in(page, f"{server_url}/kernel_regression?predict=1&lang=zh", 1400, 1000)
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    texts = page.eval_on_selector_all(".explorer-alt", "els => els.map(e => e.textContent)")
    assert len(texts) == page.locator(".js-plotly-plot").count() >= 2
    assert all("图的文字描述" in t and ("折线图" in t or "热力图" in t) for t in texts)
    heights = page.eval_on_selector_all(".explorer-alt", "els => els.map(e => e.closest("
                                        "'[data-testid=\"stElementContainer\"]').getBoundingClientRect().height)")
    assert max(heights) <= 1                                              # not drawn, and no gap in the page
    tree = page.locator("[role=radiogroup]").first.aria_snapshot()
    radios = [line.strip() for line in tree.splitlines() if line.strip().startswith("- radio \"")]
    assert radios and all("h = " in r for r in radios), tree


def _luminance(css: str) -> float:
    """WCAG relative luminance of a CSS ``rgb(...)``/``rgba(...)`` colour."""
    r, g, b = (float(v) / 255 for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


FOCUSED = """() => { const e = document.activeElement, s = getComputedStyle(e);
  const app = getComputedStyle(document.querySelector('[data-testid="stApp"]'));
  return {kind: e.getAttribute('role') || e.tagName.toLowerCase(), label: (e.getAttribute('aria-label') ||
          e.innerText || '').slice(0, 30), style: s.outlineStyle, width: parseFloat(s.outlineWidth),
          color: s.outlineColor, background: app.backgroundColor}; }"""


@pytest.mark.parametrize("name, scheme, kinds", [
    ("kernel_regression", "light", {"a", "button", "combobox", "input", "switch", "summary"}),
    ("masking", "dark", {"a", "button", "combobox", "input"}),
])
def test_every_control_the_keyboard_reaches_shows_a_ring_of_2_px_at_3_to_1(page, server_url, name, scheme, kinds):
    """A projector washes pale colours out: in lecture mode at 1280 x 720, every element the first 45 Tab presses
    reach (links, buttons, select boxes, switches, the sliders' range inputs, the expanders, the
    figures' controls) draws its focus as a solid outline at least 2 px wide whose colour has at least 3:1 against
    the page's background (WCAG 2.2's focus appearance), in the light theme and in the dark."""
    page = open_in(page, f"{server_url}/{name}?lecture=1&predict=0", 1280, 720, scheme)
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    seen = []
    for _ in range(45):
        page.keyboard.press("Tab")
        seen.append(page.evaluate(FOCUSED))
    assert kinds <= {s["kind"] for s in seen}, [(x["kind"], x["label"].split(chr(10))[0]) for x in seen]
    weak = [s for s in seen if s["kind"] != "body" and (s["style"] != "solid" or s["width"] < 2
                                                        or _contrast(s["color"], s["background"]) < 3)]
    assert not weak, weak
