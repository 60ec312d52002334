"""Drag the slider under each lesson's main figure in Chromium: the figure redraws while the thumb moves (frames
played in the browser, no server round trip), and on release the page's control and the link take the value.

What is asserted is what must happen (frames drawn during the drag, each a different value; the control and
the link at the released value; no exception). How fast is recorded, not asserted: frames per second during the
drag, the time plotly takes per frame and the time from the release to the rest of the page are written to
tests/artifacts/follow_drag.json (``make bench`` reports the same measurements); the mid-drag screenshots are
saved as follow_<page>_<variant>.png."""

import itertools
import json
import statistics
import time
from urllib.parse import parse_qs, urlparse

import pytest

from explorer.ui.follow import widget_class
from tests.e2e.conftest import ARTIFACTS, as_viewer
from tests.e2e.test_browser import SCRIPT_STATE, wait_idle

# page, what the link sets first, the control the main figure follows
PAGES = [
    ("kernel_regression", "", "nw.bandwidth"),
    ("attention_heatmap", "", "nw.bandwidth"),
    ("softmax_kernel", "", "sk.d"),
    ("masking", "mask.kind=padding&mask.length=16", "mask.valid"),
    ("scaling", "", "scale.d"),
    ("efficient_attention", "", "ef.m"),
]

COUNT = """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g.layout && g.layout.meta && g.layout.meta.follow);
  window.__follow = {changed: [], drawn: [], values: []};
  gd.on('plotly_sliderchange', (e) => { window.__follow.changed.push(performance.now());
                                        window.__follow.values.push(e.step.value); });
  gd.on('plotly_animated', () => window.__follow.drawn.push(performance.now()));
  gd.addEventListener('explorer_followed', () => window.__follow.drawn.push(performance.now()));   // the component's
  return gd.layout.meta.follow; }"""


