"""Layout in a real browser: lecture mode on a 1280 x 720 projector (both languages), a 800 px window, dark theme.

The dark theme is walked twice, through every page: in lecture mode in Chinese (the projector test) and in normal
mode in English at 1400 px (every chart); tests/app/test_dark_and_waiting_pages.py draws every page's figures in it
on the server side too. The light theme: English lecture mode, the 800 px window, the other browser tests.

Each check measures element boxes; a failure names the page and the element. Screenshots are saved under
tests/artifacts for reading against the page text.
"""

import itertools
import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from explorer.lessons import LESSONS
from tests.conftest import until
from tests.e2e.conftest import ARTIFACTS, as_viewer
from tests.e2e.test_browser import CHART, MAIN_SLIDER, wait_idle
from tests.unit.test_export_cli import chinese_lecture_set

PAGES = ["", *(lesson.name for lesson in LESSONS)]         # "" = the landing page
ALL_KERNELS = "kernel_regression?nw.compare=boxcar,constant,epanechnikov,triangular,laplace&nw.overlay=1"

# Boxes of what must not be cut or overlap, measured in the page. Plotly draws titles, annotations and tick labels
# as SVG text: a title wider than its chart is clipped, and neighbouring tick labels can collide. CHART_CHECKS runs
# on one chart's root element (a chart on the page, or an exported SVG opened in the browser).
CHART_CHECKS = """
const box = el => el.getBoundingClientRect();
const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
function chartProblems(root, name) {
  const problems = [];
  const svg = root.matches('svg') ? root : root.querySelector('svg.main-svg');
  if (!svg) return {problems, plotShare: null};
  const frame = box(svg);
  root.querySelectorAll('.gtitle, .annotation-text, .legendtext').forEach(t => {
    const b = box(t);
    if (b.width && (b.left < frame.left - 1 || b.right > frame.right + 1))
      problems.push(`chart ${name}: text "${t.textContent.slice(0, 40)}" runs outside its figure`);
  });
  root.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach(layer => {
    const ticks = [...layer.querySelectorAll('.xtick text, .ytick text')].map(box).filter(b => b.width);
    for (let a = 0; a < ticks.length; a++)
      for (let b = a + 1; b < ticks.length; b++)
        if (overlap(ticks[a], ticks[b])) { problems.push(`chart ${name}: tick labels overlap`); return; }
  });
  // the plot areas: plotly's drag layers in the page, the clipped plot backgrounds in an exported file
  let plots = [...root.querySelectorAll('.draglayer .nsewdrag')].map(box);
  if (!plots.length) plots = [...root.querySelectorAll('.bglayer rect.bg')].map(box);
  plots = plots.filter(p => p.width > 2 && p.height > 2);
  const labels = [...root.querySelectorAll('.xtick text, .ytick text')].map(box).filter(b => b.width);
  if (labels.some(l => plots.some(p => overlap(l, p))))
    problems.push(`chart ${name}: a tick label sits on a plot`);
  const ticks = [...root.querySelectorAll('.xtick text, .ytick text')].map(box).filter(b => b.width);
  root.querySelectorAll('.annotation').forEach(a => {
    const text = a.querySelector('.annotation-text');
    if (!text || !box(text).width) return;
    const t = box(text), said = `"${text.textContent.slice(0, 30)}"`;
    if (ticks.some(k => overlap(k, t))) problems.push(`chart ${name}: label ${said} runs into tick labels`);
    const inside = p => t.left >= p.left - 2 && t.right <= p.right + 2 && t.top >= p.top - 2
      && t.bottom <= p.bottom + 2;
    if (a.querySelector('.annotation-arrow-g path') && !plots.some(inside))   // an answer's label: in its plot
      problems.push(`chart ${name}: the pointed label ${said} is not inside a plot`);
  });
  root.querySelectorAll('.colorbar').forEach(bar => {        // a colour bar's title clear of its tick labels
    const t = bar.querySelector('.cbtitle text');
    if (t && [...bar.querySelectorAll('.cbaxis text, .ytick text')].some(k => box(k).width && overlap(box(k), box(t))))
      problems.push(`chart ${name}: the colour bar's title "${t.textContent}" runs into its tick labels`);
  });
  const title = root.querySelector('.gtitle');
  if (title) {
    const t = box(title);
    if ([...root.querySelectorAll('.xtitle, .ytitle')].some(a => overlap(box(a), t)))
      problems.push(`chart ${name}: an axis title runs into the figure title`);
    if ([...root.querySelectorAll('.annotation-text')].some(a => box(a).width && overlap(box(a), t)))
      problems.push(`chart ${name}: the figure title runs into a panel title or label`);
    if (plots.some(p => overlap(p, t)))
      problems.push(`chart ${name}: the figure title sits on a plot`);
  }
  const top = Math.min(...plots.map(p => p.top)), bottom = Math.max(...plots.map(p => p.bottom));
  return {problems, plotShare: plots.length ? (bottom - top) / frame.height : null};
}
"""

