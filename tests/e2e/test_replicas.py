"""A lecture hall: replicas behind Debian's HAProxy (deploy/). Sticky sessions, and a replica lost mid-class."""

import contextlib
import shutil
import time

import pytest

from bench.load import run_class
from deploy.serve_class import Hall

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None or shutil.which("redis-server") is None,
                                reason="needs HAProxy and redis-server (apt-get install haproxy redis-server)")


@pytest.fixture(scope="module")
def hall():
    """Two replicas shared by the tests that keep both up until their end (starting a hall and warming up its
    replicas is most of what a test here costs); the failover test starts its own."""
    with Hall(2) as h:
        yield h


def test_every_session_stays_on_one_replica_and_both_replicas_get_students(hall):
    summary = run_class(hall.url, sessions=6, trainers=1, seconds=12)
    assert summary["errors"] == [] and summary["answered"] == 6
    students = summary["students"]
    assert all(len(set(s.replicas)) == 1 and s.replicas[0] in ("r1", "r2") for s in students)
    assert {s.replicas[0] for s in students} == {"r1", "r2"}                 # round-robin spreads new browsers
    assert all(s.cookie.startswith("EXPLORER_REPLICA=") for s in students)


def test_students_on_different_replicas_vote_into_one_poll_and_a_lost_replica_loses_no_vote(browser, hall):
    """Four phones pinned by the balancer's cookie, two to each replica, vote in one poll (the replicas share
    serve_class's Redis); r1 is killed: all four acknowledged votes are still counted, and r1's students, moved to
    r2 by the balancer, see the poll and their own vote again and change it there, still one voter each (the voter
    is the phone's cookie, not a session). (It kills r1 of the shared hall and starts it again before it ends: the
    hall's other tests find both replicas up, whichever order they run in.)"""
    from explorer.polls import RedisStore
    from tests.e2e.test_poll import _vote

    store = RedisStore(hall.redis.url)
    code, token = store.open("sc.growth", {"en": {"question": "Which?", "choices": ["a", "b", "c"]}}, answer=1)
    phones = []
    for i, replica in enumerate(("r1", "r2", "r1", "r2")):
        ctx = browser.new_context(viewport={"width": 390, "height": 844})
        ctx.add_cookies([{"name": "EXPLORER_REPLICA", "value": replica, "url": hall.url}])
        phone = ctx.new_page()
        phone.set_default_timeout(60_000)
        phone.goto(f"{hall.url}/vote/{code}")
        phone.wait_for_selector('input[type="radio"]')
        _vote(phone, "abc"[i % 3])
        phones.append((ctx, phone, replica))
    assert store.count(code) == 4
    hall.stop_replica("r1")
    try:
        _moved_phones_keep_their_votes(store, code, token, phones)
    finally:
        hall.start_replica("r1")


def _moved_phones_keep_their_votes(store, code, token, phones):
    from explorer.polls import new_voter
    from tests.e2e.test_poll import _vote

    assert store.count(code) == 4                                    # nothing acknowledged was on r1
    for _, phone, replica in phones:
        if replica == "r1":
            phone.reload()
            phone.wait_for_selector('input[type="radio"]:checked')   # r2 serves the same poll, and her vote
            _vote(phone, "b")                                            # she changes it there: still one voter
    assert store.count(code) == 4
    store.vote(code, new_voter(), 1, 2)
    store.show(code, token)
    assert store.rounds(code) == [[1, 3, 1]]                          # b, b, b, a from the phones; c here
    for ctx, _, _ in phones:
        ctx.close()


def test_a_replica_lost_mid_class_sends_its_students_to_the_other_and_leaves_the_rest_alone():
    """r1 is killed 6 s in: its students' connections drop, they reconnect through the balancer to r2 and start
    fresh sessions that answer; r2's students see no error and no drop."""
    with Hall(2) as hall:
        state = {"done": False}

        def kill_r1(elapsed):
            if elapsed > 6 and not state["done"]:
                hall.stop_replica("r1")
                state["done"] = True
        summary = run_class(hall.url, sessions=6, trainers=0, seconds=20, during=kill_r1)
    students = summary["students"]
    on_r1 = [s for s in students if s.replicas[0] == "r1"]
    on_r2 = [s for s in students if s.replicas[0] == "r2"]
    assert on_r1 and on_r2
    assert all(s.result.errors == [] and s.result.dropped == 0 and set(s.replicas) == {"r2"} for s in on_r2), \
        [(s.result.errors, s.result.dropped, s.replicas) for s in on_r2]
    for s in on_r1:
        assert s.result.errors == [] and s.result.dropped >= 1
        assert s.replicas[-1] == "r2" and s.result.answered
        assert s.result.latencies                                            # it went on working after the move


