"""The running app in Chromium: presets, pages sharing settings, live training, export, links, lecture mode.

Every page drawn at 1400 px with a slider moved on each: tests/e2e/test_layout.py."""

import re
import time
from pathlib import Path

from playwright.sync_api import expect

from explorer.i18n import t
from explorer.lessons import LESSONS
from explorer.training.live import HEADS_TICK
from tests.e2e.conftest import ARTIFACTS

CHART = '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]'


# Streamlit marks its app element with the state of the script run ("running", "rerunRequested", "notRunning", ...)
# as soon as it changes, unlike the running indicator, which shows only after a delay.
SCRIPT_STATE = """() => { const app = document.querySelector('[data-testid="stApp"]');
  return app ? [app.dataset.testScriptState, app.dataset.testConnectionState] : [null, null]; }"""


# Whether the app's style sheet is applied (explorer.ui.layout marks it): the element that carries it loads its
# code on its own, and on a fresh page it can come a second after the first text, at 16 px in lecture mode.
# wait_idle asks every 50 ms, in one round trip to the page: the run idle, every run the page asked for over
# (tests/e2e/conftest.py's RUN_TRACKER; a page without it answers for the run state alone), the connection up,
# the style sheet applied.
IDLE = """() => { const app = document.querySelector('[data-testid="stApp"]'), runs = window.__explorerRuns;
  const asked = !!runs && runs.sentAt > runs.finishedAt;
  return !!app && !asked && app.dataset.testScriptState === 'notRunning'
    && app.dataset.testConnectionState === 'CONNECTED'
    && getComputedStyle(document.documentElement).getPropertyValue('--explorer-styled').trim() === '1'; }"""


def wait_idle(page, settle: float = 0.5, timeout: float = 90) -> None:
    """Wait until Streamlit is connected, the app's style sheet is applied, every run the page asked for is over,
    and the script has not run for ``settle`` seconds (a slider sends its value a moment after the key press or the
    release, and a run can ask for another)."""
    deadline = time.time() + timeout
    quiet_since = None
    while time.time() < deadline:
        if not page.evaluate(IDLE):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= settle:
            return
        time.sleep(0.05)
    raise AssertionError(f"the app kept running, a run it asked for never ended, or its style sheet never applied, "
                         f"for {timeout:g} s: run and connection state {page.evaluate(SCRIPT_STATE)}, requests sent "
                         f"and runs finished {page.evaluate('window.__explorerRuns || null')}")


MAIN_SLIDER = '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]'


def test_preset_buttons_move_the_bandwidth_and_it_is_shared_between_pages(page, server_url):
    """A preset button sets the bandwidth slider; the value goes with the viewer to the heatmap page. The first
    press's request is held back 1.5 s in the page, longer than wait_idle's quiet half second (as a busy server
    can take to begin a run: a run found the slider still at 0.2 once): wait_idle returns once that run is over,
    and the slider says 5 at once."""
    page.goto(server_url + "/kernel_regression")
    page.wait_for_selector(CHART)
    wait_idle(page)
    sent = page.evaluate("window.__explorerRuns.sent")
    page.evaluate("window.__explorerSendDelay = 1500")
    page.get_by_role("button", name="h = 5", exact=True).click()
    wait_idle(page)
    assert page.evaluate("window.__explorerRuns.sent") == sent + 1, "the press's rerun request was not counted"
    assert page.locator(MAIN_SLIDER).first.get_attribute("aria-valuetext") == "5"
    page.evaluate("window.__explorerSendDelay = 0")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "kernel_regression_h5.png"), full_page=True)
    page.get_by_role("button", name="h = 0.01", exact=True).click()
    expect(page.locator(MAIN_SLIDER).first).to_have_attribute("aria-valuetext", "0.01", timeout=30_000)
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Attention heatmap").click()
    page.wait_for_selector('[data-testid="stMain"] h1:has-text("Attention heatmap")')
    wait_idle(page)
    bandwidth = page.locator('[data-testid="stMain"] [data-testid="stSlider"]', has_text="Bandwidth h")
    assert bandwidth.locator('input[type="range"]').get_attribute("aria-valuetext") == "0.01"