FOLLOWED = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g.layout && g.layout.meta && g.layout.meta.follow)"""

# A figure whose frames redraw it whole has them drawn ahead, off screen, once it is drawn (explorer/ui/follow.py):
# the number of frames ready, once all are
AHEAD = f"""() => {{ const gd = ({FOLLOWED})();
  return !gd.layout.meta.redraw || gd.dataset.framesAhead === String(gd.layout.meta.frames.length); }}"""


def frames_ready(page) -> None:
    page.wait_for_function(AHEAD, timeout=30_000)


# more frames drawn than ``n`` and none for 0.3 s: the figure has caught up with the thumb (a thumb faster than the
# drawing skips steps, so the frames drawn can be fewer than the steps passed)
RESTED = """n => { const d = window.__follow.drawn;
  return d.length > n && performance.now() - d[d.length - 1] > 300; }"""


def drag(page) -> dict:
    """Drag the followed figure's slider from its first step to its last, one step per mouse move (as fast as
    the page takes the moves), then back to the middle, held there for the screenshot, and release."""
    chart = page.locator(".js-plotly-plot:has(.slider-rail-touch-rect)").first
    chart.scroll_into_view_if_needed()
    followed = page.evaluate(COUNT)
    n = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .find(g => g.layout && g.layout.meta && g.layout.meta.follow).layout.sliders[0].steps.length""")
    rail = chart.locator(".slider-rail-touch-rect").bounding_box()
    y = rail["y"] + rail["height"] / 2

    def at(i):
        return rail["x"] + 2 + (rail["width"] - 4) * i / (n - 1)
    page.mouse.move(at(0), y)
    page.mouse.down()
    start = time.time()
    for i in range(1, n):
        page.mouse.move(at(i), y)
    page.wait_for_function(RESTED, arg=0, timeout=10_000)
    dragged = time.time() - start
    seen = page.evaluate("() => JSON.parse(JSON.stringify(window.__follow))")
    page.mouse.move(at(n // 2), y, steps=4)
    page.wait_for_function(RESTED, arg=len(seen["drawn"]), timeout=10_000)
    shot = page.screenshot()
    middle = page.evaluate("window.__follow.values.at(-1)")
    page.mouse.up()
    released = time.time()
    return {"followed": followed, "seen": seen, "drag_s": dragged, "released": released, "mid_drag": shot,
            "released_at": middle}


def drag_control(page, key: str) -> dict:
    """Drag the page's own slider (the control the main figure follows) from its left end to its right end and
    back to the middle; returns what the figure drew while it moved, and the value it was released at."""
    widget = page.locator(f".{widget_class(key)}")
    widget.scroll_into_view_if_needed()
    page.evaluate(COUNT)
    track = widget.locator('[role="group"]').first.bounding_box()
    thumb = widget.locator('[data-testid="stSliderThumbValue"]').locator("..").bounding_box()
    y = thumb["y"] + thumb["height"] / 2
    page.mouse.move(thumb["x"] + thumb["width"] / 2, y)
    page.mouse.down()
    start = time.time()
    for i in range(31):
        page.mouse.move(track["x"] + track["width"] * i / 30, y)
    page.mouse.move(track["x"] + track["width"] / 2, y, steps=5)
    page.wait_for_function(RESTED, arg=0, timeout=10_000)           # the figure has caught up with the thumb
    dragged = time.time() - start
    shot = page.screenshot()
    released_at = widget.locator('[data-testid="stSliderThumbValue"]').inner_text().strip()
    seen = page.evaluate("() => JSON.parse(JSON.stringify(window.__follow))")
    page.mouse.up()
    return {"seen": seen, "drag_s": dragged, "released": time.time(), "mid_drag": shot, "released_at": released_at}


def rest_of_page_after(page, released: float, key: str, value: str, timeout: float = 60) -> float:
    """Seconds from the release until the page's link says ``key=value`` and no script is running: the rerun the
    release started has finished. (Polling for a running script alone misses a rerun shorter than one poll.)"""
    deadline = time.time() + timeout
    while time.time() < deadline:
        script, _ = page.evaluate(SCRIPT_STATE)
        if script == "notRunning" and parse_qs(urlparse(page.url).query).get(key) == [value]:
            return time.time() - released
        time.sleep(0.02)
    raise AssertionError(f"{timeout} s after the release the link is {page.url}, not {key}={value}")


def measure(page, url: str, name: str, variant: str, shots=ARTIFACTS) -> dict:
    """Open ``url``, drag its followed figure's slider and release (``drag``); what was drawn and how fast, the
    mid-drag screenshot saved under ``shots`` (None: not saved). ``make bench`` calls this too."""
    page.goto(url)
    page.wait_for_selector(".js-plotly-plot .slider-rail-touch-rect")
    wait_idle(page)
    frames_ready(page)
    got = drag(page)
    if shots is not None:
        (shots / f"follow_{name}_{variant}.png").write_bytes(got["mid_drag"])
    seen = got["seen"]
    after = rest_of_page_after(page, got["released"], got["followed"], got["released_at"])
    wait_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0, f"exception on {name} after the drag"
    drawn = seen["drawn"][:len(seen["values"])]
    gaps = [b - a for a, b in itertools.pairwise(drawn)]          # ms between frames drawn one after another
    return {"page": name, "variant": variant, "control": got["followed"], "values": seen["values"],
            "frames": len(seen["drawn"]), "drag_s": round(got["drag_s"], 3),
            "frames_per_s": round(1000 * len(gaps) / sum(gaps), 1) if gaps else None,
            "ms_between_frames_median": round(statistics.median(gaps), 1) if gaps else None,
            "ms_between_frames_max": round(max(gaps), 1) if gaps else None,
            "released_at": got["released_at"], "release_to_page_s": round(after, 3), "url": page.url}


@pytest.fixture
def screen(page):
    """The file's tab (tests/e2e/conftest.py) at 1400 x 900 px."""
    return as_viewer(page, 1400, 900)


# What a drawing shows, in document order, for comparing two drawings of one figure: each path's outline, each
# image's data (a heatmap's colours) and each text with its place; not the slider (a thumb is where it is) and not
# what is never seen (clip paths, the layer that takes the mouse).
DRAWN = """(root) => { const out = [];
  const walk = (el) => {
    if (el.classList.contains('slider-container') || el.classList.contains('draglayer')) return;
    const tag = el.tagName.toLowerCase();
    if (tag === 'defs') return;
    if (tag === 'path') out.push('path ' + el.getAttribute('d'));
    if (tag === 'image') out.push('image ' + (el.getAttribute('href') || el.getAttribute('xlink:href')));
    if (tag === 'text') out.push(`text ${el.textContent} at ${el.getAttribute('x')},${el.getAttribute('y')}`);
    for (const c of el.children) walk(c); };
  walk(root); return out; }"""


REDRAWN = ("softmax_kernel", "masking", "scaling")     # pages whose frames redraw the whole figure


def assert_frame_drawn_ahead_is_what_plotly_draws(screen, name):
    """On the page shown (idle): a frame drawn ahead, laid over the figure while the thumb is held on it, and
    plotly's own drawing of that frame once the thumb rests are the same: every path, heatmap image and label, in
    order."""
    frames_ready(screen)
    chart = screen.locator(".js-plotly-plot:has(.slider-rail-touch-rect)").first
    chart.scroll_into_view_if_needed()
    n = screen.evaluate(f"() => ({FOLLOWED})().layout.meta.frames.length")
    k = n // 2
    picture = screen.evaluate(f"""() => {{ const drawn = {DRAWN};
        return drawn(({FOLLOWED})().__explorerAhead.pictures[{k}]); }}""")
    screen.evaluate("""() => { window.__pictures = 0;
        new MutationObserver(() => { if (document.querySelector('.explorer-ahead')) window.__pictures++; })
          .observe(document.body, { childList: true, subtree: true }); }""")
    rail = chart.locator(".slider-rail-touch-rect").bounding_box()
    y = rail["y"] + rail["height"] / 2
    screen.mouse.move(rail["x"] + 2, y)
    screen.mouse.down()
    screen.mouse.move(rail["x"] + 2 + (rail["width"] - 4) * k / (n - 1), y, steps=4)
    screen.wait_for_function("window.__pictures > 0", timeout=10_000)
    screen.wait_for_function("() => !document.querySelector('.explorer-ahead')", timeout=10_000)
    wait_idle(screen)
    live = screen.evaluate(f"""() => {{ const drawn = {DRAWN};
        const [paper, top] = ({FOLLOWED})().querySelectorAll('.main-svg');
        return drawn(paper).concat(drawn(top)); }}""")
    screen.mouse.up()
    assert len(picture) > 20 and any(p.startswith("text ") for p in picture)
    assert picture == live, f"{name}: frame {k} drawn ahead differs from plotly's drawing of it"


def test_each_main_figure_follows_a_drag_and_the_release_sets_the_control(screen, server_url):
    """Each page's main figure redraws while the slider under it is dragged (frames, each a different value) and
    the release sets the page's control and its link. The pages whose frames redraw the whole figure (heatmaps,
    labels) have each frame drawn ahead, off screen, and a drag lays the frame's picture over the figure; once the
    thumb rests, plotly draws that frame itself and the picture goes: after the release, both drawings of one frame
    are compared on the same page."""
    rows = []
    for name, setup, control in PAGES:
        row = measure(screen, f"{server_url}/{name}?predict=0&{setup}", name, "1400")
        rows.append(row)
        assert row["control"] == control
        assert row["frames"] >= 3, f"{name}: {row['frames']} frames drawn during the drag"
        assert row["released_at"] not in (row["values"][0], row["values"][-1])
        assert len(set(row["values"])) == len(row["values"]) >= 3, f"{name}: steps {row['values']}"
        link = parse_qs(urlparse(row["url"]).query)
        assert link[control] == [row["released_at"]], f"{name}: the link says {link.get(control)}"
        if name in REDRAWN:
            assert_frame_drawn_ahead_is_what_plotly_draws(screen, name)
    (ARTIFACTS / "follow_drag.json").write_text(json.dumps(rows, indent=1))


def test_the_pages_own_slider_is_a_thumb_too_in_lecture_mode_in_chinese_and_in_the_dark(page, server_url):
    """Lecture mode has no room for a slider under the figure: dragging the page's own control plays the frames
    (on a 1280 x 720 projector, in Chinese); at 1400 px both thumbs do, on a dark page too."""
    rows = []
    for name, key, variant, viewer, query in [
            ("kernel_regression", "nw.bandwidth", "lecture_zh", (1280, 720, "light"), "lecture=1&lang=zh"),
            ("scaling", "scale.d", "lecture_zh", (1280, 720, "light"), "lecture=1&lang=zh"),
            ("kernel_regression", "nw.bandwidth", "dark_control", (1400, 900, "dark"), "lang=en")]:
        as_viewer(page, *viewer).goto(f"{server_url}/{name}?predict=0&{query}")
        page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot')
        wait_idle(page)
        assert (page.locator(".js-plotly-plot .slider-rail-touch-rect").count() == 0) == ("lecture" in variant)
        got = drag_control(page, key)
        (ARTIFACTS / f"follow_{name}_{variant}.png").write_bytes(got["mid_drag"])
        rest_of_page_after(page, got["released"], key, got["released_at"])
        wait_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        link = parse_qs(urlparse(page.url).query)
        assert link[key] == [got["released_at"]], f"{name}: the link says {link.get(key)}"
        drawn = got["seen"]["drawn"]
        rows.append({"page": name, "variant": variant, "frames": len(drawn), "drag_s": round(got["drag_s"], 3),
                     "released_at": got["released_at"]})
        assert len(drawn) >= 3, f"{name} ({variant}): {len(drawn)} frames while the page's slider moved"
    (ARTIFACTS / "follow_drag_control.json").write_text(json.dumps(rows, indent=1))
