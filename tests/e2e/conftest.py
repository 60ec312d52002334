"""A real Streamlit server and a real headless Chromium (Debian's, never Playwright's download)."""

import contextlib
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from explorer.serving import AppServer

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# The last two: V8 without its optimising compilers (TurboFan, Maglev). A test page lives for seconds, too short for
# optimised code to repay compiling it: a walk through every page cost Chromium 16.7 and 16.9 CPU-s with them off,
# 17.3-18.8 with them on (two walks and four, 2 cores). The code runs the same either way.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--js-flags=--no-opt --no-maglev"]


# ``make test`` sets REQUIRE_BROWSER=1: there a missing Chromium fails the run; a plain ``pytest`` in a checkout
# without one runs everything else and says what it skipped
REQUIRED = os.environ.get("REQUIRE_BROWSER") == "1"
# Under pytest-xdist (``make test`` runs the suite on several workers) each worker has its own server, logs and
# poll store: "gw0", "gw1", ...; "" in a plain ``pytest``.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
MISSING = f"Chromium not found at {CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM=/path/to/chromium"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
            if not Path(CHROMIUM).exists() and not REQUIRED:
                item.add_marker(pytest.mark.skip(reason=f"browser test: {MISSING}"))


@contextlib.contextmanager
def streamlit_server(log_name: str = "server.log"):
    """A fresh ``streamlit run app.py`` on a free loopback port, configured as ``make run`` configures it;
    yields its base URL."""
    if WORKER:
        log_name = f"{Path(log_name).stem}-{WORKER}.log"
    polls = ARTIFACTS / f"{Path(log_name).stem}-polls.sqlite3"         # this server's class polls, fresh each run
    for old in ARTIFACTS.glob(f"{polls.name}*"):
        old.unlink()
    env = {"EXPLORER_WARM_UP": "1", "EXPLORER_POLLS": str(polls)}
    with open(ARTIFACTS / log_name, "w") as log, AppServer(log=log, env=env) as server:
        yield server.url


@pytest.fixture(scope="session")
def server_url():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as url:
        yield url


# What wait_idle (tests/e2e/test_browser.py) needs besides the run state: whether the runs the page asked for are
# over. A widget's change sends a rerun request (a BackMsg whose first field is rerun_script, number 11: its first
# byte is 0x5a) and leaves the page's run state at "notRunning" until the server answers, which a busy server can
# take longer than wait_idle's quiet window to do; and a short run can start and end between two drawings of the
# page, so that the run state never reads "running". Each page of a watched context notes when it last sent a request
# and when the server last said a run was over (a ForwardMsg with script_finished, field 6, other than "finished
# early for a rerun", which the run that follows answers).
# ``window.__explorerSendDelay`` (ms) holds each request back that long before it leaves: the test of wait_idle.
RUN_TRACKER = """(() => {
  const runs = window.__explorerRuns = {sent: 0, sentAt: -1, finished: 0, finishedAt: -1};
  const status = data => {      // a ForwardMsg's script_finished status, or -1: its top-level fields walked
    const b = new Uint8Array(data);
    let i = 0;
    const varint = () => { let v = 0, scale = 1, c; do { c = b[i++]; v += (c & 0x7f) * scale; scale *= 128; }
                           while (c & 0x80 && i < b.length); return v; };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { const v = varint(); if (field === 6) return v; }
      else if (wire === 2) { const length = varint(); i += length; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return -1;
    }
    return -1;
  };
  const heard = new WeakSet();
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!heard.has(this)) {
      heard.add(this);
      this.addEventListener('message', e => {
        const s = e.data instanceof ArrayBuffer ? status(e.data) : -1;
        if (s >= 0 && s !== 2) { runs.finished += 1; runs.finishedAt = performance.now(); }
      });
    }
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
      : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
    if (!bytes || bytes[0] !== 0x5a) return send.call(this, data);
    runs.sent += 1;
    runs.sentAt = performance.now();
    const delay = window.__explorerSendDelay || 0;
    if (!delay) return send.call(this, data);
    setTimeout(() => send.call(this, data), delay);
  };
})();"""