def open_upload(page, server_url: str) -> None:
    """Kernel regression with "Your own CSV" picked in the sidebar, its uploader on screen."""
    page.goto(server_url + "/kernel_regression?predict=0")
    page.wait_for_selector(CHART)
    wait_idle(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Dataset").click()
    page.get_by_role("option", name="Your own CSV", exact=True).click()
    wait_idle(page)


def test_a_refused_upload_says_why_and_the_figure_names_the_data_it_still_shows(page, server_url):
    """Kernel regression, "Your own CSV", a file with a word in its y column: the page says what is wrong where the
    student looks (under the uploader and above the figure), and the figure, still the sine mix, is titled so (it
    once said "fit on your data" over the sine mix and its true function)."""
    open_upload(page, server_url)
    assert "5 MB" in page.locator('[data-testid="stFileUploader"]').inner_text()       # the limit, where it is set
    rows = "\n".join(f"{i},{'oops' if i == 3 else i % 7}" for i in range(1, 21))
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        {"name": "marks.csv", "mimeType": "text/csv", "buffer": f"x,y\n{rows}\n".encode()})
    wait_idle(page)
    errors = page.locator('[data-testid="stAlert"]', has_text="hold text where a number should be")
    assert errors.count() == 2, errors.count()                           # under the uploader, above the figure
    title = page.locator(f'[data-testid="stMain"] {CHART} .gtitle').first.inner_text()
    assert "Sine mix" in title and "your data" not in title, title
    page.screenshot(path=str(ARTIFACTS / "upload_refused.png"))


def test_chinese_lecture_mode_and_the_export_control(page, server_url):
    page.goto(server_url + "/kernel_regression?lang=zh&lecture=1")
    page.wait_for_selector(CHART)
    wait_idle(page)
    assert "核回归" in page.locator('[data-testid="stMain"] h1').first.inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.evaluate("document.fonts.ready")
    page.screenshot(path=str(ARTIFACTS / "kernel_regression_zh_lecture.png"), full_page=True)
    page.get_by_role("button", name=re.compile("导出")).first.click()
    popover = page.locator('[data-testid="stPopoverBody"]')
    popover.wait_for()
    csv_button = popover.get_by_role("button", name="CSV", exact=True)
    csv_button.wait_for()            # the buttons are built by the rerun that opening the popover starts
    labels = popover.locator("button").all_inner_texts()
    assert {"PNG", "SVG", "HTML", "CSV"} <= {label.strip() for label in labels}
    with page.expect_download() as download:
        csv_button.click()
    header, *rows = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert header.startswith("series,kind,") and len(rows) > 100, (header, len(rows))
    assert download.value.suggested_filename == "kernel-regression_fit_gaussian_h0.2.csv"


STALLED = 90          # seconds without a new step before the live view counts as stuck


