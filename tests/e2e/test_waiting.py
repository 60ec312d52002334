"""A change the server has not started on says so (explorer/ui/waiting.py): a server that cannot take the change
(here: stopped with SIGSTOP, as a saturated one behaves from the browser's side) gets a slider move; the badge
over the slider says the change is in line, in the page's language, in lecture mode on a 1280 x 720 projector
too; once the server runs again the rerun happens, the badge goes, the link takes the value and nothing errs.
How soon the badge shows on a real saturated server is measured in ``make bench`` ("saturated server" rows), not
here. The screenshots are saved as waiting_<variant>.png."""

import os
import signal
import time

import pytest

from explorer.i18n import t
from explorer.serving import AppServer
from explorer.ui.follow import widget_class
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser import wait_idle
from tests.e2e.test_follow import rest_of_page_after

KEY = "mask.length"          # Masking's length: its figure does not follow in the browser, so only the badge moves


@pytest.fixture(scope="module")
def own_server():
    """A server of this test's own: it is stopped and continued, and no other test should wait on that."""
    with AppServer(env={"EXPLORER_WARM_UP": "0"}, timeout=120) as server:
        yield server


@pytest.mark.parametrize("lang, query, viewport", [
    ("en", "", {"width": 1400, "height": 900}),
    ("zh", "&lecture=1", {"width": 1280, "height": 720}),
], ids=["en_1400", "zh_lecture"])
def test_a_change_the_server_has_not_taken_says_so_and_the_badge_goes_when_it_has(browser, own_server, lang, query,
                                                                                viewport):
    context = browser.new_context(viewport=viewport)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{own_server.url}/masking?predict=0&lang={lang}{query}")
        page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot')
        wait_idle(page)
        widget = page.locator(f".{widget_class(KEY)}")
        widget.scroll_into_view_if_needed()
        thumb = widget.locator('input[type="range"]').first
        thumb.focus()
        before = widget.locator('[data-testid="stSliderThumbValue"]').inner_text().strip()
        os.kill(own_server.pid, signal.SIGSTOP)
        try:
            thumb.press("ArrowRight")
            badge = page.locator(".explorer-waiting")
            badge.wait_for(state="visible", timeout=15_000)
            assert badge.inner_text().strip() == t("ui.waiting", lang)
            box, slider = badge.bounding_box(), widget.bounding_box()
            assert abs(box["y"] + box["height"] - slider["y"]) < 8, (box, slider)        # just over the slider
            assert slider["x"] - 1 <= box["x"] <= slider["x"] + slider["width"]
            assert box["x"] + box["width"] <= viewport["width"], "the badge runs off the screen"
            (ARTIFACTS / f"waiting_{lang}{'_lecture' if query else ''}.png").write_bytes(page.screenshot())
        finally:
            os.kill(own_server.pid, signal.SIGCONT)
        value = widget.locator('[data-testid="stSliderThumbValue"]').inner_text().strip()
        assert value != before
        rest_of_page_after(page, time.time(), KEY, value)
        page.locator(".explorer-waiting").wait_for(state="detached", timeout=15_000)
        wait_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()