MEASURE = "() => {" + CHART_CHECKS + """
  const out = {problems: []};
  document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, i) => {
    const title = chart.querySelector('.gtitle');
    const name = `${i} (${title ? title.textContent.slice(0, 30) : 'untitled'})`;
    out.problems.push(...chartProblems(chart, name).problems);
  });
  document.querySelectorAll('[data-testid="stMain"] h1').forEach(h => {
    if (h.scrollWidth > h.clientWidth + 1) out.problems.push(`title "${h.textContent}" is cut`);
  });
  const labels = '[data-testid="stMain"] button p, [data-testid="stMain"] [data-testid="stPageLink"] p, '
    + '[data-baseweb="tag"] span, [data-testid="stMain"] [data-testid="stWidgetLabel"] p';
  document.querySelectorAll(labels).forEach(p => {
    if (p.scrollWidth > p.clientWidth + 1) out.problems.push(`label "${p.textContent}" is cut`);
  });
  if (document.documentElement.scrollWidth > window.innerWidth + 1) out.problems.push('the page scrolls sideways');
  const chart = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"]');
  out.chart = chart ? (({top, bottom, left, right}) => ({top, bottom, left, right}))(box(chart)) : null;
  // the main figure's Export: the first export control after it in the page
  const exports = [...document.querySelectorAll('[data-testid="stMain"] [class*="st-key-export"]')];
  const own = chart && exports.find(e => chart.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
  out.export = own ? box(own).bottom : null;
  out.plotShare = chart ? chartProblems(chart, 'main').plotShare : null;
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  out.sidebar = sidebar ? box(sidebar).right : 0;
  const link = document.querySelector('[data-testid="stMain"] [data-testid="stPageLink"]');
  out.link = link ? box(link).bottom : null;
  out.font = parseFloat(getComputedStyle(document.documentElement).fontSize);
  out.exceptions = document.querySelectorAll('[data-testid="stException"]').length;
  return out;
}"""


def settle(page):
    """Wait until the page's script is idle, its charts are drawn and its fonts are loaded. It follows a page opened
    or a button pressed, never a slider's key press, whose value is sent a moment later: a run that asks for another
    asks at once, so a quarter of a second without a run is idle here (wait_idle's half second is for sliders)."""
    wait_idle(page, settle=0.25)
    if page.locator(CHART).count():
        page.wait_for_selector(CHART + " svg.main-svg")
    page.evaluate("document.fonts.ready")
    wait_idle(page, settle=0.25)


def open_page(page, url):
    page.goto(url)
    page.wait_for_selector('[data-testid="stMain"] h1')
    settle(page)


def walk(page, url):
    """Every page in lesson order, as a lecturer goes through them: the landing page opened from ``url`` (its
    query sets lecture mode, language and Predict first for the whole walk), then each lesson through the link on
    the page before it ("Start", then "Next"), without reloading the app. Yields each page's name ("" for the
    landing page) once it is drawn. A reload per page cost Chromium about a second more each; that every page
    reads lecture mode, language and its settings from its own link is tests/app/test_url_lecture_export.py's."""
    open_page(page, url)
    yield ""
    for name in PAGES[1:]:
        page.locator(f'[data-testid="stMain"] [data-testid="stPageLink"] a[href="{name}"]').first.click()
        page.wait_for_url(re.compile(f"/{name}(\\?|$)"))
        page.wait_for_selector('[data-testid="stMain"] h1')
        settle(page)
        yield name