def _train_in_browser(page, steps: int, shot: str) -> int:
    """Start training on the Live training page shown, check that nothing in the live view fades while it redraws
    every second (a flashing chart on a projector), wait for ``steps`` steps, Pause, and check that the count
    stays put; the step count reached."""
    page.get_by_role("button", name=re.compile("^(Start|开始)$")).click()
    page.locator('[data-testid="stPlotlyChart"]').nth(2).wait_for()
    # while a refresh is drawing, the DOM can hold the outgoing copy of a chart next to the new one
    step = page.locator('[data-testid="stMetric"]', has_text=re.compile("^(step|步数)")).first \
        .locator('[data-testid="stMetricValue"]')
    step.wait_for()
    heads_then = _heads_tiles(page)          # the heads' tests as training starts (compared at the end)
    opacities = []
    for _ in range(30):
        opacities += page.evaluate("""() => [...document.querySelectorAll(
            '.st-key-live-view [data-testid="stElementContainer"]')].map(e => +getComputedStyle(e).opacity)""")
        time.sleep(0.1)
    assert opacities and min(opacities) == 1.0, min(opacities or [0])
    # No rate is asserted (how fast the machine trains is `make bench`'s business): the test waits for the steps it
    # needs and fails only if training stops moving, i.e. the step count stays put for STALLED seconds.
    last, moved = int(step.inner_text()), time.time()
    while last < steps:
        time.sleep(0.5)
        now = int(step.inner_text())
        if now != last:
            last, moved = now, time.time()
        assert time.time() - moved < STALLED, f"training stalled at step {last}"
    # the heads' tests under the live view follow the model while it trains (they once stayed at the step where
    # Start was pressed until Pause): their loss tiles move within a few of their redraws (every HEADS_TICK s)
    deadline, heads_now = time.time() + 6 * HEADS_TICK, _heads_tiles(page)
    while heads_now == heads_then and time.time() < deadline:
        time.sleep(0.5)
        heads_now = _heads_tiles(page)
    assert heads_then and heads_now != heads_then, (heads_then, heads_now)
    page.get_by_role("button", name=re.compile("^(Pause|暂停)$")).click()
    wait_idle(page)
    # a tick already on its way when Pause was clicked may still land: wait for the count to settle
    deadline, paused_at = time.time() + 15, int(step.inner_text())
    while time.time() < deadline:
        time.sleep(1.5)
        now = int(step.inner_text())
        if now == paused_at:
            break
        paused_at = now
    time.sleep(2)
    assert int(step.inner_text()) == paused_at, "training went on after Pause"
    wait_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 5200})
    wait_idle(page)
    page.evaluate("document.fonts.ready")
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 2400})
    return int(step.inner_text())


def _heads_tiles(page) -> list[str]:
    """The numbers in the "Test the heads" tiles (the metric tiles outside the live view)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMetric"]')]
        .filter(m => !m.closest('.st-key-live-view'))
        .map(m => m.querySelector('[data-testid="stMetricValue"]').textContent)""")


def test_induction_heads_form_in_the_browser_and_pause_stops_training(page, server_url):
    """Live training reached through the navigation from another page, the induction task picked from its menu and
    trained from the page at its defaults: the live view never fades while it redraws, Pause stops the count, the
    score table shows a previous-token head in layer 0 and an induction head in layer 1 (screenshot saved for
    reading against the text), and nothing diverges."""
    page.goto(server_url + "/kernel_regression")
    page.wait_for_selector(CHART)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Live training").click()
    page.wait_for_selector('[data-testid="stMain"] h1:has-text("Live training")')
    wait_idle(page)
    page.locator('[data-testid="stSelectbox"]', has_text="Task").first.click()
    page.get_by_role("option", name="induction", exact=True).click()
    expect(page).to_have_url(re.compile(r"train\.task=induction"), timeout=30_000)    # the pick's rerun has run
    wait_idle(page)
    done = _train_in_browser(page, 500, "live_training_induction.png")
    assert done >= 500
    table = page.locator('[data-testid="stDataFrame"]').first
    table.wait_for()
    assert page.locator('[data-testid="stAlert"]', has_text="diverging").count() == 0


def test_sine_icl_in_chinese(page, server_url):
    page.goto(server_url + "/live_training?train.task=sine_icl&lang=zh")
    page.wait_for_selector('[data-testid="stMain"] h1')
    wait_idle(page)
    _train_in_browser(page, 400, "live_training_sine_icl_zh.png")


def test_a_link_to_a_page_is_the_first_request_of_a_fresh_server(page):
    """The first request a new server gets is a shared link to a page: the app's navigation, language control
    and the page itself appear (not the bare script of pages/ with a flat file-name nav)."""
    from tests.e2e.conftest import streamlit_server
    with streamlit_server("server_fresh.log") as url:
        page.goto(url + "/masking?mask.kind=padding")
        page.wait_for_selector('[data-testid="stMain"] h1:has-text("Masking")')
        wait_idle(page)
        nav = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        assert any("Kernel regression" in n for n in nav) and not any(n.strip() == "app" for n in nav), nav
        # (waited for: a fresh server's warm-up shares the machine with the page's first runs)
        expect(page.locator('[data-testid="stSidebar"]', has_text="Language")).to_have_count(1, timeout=30_000)
        assert "mask.kind=padding" in page.url          # the page published the linked value back, not causal


