"""A classroom of simulated students against a real Attention Explorer server, over Streamlit's own protocol.

Each student is a websocket client that speaks what the browser speaks: ``BackMsg`` protobufs up (a page run,
a widget change, a button press, the fragment reruns a running Live training asks for), ``ForwardMsg`` down
(the page's elements, ``script_finished``). A student opens a page, waits for it, then changes one control at a
human pace (every 2 to 4 s) and times each rerun from the message sent to ``script_finished``. Trainers open
Live training, press Start and keep the live view ticking as a browser tab would. Everything stays on
127.0.0.1, the number of students and the duration are bounded, and the run stops by itself.

    python -m bench.load --sessions 8 --trainers 2 --seconds 20          # against a server it starts
    python -m bench.load --url http://127.0.0.1:8501 --sessions 30 ...    # against a running one
    python -m bench.load --ramp                                           # the classroom table (make load)
    python -m bench.load --votes 200 --seconds 10                         # a class poll, phones over HTTP
    python -m bench.load --votes 500 --replicas 3 --seconds 10            # the same behind HAProxy and Redis

(run from the checkout, as a module: ``deploy`` and ``bench`` are then importable.)

Prints latency percentiles of interactive reruns, errors, whether every student got answers, and the server's
resident memory (read from /proc when this script started the server).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import random
import re
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from explorer.serving import AppServer

MAX_SESSIONS, MAX_SECONDS = 200, 600        # hard bounds on any run
MAX_VOTERS = 500                            # phones in one poll (each a short HTTP client, not a session)


def one_address(voters: int) -> dict:
    """The server's settings for ``voters`` phones that all come from 127.0.0.1, as a hall behind one NAT address
    does: the defaults (400 voter ids an address in a room, 100 votes a second), the ids raised past 400 only."""
    return {} if voters <= 400 else {"EXPLORER_PHONES_PER_ADDRESS": str(voters)}


# what a browsing student moves on each page: (widget key, the field of its WidgetState, values to cycle through)
MOVES = {"kernel_regression": ("nw.bandwidth", "string_array_value", (["0.05"], ["0.5"], ["0.2"], ["5"], ["0.01"])),
         "masking": ("mask.length", "double_array_value", ([12.0], [4.0], [16.0], [8.0])),
         "scaling": ("scale.d", "string_array_value", (["16"], ["512"], ["64"], ["128"]))}
PAGES = tuple(MOVES)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)      # s, interactive reruns
    ticks: list[float] = field(default_factory=list)          # s, Live training fragment reruns
    errors: list[str] = field(default_factory=list)
    answered: bool = False
    dropped: int = 0                                            # connections lost and reopened


class Student:
    """One browser tab: a websocket session on ``page``; a trainer presses Start on Live training."""

    def __init__(self, base: str, page: str, trainer: bool, seed: int, idle: bool = False):
        self.base, self.page, self.trainer, self.idle = base, page, trainer, idle
        self.rng = random.Random(seed)
        self.result = Result()
        self.widgets: dict[str, str] = {}          # user key -> widget id
        self.fragment: tuple[str, float] | None = None
        self.cookie = ""                           # a balancer's sticky cookie, once set
        self.replicas: list[str] = []              # the replica that answered each connection

    # --------------------------------------------------------------- protocol
    def _send_rerun(self, ws, widgets=(), fragment_id: str = "", query: str = "", auto: bool = True) -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.page_name = self.page
        state.query_string = query
        if fragment_id:
            state.fragment_id, state.is_auto_rerun = fragment_id, auto
        for wid, kind, value in widgets:
            w = state.widget_states.widgets.add()
            w.id = wid
            if kind.endswith("_array_value"):
                getattr(w, kind).data.extend(value)
            else:
                setattr(w, kind, value)
        ws.send(msg.SerializeToString())

    def _until_finished(self, ws, deadline: float) -> bool:
        """Read ForwardMsgs until the run finishes; note widget ids, fragment timers and exceptions."""
        while time.time() < deadline:
            try:
                raw = ws.recv(timeout=max(0.05, deadline - time.time()))
            except TimeoutError:
                break                                   # (ConnectionClosed goes up to ``run``: it reconnects)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                which = element.WhichOneof("type")
                if which == "exception":
                    self.result.errors.append(element.exception.message[:200])
                inner = getattr(element, which, None) if which else None
                wid = getattr(inner, "id", "")
                if wid and "-" in wid:
                    self.widgets[wid.rsplit("-", 1)[-1]] = wid
            elif kind == "auto_rerun":
                self.fragment = (msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
            elif kind == "script_finished":
                if msg.script_finished in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                           ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                    return True
                if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                self.result.errors.append(f"script finished with status {msg.script_finished}")
                return True
        self.result.errors.append("no answer within the time limit")
        return False

    # --------------------------------------------------------------- the student
    def _open(self):
        """Open the session as a browser does: load the page (where a balancer sets its sticky cookie), then the
        websocket with that cookie. Notes the replica that answered (the name in a balancer's sticky cookie)."""
        headers = {"Cookie": self.cookie} if self.cookie else {}
        with urllib.request.urlopen(urllib.request.Request(self.base + "/", headers=headers), timeout=30) as resp:
            cookie = resp.headers.get("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
            headers = {"Cookie": self.cookie}
        ws = connect(self.base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                     origin=self.base, open_timeout=30, max_size=None, additional_headers=headers)
        self.replicas.append(self.cookie.split("=", 1)[1] if self.cookie else "")
        return ws

    def run(self, stop_at: float) -> None:
        """The student's visit; a dropped connection (a replica gone) reconnects, as the browser does, up to 3
        times: the new session starts fresh (counted in ``dropped``, not as an error)."""
        while time.time() < stop_at:
            try:
                with self._open() as ws:
                    self.widgets.clear()
                    self.fragment = None
                    self._send_rerun(ws)
                    if not self._until_finished(ws, time.time() + 60):
                        return
                    self.result.answered = True
                    if self.idle:                         # a tab left open: connected, moving nothing
                        time.sleep(max(0.0, stop_at - time.time()))
                    elif self.trainer:
                        self._train(ws, stop_at)
                    else:
                        self._browse(ws, stop_at)
                    return
            except ConnectionClosed:
                self.result.dropped += 1
                if self.result.dropped > 3:
                    self.result.errors.append("the connection dropped more than 3 times")
                    return
                time.sleep(1.0)
            except Exception as err:                      # anything else is an error of the run, not a crash
                self.result.errors.append(f"{type(err).__name__}: {err}"[:200])
                return

    def _browse(self, ws, stop_at: float) -> None:
        key, kind, values = MOVES[self.page]
        i = self.rng.randrange(len(values))
        while time.time() + 4 < stop_at:
            time.sleep(self.rng.uniform(2.0, 4.0))             # a human pace
            i += 1
            wid = self.widgets.get(key)
            if wid is None:
                self.result.errors.append(f"no widget {key} on {self.page}")
                return
            t0 = time.perf_counter()
            self._send_rerun(ws, [(wid, kind, values[i % len(values)])])
            if self._until_finished(ws, time.time() + 30):
                self.result.latencies.append(time.perf_counter() - t0)

    def _train(self, ws, stop_at: float) -> None:
        start = self.widgets.get("train.start")
        if start is None:
            self.result.errors.append("no Start button")
            return
        t0 = time.perf_counter()
        self._send_rerun(ws, [(start, "trigger_value", True)])
        if self._until_finished(ws, time.time() + 30):
            self.result.latencies.append(time.perf_counter() - t0)
        while time.time() < stop_at and self.fragment:
            fragment_id, interval = self.fragment
            time.sleep(interval)
            t0 = time.perf_counter()
            self._send_rerun(ws, fragment_id=fragment_id)
            if self._until_finished(ws, time.time() + 30):
                self.result.ticks.append(time.perf_counter() - t0)


class Voter:
    """A phone in a class poll, over HTTP as its browser speaks it (the vote route, ``explorer.phone``): at
    ``start_at`` it opens the room's page (the scan: the page, then its script), picks ``choice`` and sends it (the
    tap: the form's POST and the page it is redirected to). Times both and counts the bytes it downloaded."""

    def __init__(self, base: str, code: str, choice: int, start_at: float):
        self.base, self.code, self.choice, self.start_at = base, code, choice, start_at
        self.result = Result()
        self.scan: float | None = None
        self.acked_at: float | None = None
        self.bytes = 0

    def run(self, stop_at: float) -> None:
        import httpx2

        time.sleep(max(0.0, self.start_at - time.time()))
        try:
            with httpx2.Client(base_url=self.base, timeout=60, follow_redirects=True, verify=_tls()) as web:
                t0 = time.perf_counter()
                page = web.get(f"/vote/{self.code}")
                script = web.get("/vote.js")
                self.scan = time.perf_counter() - t0
                self.bytes += len(page.content) + len(script.content)
                found = {k: re.search(f'name="{k}" value="([^"]+)"', page.text) for k in ("form", "round")}
                if page.status_code != 200 or None in found.values():
                    self.result.errors.append(f"the room's page answered {page.status_code} without its form")
                    return
                self.result.answered = True
                t1 = time.perf_counter()
                answer = web.post(f"/vote/{self.code}", data={"choice": str(self.choice), "lang": "en",
                                                               **{k: m.group(1) for k, m in found.items()}})
                if answer.status_code == 200 and 'class="note sent"' in answer.text:
                    self.result.latencies.append(time.perf_counter() - t1)
                    self.acked_at = time.time()
                else:
                    self.result.errors.append(f"the vote answered {answer.status_code}")
                self.bytes += len(answer.content)
        except Exception as err:                      # counted, not raised: the run reports every voter
            self.result.errors.append(f"{type(err).__name__}: {err}"[:200])


@functools.cache
def _tls():
    """One TLS context for every phone client: building one costs about 20 ms of CPU, which 500 phones would take
    from the server they share the machine with (the route itself is plain HTTP here)."""
    import ssl

    return ssl.create_default_context()


def votes(n: int = 200, replicas: int = 1, seconds: float = 10) -> dict:
    """A class poll: ``n`` phones vote at moments spread over ``seconds``, on one server with its SQLite store
    (``replicas=1``, as ``make run``) or behind HAProxy on ``replicas`` replicas sharing a Redis
    (``deploy/serve_class.Hall``), while the lecturer moves a slider on the Scaling page. Every vote counted once,
    scan-to-form and tap-to-answer percentiles, the bytes a phone downloads, how long after the last answer the
    store's count (what the lecturer's panel reads every ``ui.poll.REFRESH_S`` s) showed all of them, the
    lecturer's rerun times and the servers' memory."""
    import tempfile

    from deploy.serve_class import Hall
    from explorer.polls import RedisStore, SQLiteStore

    n = min(n, MAX_VOTERS)
    with contextlib.ExitStack() as stack:
        if replicas == 1:
            polls = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "polls.sqlite3"
            up = stack.enter_context(AppServer(env={"EXPLORER_POLLS": str(polls), **one_address(n)}))
            base, pids, store = up.url, [up.pid], SQLiteStore(polls)
        else:
            hall = stack.enter_context(Hall(replicas, env=one_address(n)))
            base, pids = hall.url, [r.pid for r in hall.replicas.values()]
            store = RedisStore(hall.redis.url)
        code, _ = store.open("load", {"en": {"question": "Which?", "choices": ["a", "b", "c", "d"]}}, answer=0)
        lecturer = Student(base, "scaling", False, 0)
        start = time.time() + 5                                   # the lecturer's page is open before the scan
        rng = random.Random(0)
        voters = [Voter(base, code, i % 4, start + rng.uniform(0, seconds)) for i in range(n)]
        threads = [threading.Thread(target=v.run, args=(start + seconds + 90,), daemon=True) for v in voters]
        watching = threading.Thread(target=lecturer.run, args=(start + seconds + 5,), daemon=True)
        watching.start()
        for th in threads:
            th.start()
        for th in threads:
            th.join(max(0.0, start + seconds + 120 - time.time()))
        acked = [v.acked_at for v in voters if v.acked_at]
        last = max(acked) if acked else time.time()
        while store.count(code) < len(acked) and time.time() < last + 30:
            time.sleep(0.01)
        lag = time.time() - last
        watching.join(max(0.0, start + seconds + 30 - time.time()))
        rss = sum(rss_mib(pid) for pid in pids)
        counted = store.count(code)
    taps = sorted(x for v in voters for x in v.result.latencies)
    scans = sorted(v.scan for v in voters if v.scan is not None)
    return {"voters": n, "replicas": replicas, "acked": len(acked), "counted": counted,
            "scan": (_pct(scans, 50), _pct(scans, 95)), "tap": (_pct(taps, 50), _pct(taps, 95), _pct(taps, 99)),
            "kb": max((v.bytes for v in voters), default=0) / 1024, "lag": lag, "rss": rss,
            "lecturer": (_pct(sorted(lecturer.result.latencies), 50), _pct(sorted(lecturer.result.latencies), 95)),
            "errors": [e for v in voters for e in v.result.errors] + lecturer.result.errors}


def vote_row(r: dict, seconds: float) -> str:
    ms = lambda xs: " / ".join(f"{x * 1000:,.0f}" for x in xs)          # noqa: E731
    return (f"| {r['voters']} | {r['replicas']} | {seconds:g} s | {r['acked']} | {r['counted']} | {ms(r['scan'])} | "
            f"{ms(r['tap'])} | {r['kb']:.1f} | {r['lag'] * 1000:.0f} ms | {ms(r['lecturer'])} | {r['rss']:.0f} | "
            f"{len(r['errors'])} |")


VOTE_HEADER = ("| phones | replicas | within | acknowledged | counted | scan to form p50 / p95 ms | tap to answer "
               "p50 / p95 / p99 ms | KB a phone downloads | count shows the last vote after | lecturer's slider "
               "rerun p50 / p95 ms | servers' RSS MiB | errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|")



def settled(page, quiet: float = 1.0, timeout: float = 180) -> None:
    """Wait until a browser page has not been running its script for ``quiet`` seconds (Streamlit's status
    widget gone that long)."""
    deadline, since = time.perf_counter() + timeout, None
    while time.perf_counter() < deadline:
        if page.locator('[data-testid="stStatusWidget"]').count():
            since = None
        elif since is None:
            since = time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            return
        time.sleep(0.05)

# ------------------------------------------------------------------- a server, and a whole run
@contextlib.contextmanager
def server(extra_env: dict | None = None):
    """A fresh ``streamlit run app.py`` on a free loopback port (``explorer.serving``): yields (base URL, pid)."""
    with AppServer(env=extra_env) as srv:
        yield srv.url, srv.pid


def rss_mib(pid: int) -> float:
    """Resident memory of a process (MiB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_class(base: str, sessions: int, trainers: int, seconds: float, seed: int = 0, pid: int | None = None,
              during=None, idle: int = 0) -> dict:
    """``sessions`` students for ``seconds`` (``trainers`` of them on Live training), and ``idle`` more who open a
    page and leave it open; the summary (with ``pid``: the server's largest resident memory while they were
    connected, MiB, one pid or several summed). ``during(elapsed)`` is called every half second while the class
    runs (the failover test stops a replica from it)."""
    if not (1 <= sessions + idle <= MAX_SESSIONS and 0 <= trainers <= sessions and 1 <= seconds <= MAX_SECONDS):
        raise ValueError(f"1 <= sessions + idle <= {MAX_SESSIONS}, 0 <= trainers <= sessions, "
                         f"1 <= seconds <= {MAX_SECONDS}")
    if not base.startswith(("http://127.0.0.1:", "http://localhost:")):
        raise ValueError("load goes to this machine's loopback only (127.0.0.1)")
    stop_at = time.time() + seconds
    students = [Student(base, "live_training" if i < trainers else PAGES[i % len(PAGES)], i < trainers, seed + i)
                for i in range(sessions)]
    students += [Student(base, PAGES[i % len(PAGES)], False, seed + sessions + i, idle=True) for i in range(idle)]
    threads = [threading.Thread(target=s.run, args=(stop_at,), daemon=True) for s in students]
    for i, t in enumerate(threads):
        t.start()
        time.sleep(min(0.2, seconds / (4 * sessions)) if i else 0)      # students arrive over a moment, not at once
    peak, began = 0.0, time.time()
    while any(t.is_alive() for t in threads) and time.time() < stop_at + 120:
        if pid:
            peak = max(peak, sum(rss_mib(p) for p in (pid if isinstance(pid, (list, tuple)) else [pid])))
        if during:
            during(time.time() - began)
        time.sleep(0.5)
    latencies = sorted(x for s in students for x in s.result.latencies)
    ticks = sorted(x for s in students for x in s.result.ticks)
    return {"sessions": sessions, "trainers": trainers, "seconds": seconds, "idle": idle,
            "answered": sum(s.result.answered for s in students), "reruns": len(latencies),
            "errors": [e for s in students for e in s.result.errors],
            "p50": _pct(latencies, 50), "p95": _pct(latencies, 95), "p99": _pct(latencies, 99),
            "tick_p50": _pct(ticks, 50), "tick_p95": _pct(ticks, 95), "ticks": len(ticks), "peak_rss": peak,
            "students": students}


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if seconds == seconds else "–"        # nan: no reruns


def _row(summary: dict, rss: float | None = None) -> str:
    ms = _ms
    extra = f" | {rss:.0f}" if rss is not None else ""
    return (f"| {summary['sessions']} | {summary['trainers']} | {summary['answered']}/{summary['sessions']} | "
            f"{summary['reruns']} | {ms(summary['p50'])} / {ms(summary['p95'])} / {ms(summary['p99'])} | "
            f"{ms(summary['tick_p95'])} | {len(summary['errors'])}{extra} |")


def ramp(seconds: float = 30) -> None:
    """The classroom table: fresh server per load, nobody training and a quarter training, doubling the sessions
    until p95 of interactive reruns passes 300 ms; per-session memory; sessions coming and going."""
    print("| sessions | training | answered | reruns | rerun p50 / p95 / p99 ms | tick p95 ms | errors | RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for share in (0.0, 0.25):
        held = 0
        for n in (4, 8, 16, 32):
            with server() as (base, pid):
                summary = run_class(base, n, round(n * share), seconds, pid=pid)
                print(_row(summary, summary["peak_rss"]), flush=True)
            if summary["p95"] <= 0.3 and not summary["errors"]:
                held = n
            else:
                break
        print(f"\nheld at p95 <= 300 ms with {share:.0%} training: {held} sessions\n", flush=True)


def classroom(seconds: float = 40, rows=((30, 0, 0), (30, 6, 0), (30, 0, 60))) -> None:
    """The class the issue sizes for: 30 browsing students (a move every 2-4 s), then 24 browsing and 6 training,
    then 30 browsing with 60 more tabs open and idle, each on one server and on two replicas behind HAProxy
    (``deploy/serve_class.Hall``; two cores, two interpreters). Fresh servers per row."""
    from deploy.serve_class import Hall

    print("| server | sessions | training | idle | answered | reruns | rerun p50 / p95 / p99 ms | tick p95 ms | errors "
          "| RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sessions, trainers, idle in rows:                        # (students, of them training, idle tabs besides)
        for replicas in (1, 2):
            if replicas == 1:
                where, place = "one", server({"EXPLORER_WARM_UP": "1"})
            else:
                where, place = "2 replicas", Hall(2)
            with place as up:
                base, pids = (up[0], up[1]) if replicas == 1 else (up.url, [r.pid for r in up.replicas.values()])
                run_class(base, 3, 0, 8)                         # a page of each kind drawn once (and warm-up done)
                time.sleep(10)
                summary = run_class(base, sessions, trainers, seconds, seed=1000, pid=pids, idle=idle)
            answered = f"{summary['answered']}/{sessions + idle}"
            ms = _ms
            print(f"| {where} | {sessions} | {trainers} | {idle} | {answered} | {summary['reruns']} | "
                  f"{ms(summary['p50'])} / {ms(summary['p95'])} / {ms(summary['p99'])} | {ms(summary['tick_p95'])} | "
                  f"{len(summary['errors'])} | {summary['peak_rss']:.0f} |", flush=True)
            for err in summary["errors"][:3]:
                print("error:", err, file=sys.stderr)


def memory(n: int = 10) -> None:
    """Resident memory per idle and per training session: the server warmed up by 3 sessions (imports, caches),
    then ``n`` students browsing, then ``n`` training (training slots let them all hold a model)."""
    with server({"EXPLORER_TRAINING_SLOTS": str(n)}) as (base, pid):
        run_class(base, 3, 1, 8)
        time.sleep(TTL + 5)                                   # the warm-up sessions are gone
        warm = rss_mib(pid)
        idle = run_class(base, n, 0, 12, seed=100, pid=pid)["peak_rss"]
        time.sleep(TTL + 5)
        trained = run_class(base, n, n, 12, seed=200, pid=pid)["peak_rss"]
    print(f"memory: warm server {warm:.0f} MiB; with {n} idle sessions {idle:.0f} MiB "
          f"({(idle - warm) / n:.1f} MiB each); with {n} training {trained:.0f} MiB "
          f"({(trained - warm) / n:.1f} MiB each)")


TTL = 20       # s: .streamlit/config.toml's server.disconnectedSessionTTL (a closed tab's session is dropped after it)


def churn(rounds: int = 5, per_round: int = 10) -> None:
    """50 sessions come and go: the server's memory after each round has closed and its sessions have expired."""
    with server() as (base, pid):
        start = rss_mib(pid)
        marks = []
        for _ in range(rounds):
            run_class(base, per_round, per_round // 5, 8)
            time.sleep(TTL + 5)
            marks.append(rss_mib(pid))
        print(f"churn: RSS {start:.0f} MiB at start; after each round of {per_round} sessions (2 training) has closed: "
              + ", ".join(f"{m:.0f}" for m in marks) + " MiB")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", help="a running server on 127.0.0.1 (default: start one)")
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--trainers", type=int, default=2)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--ramp", action="store_true", help="the classroom table (fresh server per row)")
    p.add_argument("--class", dest="klass", action="store_true",
                   help="30 students (24 + 6 training; 30 + 60 idle tabs) on one server and on two replicas")
    p.add_argument("--votes", type=int, default=0,
                   help=f"phones voting in one class poll (at most {MAX_VOTERS}; with --replicas)")
    p.add_argument("--replicas", type=int, default=1,
                   help="1: one server with its SQLite store; more: replicas behind HAProxy sharing a Redis")

    args = p.parse_args(argv)
    if args.votes:
        r = votes(args.votes, args.replicas, args.seconds)
        print(VOTE_HEADER)
        print(vote_row(r, args.seconds))
        for err in r["errors"][:5]:
            print("error:", err, file=sys.stderr)
        return 0 if r["acked"] == r["counted"] == r["voters"] and not r["errors"] else 1
    if args.klass:
        classroom(args.seconds if args.seconds != 20 else 40)
        return 0
    if args.ramp:
        classroom()
        ramp()
        memory()
        churn()
        return 0
    with (contextlib.nullcontext((args.url, None)) if args.url else server()) as (base, pid):
        summary = run_class(base, args.sessions, args.trainers, args.seconds)
        print("| sessions | training | answered | reruns | rerun p50 / p95 / p99 ms | tick p95 ms | errors |"
              + (" RSS MiB |" if pid else ""))
        print("|---|---|---|---|---|---|---|" + ("---|" if pid else ""))
        print(_row(summary, rss_mib(pid) if pid else None))
        for err in summary["errors"][:5]:
            print("error:", err, file=sys.stderr)
    return 1 if summary["errors"] or summary["answered"] < summary["sessions"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