@pytest.mark.parametrize("lang, scheme", [("en", "light"), ("zh", "dark")])
def test_lecture_mode_fits_a_1280_by_720_projector(page, server_url, lang, scheme):
    """Text scaled up, the sidebar folded, Previous / Next on screen, the main figure on screen without scrolling,
    and no error, no title, label or tick cut off or overlapping, on every page; in Chinese for a viewer whose OS
    prefers dark (the dark theme's lecture mode). Screenshots: what the projector shows, and in 中文 the whole page
    too."""
    projector = as_viewer(page, 1280, 720, scheme)
    problems = []
    for name in walk(projector, f"{server_url}/?lecture=1&predict=0&lang={lang}"):   # the revealed figures
        projector.screenshot(path=str(ARTIFACTS / f"lecture_{lang}_{scheme}_{name or 'home'}.png"))
        if lang == "zh":
            projector.screenshot(path=str(ARTIFACTS / f"zh_lecture_{name or 'home'}.png"), full_page=True)
        m = projector.evaluate(MEASURE)
        if m["exceptions"]:
            problems.append(f"{name or 'home'}: {m['exceptions']} exception(s) ({scheme} theme)")
        problems += [f"{name or 'home'}: {p}" for p in m["problems"]]
        if m["font"] < 18:
            problems.append(f"{name or 'home'}: text is not scaled up ({m['font']} px)")
        if m["sidebar"] > 0:
            problems.append(f"{name or 'home'}: the sidebar is open")
        if name:
            if m["link"] is None or m["link"] > 720:
                problems.append(f"{name}: Previous / Next are not on screen")
            if m["chart"] is None or m["chart"]["bottom"] > 720 or m["chart"]["right"] > 1280:
                problems.append(f"{name}: the main figure does not fit on screen: {m['chart']}")
            if m["export"] is None or m["export"] > 720:
                problems.append(f"{name}: the main figure's Export ends at {m['export']} px (> 720)")
            if m["plotShare"] is not None and m["plotShare"] < 0.6:     # the plot, not the furniture around it
                problems.append(f"{name}: the main figure's plot is {m['plotShare']:.0%} of its height (< 60 %)")
    assert not problems, "\n".join(problems)


# After Reveal: where the verdict and the asked figure (with its Export) are on the screen, once the page has
# scrolled them there, and how much of its plot each answer label covers (a label with an arrow: mark_answer's)
REVEALED = """() => {
  const box = el => el.getBoundingClientRect();
  const verdict = document.querySelector('[class*="st-key-verdict-"]');
  const asked = document.querySelector('.st-key-explorer-asked');
  const header = document.querySelector('[data-testid="stHeader"]');
  const out = {header: header ? box(header).bottom : 0, verdict: box(verdict).top,
               asked: asked ? box(asked).bottom : null, labels: []};
  if (!asked) return out;
  const plots = [...asked.querySelectorAll('.draglayer .nsewdrag')].map(box);
  asked.querySelectorAll('.annotation').forEach(a => {
    const text = a.querySelector('.annotation-text-g'), t = text && box(text);
    if (!a.querySelector('.annotation-arrow-g path') || !t || !t.width) return;
    const p = plots.find(p => t.left >= p.left - 2 && t.right <= p.right + 2 && t.top >= p.top - 2
      && t.bottom <= p.bottom + 2);
    out.labels.push({text: text.textContent.slice(0, 30), share: p ? t.width * t.height / (p.width * p.height) : 1});
  });
  return out;
}"""
ON_SCREEN = """() => { const a = document.querySelector('.st-key-explorer-asked');
  return !a || a.getBoundingClientRect().bottom <= window.innerHeight; }"""


