"""``make bench`` group "hostile": what an attacker's requests cost one server started as ``make run`` starts it, and
that an honest class still gets through. Every load goes to 127.0.0.1 and is bounded in count and time.

Rows: forged votes counted (no page loaded: fresh cookies, form values computed without the deployment's secret,
made-up forwarded addresses); the votes one address can count in 10 s with ids the server did issue; the honest
hall of 200 phones behind one address (``bench.load.votes``); the server's CPU for each hostile upload shape at up
to 5 MB and for a valid 5,000-row upload, through the page in Chromium; RSS after 20 distinct heavy links against
the idle server's RSS and the caches' budget; seconds until a stalled request is closed.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import socket
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from bench import load
from explorer import connections, phone
from explorer.polls import SQLiteStore
from explorer.serving import AppServer
from explorer.ui import memory

TEXTS = {"en": {"question": "Which?", "choices": ["a", "b", "c", "d"]}}
MB5 = 4_990_000                 # bytes: under the 5 MB the uploader takes
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
HEAVY = "/attention_heatmap?heat.n_queries=1000&data.n=2000&data.seed={seed}&predict=0"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0        # utime, stime in clock ticks (100 a second)


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Process ``pid``'s resident size now (``VmRSS``) or at its peak (``VmHWM``), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _post(url: str, fields: dict, headers: dict) -> int:
    body = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded",
                                                                 **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def forged_votes(base: str, code: str, n: int) -> dict:
    """``n`` votes from a script that never loads the page: each a fresh cookie of the right shape, the form
    value a page would have carried before votes were signed, a made-up forwarded address."""
    statuses = []
    for i in range(n):
        voter = secrets.token_urlsafe(18) + secrets.token_urlsafe(18)[:22]
        form = hashlib.sha256(f"vote-form:{code}:{voter}".encode()).hexdigest()[:32]
        statuses.append(_post(f"{base}/vote/{code}", {"choice": "0", "round": "1", "form": form},
                              {"Cookie": f"{phone.COOKIE}{code}={voter}",
                               "X-Forwarded-For": f"198.51.100.{i % 250}"}))
    return {"sent": n, "refused": sum(s == 403 for s in statuses)}


def one_address_flood(base: str, code: str, seconds: float) -> dict:
    """As many phones as one address can make in ``seconds``: each loads the page (its id issued), then votes."""
    stop, made, refused = time.monotonic() + seconds, 0, 0
    while time.monotonic() < stop:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        try:
            page = opener.open(f"{base}/vote/{code}", timeout=10).read().decode()
        except urllib.error.HTTPError as err:
            refused += err.code == 429
            continue
        form = re.search(r'name="form" value="([^"]+)"', page).group(1)
        made += 1
        try:
            opener.open(f"{base}/vote/{code}", urllib.parse.urlencode(
                {"choice": "1", "round": "1", "form": form}).encode(), timeout=10).read()
        except urllib.error.HTTPError:
            pass
    return {"phones": made, "refused_ids": refused}


def stalled_request_closed_after(port: int, limit: float = 60) -> float | None:
    """Seconds until the server closes a request that sends a header line every 2 s and never ends."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sock.settimeout(2)
        while time.monotonic() - start < limit:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                if sock.recv(4096) == b"":
                    return time.monotonic() - start
            except TimeoutError:
                continue
            except OSError:
                return time.monotonic() - start
    return None


def hostile_files() -> dict[str, bytes]:
    """The shapes that cost pandas minutes, each at 5 MB where the shape allows, and a valid file at the limit."""
    colon = (":".join("c" for _ in range(2_400)) + "\n").encode()
    return {
        "ragged first row of 100k fields (0.2 MB)": b"x,y\n" + b",".join(b"1" for _ in range(100_000)) + b"\n",
        "ragged first row, 5 MB": b"x,y\n" + b"1," * (MB5 // 2 - 4) + b"\n",
        "a ':' header of 2,400 columns, 5 MB": colon + b"1:2:3:4:5:6:7:8:9\n" * ((MB5 - len(colon)) // 18),
        "2.5 M blank lines": b"x,y\n1,2\n" + b"\n" * 2_500_000 + b"3,4\n",
        "5,000 rows x 100 columns, 5 MB": (",".join(f"c{i}" for i in range(100)) + "\n").encode()
        + (",".join(["1.234567"] * 100) + "\n").encode() * 5_000,
    }


def valid_upload(rows: int = 5_000) -> bytes:
    import numpy as np

    gen = np.random.default_rng(0)
    xs = np.sort(gen.uniform(-3, 3, rows))
    return ("x,y\n" + "\n".join(f"{a:.5f},{np.sin(a) + 0.3 * gen.normal():.5f}" for a in xs)).encode()


def _quiet(page, pid: int, quiet: float = 1.5, timeout: float = 120) -> float:
    """Wait until the server has spent no CPU for ``quiet`` seconds and the page runs no script; returns the
    moment (``time.monotonic``) the server last worked."""
    deadline, last_cpu, last_busy = time.monotonic() + timeout, cpu_seconds(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now_cpu = cpu_seconds(pid)
        if now_cpu != last_cpu or page.locator('[data-testid="stStatusWidget"]').count():
            last_cpu, last_busy = now_cpu, time.monotonic()
        elif time.monotonic() - last_busy >= quiet:
            break
    return last_busy


def uploads_through_the_page(browser, up: AppServer, files: dict[str, bytes]) -> dict[str, tuple[float, float]]:
    """Each file uploaded on Kernel regression ("Your own CSV") in a fresh tab: the server's CPU seconds and the
    wall seconds from the upload to the page settled."""
    out = {}
    for name, raw in files.items():
        context = browser.new_context(viewport={"width": 1400, "height": 2400})
        page = context.new_page()
        page.goto(up.url + "/kernel_regression?predict=0")
        page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=120_000)
        load.settled(page)
        picker = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Dataset")
        picker.wait_for(timeout=60_000)
        picker.click()
        try:
            page.get_by_role("option", name="Your own CSV", exact=True).click(timeout=10_000)
        except Exception:
            page.screenshot(path="/tmp/hostile_upload.png")
            raise
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').wait_for(state="attached", timeout=60_000)
        load.settled(page)
        cpu, wall = cpu_seconds(up.pid), time.monotonic()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            {"name": "data.csv", "mimeType": "text/csv", "buffer": raw})
        done = _quiet(page, up.pid)
        out[name] = (cpu_seconds(up.pid) - cpu, done - wall)
        context.close()
    return out


def heavy_links(browser, up: AppServer, n: int) -> list[float]:
    """RSS (MiB) after each of ``n`` distinct heavy links, each opened in its own tab, drawn, and closed."""
    out = []
    for seed in range(n):
        context = browser.new_context()
        page = context.new_page()
        page.goto(up.url + HEAVY.format(seed=seed))
        page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=180_000)
        load.settled(page)
        context.close()
        out.append(rss_mib(up.pid))
    return out


