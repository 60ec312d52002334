"""Live training on a projector while a model trains (1280 x 720, lecture mode, 中文, dark): for each task, ten
snapshots half a second apart while it trains in its worker process. In every snapshot each chart of the live view
is drawn (the maps with every head's cells, at least 180 px a side; the entropy and loss with their lines) and the
maps' Export is on screen; charts are updated in place, made anew (an empty box until plotly.js draws it) in at
most two snapshots, when their layout changed; from snapshot to snapshot the step count never goes back, and over
the ten the step, the loss and the maps all change. A snapshot waits up to 2 s for a chart being drawn (empty, or
its maps not yet at their size). The last snapshot of each task is saved for reading."""

import re
import time

from explorer.training import TASKS
from tests.conftest import until
from tests.e2e.conftest import ARTIFACTS, as_viewer
from tests.e2e.test_browser import wait_idle

SNAPSHOTS = 10
EVERY = 0.5          # seconds between snapshots (half a tick: the page redraws every second)
MAP_SIDE = 180       # px: the least a map's side may be on the projector
HEADS_SHOWN = {"reverse": 2, "induction": 2, "sort": 2, "sine_icl": 2}     # one layer's heads at the defaults

# The live view as drawn: per visible chart, the heatmap tiles (size and image) and the line traces drawn; the
# numbers in the step's tiles; the bottom of the maps' Export. One evaluation: a snapshot is one moment.
VIEW = """(mark) => {
  const charts = [...document.querySelectorAll('.st-key-live-view [data-testid="stPlotlyChart"]')]
    .filter(c => c.getBoundingClientRect().height > 0)
    .map(c => ({maps: [...c.querySelectorAll('.heatmaplayer image, .hm image')].map(i => {
                  const r = i.getBoundingClientRect(); return [r.width, r.height, i.getAttribute('href') || ''];}),
                lines: c.querySelectorAll('.scatterlayer .trace path.js-line').length,
                key: ([...(c.closest('[class*="st-key-"]') || c).classList].find(k => k.startsWith('st-key-')) || '')
                  + (c.closest('[data-stale="true"]') ? ' (stale)' : '')}));
  const tiles = [...document.querySelectorAll('.st-key-live-metrics [data-testid="stMetricValue"]')]
    .map(t => t.textContent.trim());
  const exp = document.querySelector('.st-key-live-view [data-testid="stPopover"]');
  const plots = [...document.querySelectorAll('.st-key-live-view .js-plotly-plot')]
    .filter(p => p.getBoundingClientRect().height > 0);
  if (mark) plots.forEach(p => { p.dataset.seen = '1'; });
  return {charts, tiles, export_bottom: exp ? exp.getBoundingClientRect().bottom : 1e9,
          new_charts: plots.filter(p => !p.dataset.seen).length};
}"""


def snapshot(page, mark: bool = False) -> dict | None:
    """The live view as drawn now, or None while any of its charts has nothing drawn; ``mark``: tag the charts'
    plotly elements, so that a later snapshot counts the ones made since (a chart drawn anew, not updated)."""
    view = page.evaluate(VIEW, mark)
    charts = view["charts"]
    if len(charts) < 2 or not charts[0]["maps"] or any(not (c["maps"] or c["lines"]) for c in charts):
        return None
    return view


def maps_side(view: dict) -> float:
    """The smallest side of the maps' heatmaps in a snapshot."""
    return min(min(w, h) for w, h, _ in view["charts"][0]["maps"])


def drawn_whole(page, task: str) -> dict | None:
    """A snapshot in which every chart is drawn and (but for sine_icl's maps, queries x context points, not square)
    the maps are at their projector size, waited for up to 2 s, then taken with the charts tagged (``mark``): a
    chart made anew while it waited is counted. (A fresh-clone run once found the maps drawn at 95 px a side in one
    snapshot of the lecture layout, whose maps are otherwise over 180 px; cause not found: the wait is the one an
    empty chart gets.)"""
    until(lambda: (v := snapshot(page)) and (task == "sine_icl" or maps_side(v) >= MAP_SIDE), 2.0, 0.05)
    return snapshot(page, mark=True)


def test_every_map_and_chart_is_drawn_in_every_snapshot_while_a_model_trains(page, server_url):
    as_viewer(page, 1280, 720, "dark")
    for task in TASKS:
        watch_training(page, server_url, task)


def watch_training(page, server_url: str, task: str) -> None:
    page.goto(f"{server_url}/live_training?train.task={task}&lecture=1&predict=0&lang=zh")
    wait_idle(page)
    page.get_by_role("button", name=re.compile("^开始$")).click()
    # the first published step (the view takes its training layout); then each chart is kept and updated in place:
    # a snapshot finds a chart made anew only when its layout changed (its legend moved off the curves, say), not at
    # every tick, which left an empty box until plotly.js drew the new one
    assert until(lambda: (s := snapshot(page)) and s["tiles"] and int(s["tiles"][0]) > 0, 60), task
    time.sleep(2 * EVERY)                    # (the outgoing copies of the first layout's charts are gone)
    assert snapshot(page, mark=True), task
    shots = []
    for _ in range(SNAPSHOTS):
        time.sleep(EVERY)
        shot = drawn_whole(page, task)
        assert shot, f"{task}: a chart of the live view was empty for 2 s ({len(shots)} snapshots in)"
        maps = shot["charts"][0]["maps"]
        assert len(maps) == HEADS_SHOWN[task], maps
        if task != "sine_icl":               # (its maps are queries x context points: 6 rows, not square)
            assert maps_side(shot) >= MAP_SIDE, (task, [(w, h) for w, h, _ in maps],
                                                 [c["key"] for c in shot["charts"]])
        assert shot["export_bottom"] <= 720, (task, shot["export_bottom"])
        shots.append(shot)
    remade = sum(1 for shot in shots if shot["new_charts"])
    assert remade <= 2, f"{task}: charts drawn anew in {remade} of {SNAPSHOTS} snapshots, not updated in place"
    steps = [int(s["tiles"][0]) for s in shots]
    assert steps == sorted(steps) and steps[-1] > steps[0], (task, steps)
    assert shots[-1]["tiles"][1] != shots[0]["tiles"][1], task                     # the loss
    assert shots[-1]["charts"][0]["maps"][0][2] != shots[0]["charts"][0]["maps"][0][2], task   # the maps' cells
    page.screenshot(path=str(ARTIFACTS / f"live_lecture_{task}_zh_dark.png"))
    page.get_by_role("button", name=re.compile("^暂停$")).click()          # (frees the training slot for the next)
    page.locator('.st-key-train-start button:not([disabled])').wait_for(timeout=30_000)