@pytest.mark.parametrize("lang, scheme", [("en", "light"), ("zh", "dark")])
def test_every_question_revealed_in_lecture_mode_keeps_its_figure_whole_and_on_screen(page, server_url, lang,
                                                                                      scheme):
    """Lecture mode with Predict first, as a class goes through it: on each page a guess, Reveal, then the verdict
    and the figure that answers, together on the 1280 x 720 screen without the lecturer scrolling (the page scrolls
    itself, no further than the verdict's top): the verdict under Streamlit's header, the asked figure with its
    Export above the screen's bottom. The answer's label sits inside its plot and covers under 5 % of it; panel
    titles and labels clear the tick labels."""
    projector = as_viewer(page, 1280, 720, scheme)
    problems, revealed = [], 0
    for name in walk(projector, f"{server_url}/?lecture=1&lang={lang}"):
        choices = projector.locator('[data-testid="stMain"] [data-testid="stRadioOption"]')
        if not name or not choices.count():
            continue
        choices.first.click()
        wait_idle(projector)
        projector.locator('[data-testid="stMain"] [class*="st-key-predict"] button[kind="primary"]').first.click()
        projector.wait_for_selector('[class*="st-key-verdict-"]')
        settle(projector)
        try:                        # the page scrolls once its run is over and the figure drawn
            projector.wait_for_function(ON_SCREEN, timeout=10_000)
        except PlaywrightTimeout:
            pass                    # said below, with the numbers
        revealed += 1
        m = projector.evaluate(MEASURE)
        problems += [f"{name}: {p}" for p in m["problems"]]
        r = projector.evaluate(REVEALED)
        if r["asked"] is None:
            problems.append(f"{name}: no figure is marked as the one the question asked about")
        elif r["asked"] > 720:
            problems.append(f"{name}: after Reveal the asked figure and its Export end at {r['asked']:.0f} px "
                            "(> 720)")
        if r["verdict"] < r["header"] - 1:
            problems.append(f"{name}: the verdict's top ({r['verdict']:.0f} px) is under the header "
                            f"({r['header']:.0f} px)")
        problems += [f"{name}: the answer label {label['text']!r} covers {label['share']:.1%} of its plot"
                     for label in r["labels"] if label["share"] >= 0.05]
        projector.screenshot(path=str(ARTIFACTS / f"revealed_{lang}_{scheme}_{name}.png"))
    assert revealed >= 7, f"only {revealed} pages asked a question"
    assert not problems, "\n".join(problems)


def test_softmax_at_either_end_of_d_keeps_its_figure_and_export_on_a_projector(page, server_url):
    """Softmax is a kernel at d = 1 and d = 256 (the slider's ends), lecture mode at 1280 x 720: the side-by-side
    figure and its Export end on the screen."""
    projector = as_viewer(page, 1280, 720)
    problems = []
    for d in (1, 256):
        open_page(projector, f"{server_url}/softmax_kernel?lecture=1&predict=0&sk.d={d}")
        # the link's d was used: the first figure says its τ (waited for: on a busy machine the page's later
        # charts can be drawn while the first is still being computed)
        expect(projector.locator(CHART).first).to_contain_text(f"τ = {d ** 0.5:g}", timeout=60_000)
        settle(projector)
        m = projector.evaluate(MEASURE)
        if m["chart"] is None or m["chart"]["bottom"] > 720 or m["export"] is None or m["export"] > 720:
            problems.append(f"d = {d}: figure {m['chart']}, its Export ends at {m['export']} px")
        problems += [f"d = {d}: {p}" for p in m["problems"]]
    assert not problems, "\n".join(problems)


def test_live_training_in_lecture_mode_draws_one_layers_heads_in_a_row(page, server_url):
    """Induction (2 layers x 2 heads) on a 1280 x 720 projector after ten steps: the maps show one layer's heads, in
    one row, at 90 px a side or more (the whole 2 x 2 grid drew them at about 55 px), with nothing cut or
    overlapping; the maps' and the entropy chart's Export end on the screen (the step's numbers above them are one
    compact row); the picker beside the buttons switches the layer."""
    projector = as_viewer(page, 1280, 720)
    open_page(projector, f"{server_url}/live_training?lecture=1&predict=0&train.task=induction")
    projector.locator('.st-key-train-step button').first.click()
    projector.wait_for_selector('[data-testid="stMetric"]')
    settle(projector)
    maps = projector.locator(CHART).first
    sizes = maps.evaluate("c => [...c.querySelectorAll('.draglayer .nsewdrag')].map(p => "
                          "Math.min(p.getBoundingClientRect().width, p.getBoundingClientRect().height))")
    titles = maps.locator(".annotation-text").all_text_contents()
    assert len(sizes) == 2 and min(sizes) >= 90, sizes
    assert {"L1 H0", "L1 H1"} <= set(titles) and not any(t.startswith("L0") for t in titles), titles
    problems = projector.evaluate(MEASURE)["problems"]
    assert not problems, "\n".join(problems)
    exports = projector.evaluate("() => [...document.querySelectorAll('[data-testid=\"stMain\"] "
                                 "[class*=\"st-key-export\"]')].slice(0, 2)"
                                 ".map(e => e.getBoundingClientRect().bottom)")
    assert len(exports) == 2 and max(exports) <= 720, exports
    projector.get_by_text("layer 0", exact=True).click()
    assert until(lambda: "L0 H0" in maps.locator(".annotation-text").all_text_contents()), "no map of layer 0"
    projector.screenshot(path=str(ARTIFACTS / "lecture_live_training_layer0.png"))


