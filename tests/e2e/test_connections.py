"""What one connection may cost a real server started as ``make run`` starts it (``explorer.connections``,
``explorer.web.NestedPaths``): a forwarded address from loopback is not believed, so one address is issued at
most its voter ids whatever it claims; a request whose headers or body stall is closed; a link with a ``/`` in its
path shows the landing page's notice instead of a blank window. The seconds each costs at the default limits are
in ``make bench`` (group "hostile"); here the limit is 2 s so that the checks are quick, and a test asserts only
that the connection is closed, and not before its deadline (how soon after is the bench's to measure)."""

import socket
import time
import urllib.error
import urllib.request

import pytest

from explorer.polls import SQLiteStore
from explorer.serving import AppServer
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser import wait_idle

TIMEOUT_S = 2
TEXTS = {"en": {"question": "Which?", "choices": ["a", "b"]}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    polls = tmp_path_factory.mktemp("polls") / "polls.sqlite3"
    env = {"EXPLORER_POLLS": str(polls), "EXPLORER_PHONES_PER_ADDRESS": "3", "EXPLORER_WARM_UP": "0",
           "EXPLORER_REQUEST_TIMEOUT_S": str(TIMEOUT_S)}
    with AppServer(env=env) as up:
        yield up, SQLiteStore(polls)


def _status(url: str, headers: dict) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def test_a_forwarded_address_from_loopback_is_not_believed(server):
    up, store = server
    code, _ = store.open("scaling", TEXTS, answer=0)
    claimed = [_status(f"{up.url}/vote/{code}", {"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(5)]
    assert claimed == [200, 200, 200, 429, 429]            # one address (127.0.0.1): 3 ids, whatever it claims


def _closed_after(sock: socket.socket, keep_sending: bytes | None, limit: float = 30) -> float | None:
    """Seconds until the server closes ``sock`` (``keep_sending`` sent every 0.5 s meanwhile), None if it has not
    within ``limit``."""
    start = time.monotonic()
    sock.settimeout(0.5)
    while time.monotonic() - start < limit:
        try:
            if keep_sending:
                sock.sendall(keep_sending)
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - start
    return None


def test_a_request_whose_headers_or_body_stall_is_closed(server):
    up, store = server
    with socket.create_connection(("127.0.0.1", up.port)) as sock:                # a header line every 0.5 s
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        after = _closed_after(sock, b"X-Slow: 1\r\n")
    assert after is not None and after >= TIMEOUT_S - 0.5, after       # closed, and by the deadline (not sooner)
    code, _ = store.open("scaling", TEXTS, answer=0)
    with socket.create_connection(("127.0.0.1", up.port)) as sock:                # 10 bytes of 100, then nothing
        sock.sendall(f"POST /vote/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n\r\nchoice=0&r".encode())
        after = _closed_after(sock, None)
    assert after is not None and after >= TIMEOUT_S - 0.5, after
    with socket.create_connection(("127.0.0.1", up.port)) as sock:                # a body that keeps coming is read
        sock.sendall(f"POST /vote/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 12\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode())
        for byte in b"choice=0&x=1":
            time.sleep(TIMEOUT_S / 4)
            sock.sendall(bytes([byte]))
        sock.settimeout(10)
        assert sock.recv(64).startswith(b"HTTP/1.1 403")        # answered (no voter id: refused, as it should be)
    assert _status(f"{up.url}/_stcore/health", {}) == 200


def test_a_link_with_a_slash_in_its_path_shows_the_landing_pages_notice(server, page):
    up, _ = server
    page.goto(up.url)                          # (a fresh server's very first run names no page, whatever the link)
    page.wait_for_selector('[data-testid="stMain"] h1')
    page.goto(f"{up.url}/a/b?x=1")
    notice = page.locator('[data-testid="stAlert"]', has_text="There is no page at /a/b")
    notice.wait_for(timeout=60_000)
    wait_idle(page)
    assert page.locator('[data-testid="stMain"] h1').count() == 1
    page.screenshot(path=str(ARTIFACTS / "nested_path.png"))