def test_navigating_from_a_link_raises_no_link_notice_on_the_next_page(page, server_url):
    """A shared link's values belong to its page: moving to another page through the navigation does not
    report them as unknown there, and the link's own values are applied where they belong."""
    page.goto(server_url + "/kernel_regression?nw.kernel=laplace&nw.bandwidth=0.5")
    page.wait_for_selector(CHART)
    wait_idle(page)
    assert page.locator('[data-testid="stAlert"]', has_text="Ignored link values").count() == 0
    assert "laplace" in page.url
    page.locator('[data-testid="stSidebarNav"] a', has_text="Masking").click()
    page.wait_for_selector('[data-testid="stMain"] h1:has-text("Masking")')
    expect(page).to_have_url(re.compile(r"mask\.kind=causal"), timeout=30_000)        # the page's run has set it
    wait_idle(page)
    assert page.locator('[data-testid="stAlert"]', has_text="Ignored link values").count() == 0
    assert "nw.kernel" not in page.url
    page.goto(server_url + "/masking?mask.kind=diagonal&h=abc")
    page.wait_for_selector(CHART)
    wait_idle(page)
    notice = page.locator('[data-testid="stAlert"]', has_text="Ignored link values")
    assert notice.count() == 1 and "h=abc" in notice.inner_text() and "mask.kind=diagonal" in notice.inner_text()


def _go(page, title):
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    heading = "Attention Explorer" if title == "Start here" else title        # the landing page's own title
    page.wait_for_selector(f'[data-testid="stMain"] h1:has-text("{heading}")')
    wait_idle(page)


def test_settings_and_the_trained_model_survive_a_walk_through_every_page(page, server_url):
    """Masking set to padding, Scaling's d moved, a model trained 10 steps; every page visited through the
    navigation (one browser session); back on each page, its settings and the model's step count are still there."""
    page.goto(server_url + "/masking")
    page.wait_for_selector(CHART)
    wait_idle(page)
    page.locator('[data-testid="stSelectbox"]', has_text="Mask").first.click()
    page.get_by_role("option", name="padding", exact=True).click()
    wait_idle(page)
    _go(page, "Scaling by √d")
    d_slider = page.locator(MAIN_SLIDER).first
    before = d_slider.get_attribute("aria-valuetext")
    d_slider.focus()
    d_slider.press("ArrowRight")
    wait_idle(page)
    moved = d_slider.get_attribute("aria-valuetext")
    assert moved != before
    _go(page, "Live training")
    page.get_by_role("button", name="Step ×10").click()
    wait_idle(page)
    for title in ("Start here", "Kernel regression", "Attention heatmap", "Softmax is a kernel", "Efficient attention",
                  "Masking", "Scaling by √d", "Live training"):
        _go(page, title)
        assert page.locator('[data-testid="stException"]').count() == 0, title
        if title == "Masking":          # padding: in the page's link, and the valid-length slider is enabled
            assert "mask.kind=padding" in page.url
            valid = page.locator('[data-testid="stSlider"]', has_text="Valid length").locator('input[type="range"]')
            assert not valid.is_disabled()
        if title == "Scaling by √d":
            assert page.locator(MAIN_SLIDER).first.get_attribute("aria-valuetext") == moved
    step = page.locator('[data-testid="stMetric"]', has_text="step").locator('[data-testid="stMetricValue"]').first
    assert step.inner_text().strip() == "10"
    assert page.locator('[data-testid="stAlert"]', has_text="new model").count() == 0