# each chart's key (the class Streamlit gives a keyed element's box) and whether it is stale: a failure's message
CHARTS_DRAWN = """() => [...document.querySelectorAll('CHART')].map(chart => {
    const keyed = chart.closest('[class*="st-key-"]');
    const key = keyed ? [...keyed.classList].find(c => c.startsWith('st-key-')) : 'no key';
    return key + (chart.closest('[data-stale="true"]') ? ' (stale)' : '');
})""".replace("CHART", CHART)


def test_every_page_at_1400_px_every_chart_and_a_slider_move(page, server_url):
    """The normal layout on a lecturer's laptop, for a viewer whose OS prefers dark: the landing page links "Start"
    and every lesson; every chart of every page (the whole page scrolled through) drawn without an error (the
    heatmap page once raised on an array of marker colours in the dark theme), no title on a panel title or plot, no
    tick label on another panel, nothing cut; then the page's first slider moved two steps: the value changes, no
    error, and every chart is still there (a move that reruns only parts of the page, such as Kernel regression's
    bandwidth, leaves the rest in place). Screenshots of each whole page before (w1400_*) and after the move
    (page_*), to read against the page text."""
    page = as_viewer(page, 1400, 1000, "dark")
    problems = []
    for name in walk(page, server_url):
        label = name or "home"
        page.set_viewport_size({"width": 1400, "height": 6000})     # every chart drawn, not only the first
        wait_idle(page)
        page.screenshot(path=str(ARTIFACTS / f"w1400_{label}.png"), full_page=True)
        m = page.evaluate(MEASURE)
        if m["exceptions"]:
            problems.append(f"{label}: {m['exceptions']} exception(s) in the dark theme")
        problems += [f"{label}: {p}" for p in m["problems"] if "scrolls sideways" not in p]
        if not name:                  # the landing page: text, links and thumbnails, no chart
            links = page.locator('[data-testid="stMain"] [data-testid="stPageLink"]').count()
            assert links == len(LESSONS) + 1, f"the landing page has {links} links, not Start and each lesson"
        else:
            charts = page.locator(CHART).count()
            assert charts >= 1, f"no chart on {name}"
            slider = page.locator(MAIN_SLIDER).first
            assert slider.count(), f"no slider on {name}"
            before = slider.get_attribute("aria-valuetext")
            slider.focus()
            slider.press("ArrowRight")
            slider.press("ArrowRight")
            wait_idle(page)
            assert slider.get_attribute("aria-valuetext") != before, f"slider did not move on {name}"
            # the two presses can reach the server as two reruns, the second after a pause longer than
            # wait_idle's quiet window on a loaded machine; while one runs, the page holds the outgoing charts
            # next to the incoming ones: counted when the page is idle, the count must come back to what it was
            deadline = time.time() + 30
            while page.locator(CHART).count() != charts and time.time() < deadline:
                wait_idle(page)
            assert page.locator(CHART).count() == charts, (
                f"{charts} charts on {name} before a slider move, then: {page.evaluate(CHARTS_DRAWN)}")
            assert page.locator('[data-testid="stException"]').count() == 0, f"exception on {name} after a move"
            page.evaluate("document.fonts.ready")
            page.screenshot(path=str(ARTIFACTS / f"page_{name}.png"), full_page=True)
        page.set_viewport_size({"width": 1400, "height": 1000})
    assert not problems, "\n".join(problems)


def test_the_exported_lecture_set_is_whole_and_laid_out_like_the_pages(browser, tmp_path):
    """The lecture set in Chinese written by ``explorer-export`` (every file its manifest names, checked in
    tests/unit/test_export_cli.py's ``chinese_lecture_set``), its SVGs opened in the browser: the same checks as the
    charts on the pages (the exported Masking figure had its title on its panel titles)."""
    manifest = chinese_lecture_set(tmp_path)
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    problems = []
    try:
        for entry in manifest["files"]:
            if entry["format"] != "svg":
                continue
            svg = (tmp_path / entry["file"]).read_text(encoding="utf-8")
            page.set_content(f"<html><body style='margin:0'>{svg}</body></html>")
            page.evaluate("document.fonts.ready")
            found = page.evaluate("() => {" + CHART_CHECKS + "return chartProblems(document.querySelector('svg'), "
                                  f"{entry['figure']!r}).problems; }}")
            problems += found
    finally:
        page.close()
    assert not problems, "\n".join(problems)