class WatchedBrowser:
    """Chromium, with every context it opens watched: a request to any host but the app's (127.0.0.1) and any
    Content-Security-Policy violation the page reports are collected in ``problems`` (``data:`` and ``blob:`` URLs
    are the page's own); each page counts the runs it asks the server for (``RUN_TRACKER``)."""

    def __init__(self, browser):
        self._browser = browser
        self.problems: list[str] = []

    def _watch(self, context):
        def request(r):
            host = urlsplit(r.url)
            if host.scheme in ("http", "https", "ws", "wss") and host.hostname != "127.0.0.1":
                self.problems.append(f"request to {r.url}")

        def console(message):
            if "Content Security Policy" in message.text:
                self.problems.append(message.text[:300])
        context.on("request", request)
        context.on("console", console)
        context.add_init_script(RUN_TRACKER)
        return context

    def new_context(self, **kwargs):
        return self._watch(self._browser.new_context(**kwargs))

    def new_page(self, **kwargs):
        context = self.new_context(**kwargs)
        page = context.new_page()
        page.on("close", lambda _: context.close())
        return page

    def offline_context(self, **kwargs):
        """A context with the network off, for pages that are not the app's (an exported notebook): every http(s) or
        websocket request is refused, and listed in the second item returned."""
        context = self._browser.new_context(**kwargs)
        refused: list[str] = []

        def refuse(route):
            refused.append(route.request.url)
            route.abort()
        context.route(re.compile(r"^(https?|wss?)://"), refuse)
        return context, refused

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser():
    """One Chromium per test file. Playwright's synchronous API runs an asyncio loop on the calling thread for as long
    as it is open (``asyncio.get_running_loop()`` answers it there), so it is opened and closed within each browser
    file: a test of another file that starts a loop of its own (an ASGI app driven by ``asyncio.run``) never finds
    one running, whatever order the files run in. (Launching Chromium costs about a second a file.)"""
    if not Path(CHROMIUM).exists():
        pytest.fail(MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield WatchedBrowser(b)
        b.close()


@pytest.fixture(autouse=True)
def nothing_leaves_the_machine_and_nothing_breaks_the_policy(request):
    """Every browser test fails if a page it opened asked another host for anything or broke the app's
    Content-Security-Policy (``explorer.web``): the policy must allow all the app does, and nothing else."""
    if "browser" not in request.fixturenames:
        yield
        return
    watched = request.getfixturevalue("browser")
    watched.problems.clear()
    yield
    problems, watched.problems[:] = list(watched.problems), []
    assert not problems, problems[:5]


def as_viewer(page, width: int, height: int, scheme: str = "light"):
    """``page`` at ``width`` x ``height`` px for a viewer whose OS prefers the ``scheme`` colours (Streamlit's theme
    and the figures follow it)."""
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=scheme)
    return page


@pytest.fixture(scope="module")
def _tab(browser):
    context = browser.new_context()
    yield context, context.new_page()
    context.close()


@pytest.fixture
def page(_tab):
    """A tab at 1400 x 2400 px for a viewer whose OS prefers light, with no cookie and none of the app's storage: the
    same tab for every test of a file, each test opening its own page in it (a new document, a new session of the app)
    and leaving it for a blank one when it ends (its session closes, as a closed tab's does). Opening a page in a new
    browser context took about 3 s more (4-5 s against 2 s: a new renderer process, an empty cache)."""
    context, p = _tab
    if p.is_closed():
        p = context.new_page()
    context.clear_cookies()
    as_viewer(p, 1400, 2400).set_default_timeout(60_000)
    yield p
    from playwright.sync_api import Error as PlaywrightError

    if not p.is_closed():
        with contextlib.suppress(PlaywrightError):     # (a page that has crashed or hangs: the next test's goto)
            if p.url.startswith("http"):
                p.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            p.goto("about:blank")
            p.mouse.up()                           # (a test stopped mid-drag leaves no button held for the next)