@contextlib.contextmanager
def _balancer(folder, backends: int = 1, rate: int = 20):
    """HAProxy with the hall's configuration in front of ``backends`` tiny HTTP servers, each answering its own name
    (no app: the balancer's own rules are what is tested), with a per-address limit of ``rate`` requests in 10 s."""
    import subprocess
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from deploy.serve_class import haproxy_config
    from explorer.serving import free_port, wait_healthy

    def answering(name: bytes):
        class Ok(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(name)))
                self.end_headers()
                self.wfile.write(name)

            def log_message(self, *args):
                pass
        return Ok

    servers = [ThreadingHTTPServer(("127.0.0.1", 0), answering(f"r{i + 1}".encode())) for i in range(backends)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    port = free_port()
    cfg = folder / "haproxy.cfg"
    cfg.write_text(haproxy_config(port, {f"r{i + 1}": s.server_address[1] for i, s in enumerate(servers)},
                                  rate=rate, connections=5))
    assert subprocess.run(["haproxy", "-c", "-q", "-f", str(cfg)], capture_output=True).returncode == 0
    proc = subprocess.Popen(["haproxy", "-f", str(cfg), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", 30, proc)
        time.sleep(2.5)                                   # every server checked healthy (inter 1 s, rise 2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for server in servers:
            server.shutdown()


@pytest.fixture
def balancer(tmp_path):
    with _balancer(tmp_path) as url:
        yield url


def test_a_phones_vote_pages_go_to_any_replica_with_no_sticky_cookie(tmp_path):
    import urllib.request

    with _balancer(tmp_path, backends=2, rate=1000) as url:
        answers = []
        for path in ("/vote/ABCDEF", "/vote/ABCDEF", "/vote", "/vote.js", "/vote/ABCDEF/state", "/vote/ABCDEF"):
            request = urllib.request.Request(url + path, headers={"Cookie": "EXPLORER_REPLICA=r1"})
            with urllib.request.urlopen(request, timeout=10) as resp:
                answers.append(resp.read().decode())
                assert resp.headers.get("Set-Cookie") is None, path
        assert set(answers) == {"r1", "r2"}                      # round-robin, the sticky cookie ignored
        with urllib.request.urlopen(urllib.request.Request(url + "/", headers={"Cookie": "EXPLORER_REPLICA=r2"}),
                                    timeout=10) as resp:
            assert resp.read() == b"r2"                           # the app's pages stay sticky


def test_the_balancers_cookie_is_httponly_and_samesite_names_no_more_than_the_replica_and_one_address_is_bounded(
        balancer):
    import urllib.error
    import urllib.request

    def get(cookie: str = ""):
        request = urllib.request.Request(balancer + "/", headers={"Cookie": cookie} if cookie else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                return resp.status, resp.headers
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers

    status, headers = get()
    cookie = headers["Set-Cookie"]
    assert status == 200 and cookie.startswith("EXPLORER_REPLICA=r1;")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie    # plain HTTP here
    assert not [h for h in headers if h.lower().startswith("x-")]                         # no X-Replica
    for forged in ("r9", "<script>alert(1)</script>", "x" * 4000):                      # no such replica
        status, headers = get(f"EXPLORER_REPLICA={forged}")
        assert status == 200 and headers["Set-Cookie"].startswith("EXPLORER_REPLICA=r1;")
    codes = [get("EXPLORER_REPLICA=r1")[0] for _ in range(30)]
    assert codes[:12] == [200] * 12 and codes[-5:] == [429] * 5                            # 20 in 10 s, then 429


def test_a_hall_behind_https_marks_its_cookie_secure():
    from deploy.serve_class import haproxy_config

    assert " secure attr" in haproxy_config(8500, {"r1": 8501}, https=True)
    assert " secure" not in haproxy_config(8500, {"r1": 8501})