def test_an_800_px_window_keeps_every_label_whole(page, server_url):
    page = as_viewer(page, 800, 1000)
    problems = []
    for name in itertools.chain(walk(page, server_url), [ALL_KERNELS]):
        if name == ALL_KERNELS:
            open_page(page, f"{server_url}/{name}")
        page.screenshot(path=str(ARTIFACTS / f"w800_{name.split('?')[0] or 'home'}.png"))
        m = page.evaluate(MEASURE)
        problems += [f"{name or 'home'}: {p}" for p in m["problems"] if "tick" not in p]
        if m["sidebar"] > 240:
            problems.append(f"{name}: the sidebar takes {m['sidebar']:.0f} px of 800")
    assert not problems, "\n".join(problems)


def test_a_phone_sees_every_chart_title_with_no_toolbar_over_it(browser, server_url):
    """A 390 px phone (touch, no hover): plotly's toolbar, which waits for a hover that never comes on a touch
    screen, stayed on and covered the titles of the charts; on a phone it is not shown, and no chart's title is
    under anything. (On a laptop it shows on hover: the other layout tests.)"""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    phone = context.new_page()
    phone.set_default_timeout(60_000)
    problems = []
    try:
        assert phone.evaluate("matchMedia('(hover: none)').matches")
        for name in ("kernel_regression", "masking"):
            open_page(phone, f"{server_url}/{name}")
            phone.screenshot(path=str(ARTIFACTS / f"phone_{name}.png"))
            problems += [f"{name}: {p}" for p in phone.evaluate("""() => {
              const box = e => e.getBoundingClientRect(), out = [];
              document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((c, i) => {
                const bar = c.querySelector('.modebar'), title = c.querySelector('.gtitle');
                if (!bar || bar.offsetParent === null || getComputedStyle(bar).opacity === '0') return;
                const b = box(bar), t = title ? box(title) : null;
                out.push(`chart ${i}: the toolbar is shown` + (t && b.left < t.right && t.left < b.right
                  && b.top < t.bottom && t.top < b.bottom ? ', over the title' : ''));
              });
              return out; }""")]
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_dark_theme_follows_the_viewer_and_exports_stay_light(page, server_url):
    """A viewer whose OS prefers dark gets a dark app and dark figures; the exported SVG is light unless the
    popover's "Dark background" is switched on."""
    page = as_viewer(page, 1400, 1000, "dark")
    open_page(page, f"{server_url}/kernel_regression")
    page.screenshot(path=str(ARTIFACTS / "dark_kernel_regression.png"))
    app_bg = page.evaluate("getComputedStyle(document.querySelector('.stApp')).backgroundColor")
    chart_bg = page.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stPlotlyChart\"] "
                             "svg.main-svg')).backgroundColor")
    r, g, b = (int(v) for v in app_bg[app_bg.index("(") + 1:app_bg.index(")")].split(",")[:3])
    assert r + g + b < 120, app_bg
    assert chart_bg == "rgba(0, 0, 0, 0)", chart_bg          # the figure lets the dark page show through
    page.get_by_role("button", name="Export").first.click()
    popover = page.locator('[data-testid="stPopoverBody"]')
    svg_button = popover.get_by_role("button", name="SVG", exact=True)
    svg_button.wait_for()
    box = popover.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 1000, box        # every button on screen
    with page.expect_download() as download:
        svg_button.click()
    assert download.value.suggested_filename == "kernel-regression_fit_gaussian_h0.2.svg"
    assert "fill: rgb(255, 255, 255)" in open(download.value.path(), encoding="utf-8").read()[:2000]
    popover.get_by_text("Dark background").click()
    wait_idle(page)
    with page.expect_download() as download:
        popover.get_by_role("button", name="SVG", exact=True).click()
    assert "fill: rgb(14, 17, 23)" in open(download.value.path(), encoding="utf-8").read()[:2000]