def bench(row, amount, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "server.log", "w") as log:
        polls = Path(tmp) / "polls.sqlite3"
        with AppServer(env={"EXPLORER_POLLS": str(polls), "EXPLORER_WARM_UP": "0"}, log=log) as up:
            store = SQLiteStore(polls)
            code, _ = store.open("scaling", TEXTS, answer=1)
            forged = forged_votes(up.url, code, amount(300, 20))
            counted = store.count(code)
            row("hostile: forged votes (no page loaded; fresh cookies, unsigned form values, made-up forwarded "
                "addresses from loopback)", f"{counted} counted of {forged['sent']} ({forged['refused']} refused 403)",
                "0 counted", counted == 0)
            code, _ = store.open("scaling", TEXTS, answer=1)
            seconds = amount(10, 2)
            flood = one_address_flood(up.url, code, seconds)
            counted = store.count(code)
            row(f"hostile: one address making phones for {seconds} s (each loads the page, gets an id, votes)",
                f"{counted} counted ({flood['phones']} ids issued, {flood['refused_ids']} refused 429)",
                f"<= {phone.PHONES_PER_ADDRESS} (a hall behind one address)", counted <= phone.PHONES_PER_ADDRESS)
            closed = stalled_request_closed_after(up.port)
            row("hostile: a request whose headers never end (a line every 2 s): seconds until closed",
                "never (60 s)" if closed is None else f"{closed:.1f} s",
                f"<= {connections.REQUEST_TIMEOUT_S:g} s + 1", closed is not None
                and closed <= connections.REQUEST_TIMEOUT_S + 1)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                files = hostile_files() if amount(True, False) else dict(list(hostile_files().items())[:1])
                for name, (cpu, wall) in uploads_through_the_page(browser, up, files).items():
                    row(f"hostile upload through the page: {name}", f"{cpu:.2f} s CPU ({wall:.1f} s to settled)",
                        "<= 1 s CPU", cpu <= 1.0)
                (cpu, wall), = uploads_through_the_page(browser, up, {"valid": valid_upload(
                    amount(5_000, 500))}).values()
                row(f"a valid {amount(5_000, 500):,}-row upload through the page (Kernel regression: parse, LOO "
                    "curve, fit, figures)", f"{wall:.1f} s to settled, {cpu:.1f} s CPU", "<= 2 s", wall <= 2.0)
                page = browser.new_page()                       # the idle server, one ordinary page drawn
                page.goto(up.url + "/attention_heatmap?predict=0")
                page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=120_000)
                load.settled(page)
                page.close()
                time.sleep(2)
                idle = rss_mib(up.pid)
                after = heavy_links(browser, up, amount(20, 2))
                browser.close()
            budget = memory.BUDGET.limit / 2**20
            row(f"hostile: RSS after {len(after)} distinct heavy links (Attention heatmap, 1,000 queries x 2,000 "
                f"points; cache budget {budget:.0f} MiB)", f"idle {idle:.0f} MiB; after " + ", ".join(
                    f"{n}: {after[n - 1]:.0f}" for n in sorted({1, 5, 10, len(after)}) if n <= len(after))
                + f" MiB (max {max(after):.0f})", f"<= idle + budget + 300 = {idle + budget + 300:.0f} MiB",
                max(after) <= idle + budget + 300)
    hall = load.votes(n=amount(200, 20), replicas=1, seconds=amount(10, 3))
    p95 = hall["tap"][1]
    row(f"hostile: the honest hall, {hall['voters']} phones behind one address (the defaults: "
        f"{phone.PHONES_PER_ADDRESS} ids an address, {phone.PER_ADDRESS} votes a second)",
        f"{hall['counted']}/{hall['voters']} counted, p95 tap-to-answer {p95 * 1e3:.0f} ms",
        "all counted, p95 <= 300 ms", hall["counted"] == hall["voters"] and p95 <= 0.3)
