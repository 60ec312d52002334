"""The headers every HTTP response carries (``explorer.web``): the policy's parts, who may frame the app, and the
middleware that adds them without touching a websocket or a header the app set itself."""

import asyncio

import pytest

from explorer.web import (
    FRAME_ANCESTORS_ENV,
    SecurityHeaders,
    content_security_policy,
    frame_ancestors,
    security_headers,
)


def _directives(policy: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in policy.split("; ")}


def test_the_policy_allows_the_apps_own_origin_and_names_no_other_host():
    policy = _directives(content_security_policy(("sha256-abc=",)))
    assert policy["default-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'", "'wasm-unsafe-eval'", "blob:", "'sha256-abc='"]
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]
    assert policy["frame-ancestors"] == ["'self'"] and policy["base-uri"] == ["'self'"]
    sources = [s for values in policy.values() for s in values]
    assert not [s for s in sources if "://" in s or s == "*"]


@pytest.mark.parametrize("value, expected", [
    ("", "'self'"), ("https://moodle.example.edu", "'self' https://moodle.example.edu"),
    ("https://a.example.edu:8443  https://b.example.edu", "'self' https://a.example.edu:8443 https://b.example.edu"),
    ("'none'", "'none'"),
])
def test_a_lecturer_names_the_course_pages_that_may_frame_the_app(value, expected):
    assert frame_ancestors(value) == expected


@pytest.mark.parametrize("value", ["*", "https://*", "moodle.example.edu", "https://a.example.edu/x",
                                   "javascript:alert(1)", "'unsafe-inline'", "https://a.example.edu;script-src *"])
def test_anything_but_an_origin_is_refused_with_a_sentence(value):
    with pytest.raises(ValueError, match=FRAME_ANCESTORS_ENV):
        frame_ancestors(value)


def test_the_environment_sets_the_frame_ancestors(monkeypatch):
    monkeypatch.setenv(FRAME_ANCESTORS_ENV, "https://courses.example.edu")
    headers = dict(security_headers())
    assert headers["Content-Security-Policy"].endswith("frame-ancestors 'self' https://courses.example.edu")
    assert "X-Frame-Options" not in headers                  # it cannot name another origin: the CSP decides
    monkeypatch.delenv(FRAME_ANCESTORS_ENV)
    headers = dict(security_headers())
    assert headers["X-Frame-Options"] == "SAMEORIGIN" and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"


def _served(scope_type: str, app_headers: list[tuple[bytes, bytes]]) -> list[dict]:
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start" if scope_type == "http" else "websocket.accept",
                    "status": 200, "headers": list(app_headers)})

    async def send(message):
        sent.append(message)

    async def receive():
        return {}

    middleware = SecurityHeaders(app, [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin")])
    asyncio.run(middleware({"type": scope_type}, receive, send))
    return sent


def test_the_middleware_adds_the_headers_to_a_response_and_keeps_what_the_app_set():
    [start] = _served("http", [(b"referrer-policy", b"no-referrer"), (b"content-type", b"text/html")])
    assert start["headers"] == [(b"referrer-policy", b"no-referrer"), (b"content-type", b"text/html"),
                                (b"x-content-type-options", b"nosniff")]


def test_the_middleware_leaves_a_websocket_alone():
    [accept] = _served("websocket", [])
    assert accept["headers"] == []


def test_a_server_told_to_allow_a_word_that_is_no_origin_stops_with_a_sentence(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from explorer.serving import free_port

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, FRAME_ANCESTORS_ENV: "moodle.example.edu", "EXPLORER_POLLS": str(tmp_path / "p.sqlite3")}
    run = subprocess.run([sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.headless",
                          "true", "--server.address", "127.0.0.1", "--server.port", str(free_port())],
                         cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "EXPLORER_FRAME_ANCESTORS must list origins" in run.stderr + run.stdout
    assert "Traceback" not in run.stderr