def test_predict_then_reveal_and_switch_a_head_off_in_the_browser(page, server_url):
    """In lecture mode the Scaling page asks first and shows its figure after Reveal, on a 1280 x 720 screen; on
    Live training a model trained 10 steps, a head switched off changes the ablated loss tile and not the step."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(server_url + "/scaling?lecture=1")
    page.wait_for_selector('[data-testid="stRadio"]')
    wait_idle(page)
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0 or \
        page.locator('[data-testid="stPlotlyChart"]', has_text="Logit standard deviation").count() == 0
    page.get_by_text("like √d", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Reveal").click()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.wait_for()
    wait_idle(page)
    assert page.locator('[data-testid="stMarkdown"]', has_text="Right.").count() == 1
    box = chart.bounding_box()
    assert box["y"] + box["height"] <= 720, box                 # the revealed figure is on screen
    page.evaluate("document.fonts.ready")
    page.screenshot(path=str(ARTIFACTS / "predict_revealed_scaling.png"))
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.goto(server_url + "/live_training")
    page.wait_for_selector(CHART)
    wait_idle(page)
    page.get_by_role("button", name="Step ×10").click()
    wait_idle(page)
    tile = page.locator('[data-testid="stMetric"]', has_text="loss, 0 off").locator('[data-testid="stMetricValue"]')
    before = tile.inner_text()
    page.locator('[data-testid="stMultiSelect"]', has_text="Switch off heads").click()
    page.get_by_role("option", name="L0 H0").click()
    page.keyboard.press("Escape")
    wait_idle(page)
    after = page.locator('[data-testid="stMetric"]', has_text="loss, 1 off").locator('[data-testid="stMetricValue"]')
    assert after.inner_text() != before
    step = page.locator('[data-testid="stMetric"]', has_text="step").locator('[data-testid="stMetricValue"]').first
    assert step.inner_text().strip() == "10"
    page.evaluate("document.fonts.ready")
    page.screenshot(path=str(ARTIFACTS / "live_training_heads.png"), full_page=True)


def _url_params(page) -> dict:
    from urllib.parse import parse_qs, urlparse
    return {k: v[0] for k, v in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


def test_a_reload_in_lecture_mode_keeps_lecture_mode_and_every_setting(page, server_url):
    """Lecture mode turns Predict first on, so the page waits at its question; its URL is written all the same:
    a reload comes back in lecture mode with the slider where it was, and Next leads to a page whose URL carries
    lecture mode too."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(server_url + "/masking?lecture=1")
    page.wait_for_selector('[data-testid="stMain"] [role="radiogroup"]')                # waiting at the question
    wait_idle(page)
    assert page.locator('[data-testid="stMain"] [role="radiogroup"]').count() == 1
    slider = page.locator(MAIN_SLIDER).first
    slider.focus()
    slider.press("ArrowRight")
    wait_idle(page)
    params = _url_params(page)
    assert params.get("lecture") == "1" and params.get("mask.length") == "9", params
    page.reload()
    page.wait_for_selector('[data-testid="stMain"] h1')
    wait_idle(page)
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "19px"    # still lecture mode
    assert page.locator(MAIN_SLIDER).first.get_attribute("aria-valuetext") == "9"
    page.locator('[data-testid="stMain"] [data-testid="stPageLink"]', has_text="Scaling").first.click()
    page.wait_for_selector('[data-testid="stMain"] h1:has-text("Scaling")')
    wait_idle(page)
    params = _url_params(page)
    assert params.get("lecture") == "1" and "scale.d" in params, params


def test_switching_lecture_mode_on_puts_it_in_the_url(page, server_url):
    page.goto(server_url + "/scaling")
    page.wait_for_selector(CHART)
    wait_idle(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("Lecture mode").click()
    wait_idle(page)
    assert _url_params(page).get("lecture") == "1"


def test_a_lesson_card_is_a_link_and_an_unknown_path_is_said(page, server_url):
    """Clicking a lesson's thumbnail on the landing page opens that lesson; a path that names no page opens the
    landing page with a sentence saying so, in the page's language."""
    page.goto(server_url + "/?lang=zh")
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stImage"] img')
    wait_idle(page)
    image = page.locator('[data-testid="stMain"] [data-testid="stImage"]').nth(3)       # the fourth lesson
    image.scroll_into_view_if_needed()
    box = image.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(f'[data-testid="stMain"] h1:has-text("{t(f"page.{LESSONS[3].name}", "zh")}")')
    page.goto(server_url + "/no_such_lesson?lang=zh")
    page.wait_for_selector('[data-testid="stMain"] h1')
    wait_idle(page)
    assert page.locator('[data-testid="stAlert"]', has_text="/no_such_lesson").count() == 1
