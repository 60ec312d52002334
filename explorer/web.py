"""What every HTTP response of the app carries: a Content-Security-Policy that allows what the app's pages load
(its own files, Streamlit's front end) and nothing else, who may frame the app, ``nosniff`` and a referrer policy.

``app.py`` serves the app through Streamlit's ASGI entry (``st.App``) with :class:`SecurityHeaders` as middleware,
so the headers are on every page, file and health check that ``make run`` answers, whatever is in front of it.

A lecturer who embeds the app in a course page names the page's origin in ``EXPLORER_FRAME_ANCESTORS`` (space
separated, e.g. ``https://moodle.example.edu``); by default only the app itself may frame it.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote

FRAME_ANCESTORS_ENV = "EXPLORER_FRAME_ANCESTORS"
_SOURCE = re.compile(r"'self'|'none'|https?://[A-Za-z0-9.-]+(:\d{1,5})?|https?://\*\.[A-Za-z0-9.-]+")


def frame_ancestors(value: str | None = None) -> str:
    """The ``frame-ancestors`` sources: ``'self'`` and the origins in ``value`` (``$EXPLORER_FRAME_ANCESTORS`` when
    None). A word that is not an origin (``https://host[:port]``, ``'self'``, ``'none'``) raises ValueError: a typo
    must not open the app to every site.

    >>> frame_ancestors("")
    "'self'"
    >>> frame_ancestors("https://moodle.example.edu")
    "'self' https://moodle.example.edu"
    """
    words = (os.environ.get(FRAME_ANCESTORS_ENV, "") if value is None else value).split()
    bad = [w for w in words if not _SOURCE.fullmatch(w)]
    if bad:
        raise ValueError(f"{FRAME_ANCESTORS_ENV} must list origins such as https://courses.example.edu or "
                         f"'none'; {bad[0]!r} is not one")
    if "'none'" in words:
        return "'none'"
    return " ".join(dict.fromkeys(["'self'", *words]))


def content_security_policy(inline_scripts: tuple[str, ...] = (), ancestors: str = "'self'") -> str:
    """The policy: everything from the app's own origin; styles inline too (Streamlit's front end writes its
    styles at run time), images and fonts also as ``data:``/``blob:`` URLs (plotly's exports, KaTeX); scripts
    from the app, from ``blob:`` URLs (the page's own components, which only a script already running on the page
    can make) and inline only when its hash is listed (``inline_scripts``: Streamlit's page has one);
    WebAssembly compiled (Streamlit's protocol decoder) but no ``eval``; no plugin, no ``<base>``, forms post to
    the app only."""
    scripts = " ".join(f"'{h}'" for h in inline_scripts)
    return "; ".join([
        "default-src 'self'",
        f"script-src 'self' 'wasm-unsafe-eval' blob: {scripts}".strip(),
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        f"frame-ancestors {ancestors}",
    ])


def security_headers(inline_scripts: tuple[str, ...] = (), ancestors: str | None = None) -> list[tuple[str, str]]:
    """The headers as (name, value) pairs; ``X-Frame-Options`` for browsers older than ``frame-ancestors`` when
    only the app may frame itself. ``inline_scripts``: the hashes of the inline scripts the pages may run
    (``explorer.ui.internals.front_end_inline_scripts``); ``ancestors``: from ``$EXPLORER_FRAME_ANCESTORS`` when
    None (ValueError if it names no origin)."""
    ancestors = frame_ancestors() if ancestors is None else ancestors
    headers = [("Content-Security-Policy", content_security_policy(inline_scripts, ancestors)),
               ("X-Content-Type-Options", "nosniff"),
               ("Referrer-Policy", "same-origin")]
    if ancestors in ("'self'", "'none'"):
        headers.append(("X-Frame-Options", "SAMEORIGIN" if ancestors == "'self'" else "DENY"))
    return headers


class SecurityHeaders:
    """ASGI middleware: adds ``headers`` to every HTTP response that does not already set them (a websocket's
    handshake is left alone)."""

    def __init__(self, app, headers: list[tuple[str, str]]):
        self.app = app
        self.headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *[(k, v) for k, v in self.headers if k not in present]]
            await send(message)

        return await self.app(scope, receive, send_with_headers)


SERVED_PREFIXES = ("_stcore", "static", "media", "component", "app", "vote")   # what the server answers below "/"


class NestedPaths:
    """ASGI middleware: a page link with a ``/`` in its path (``/a/b``) is sent to ``/a%2Fb``. Streamlit answers any
    unknown path with its page, whose scripts and styles are linked relative to it: under ``/a/`` they were fetched
    from ``/a/static/…``, answered with the page again, and the browser drew a blank window. One segment, the app
    loads, finds no page of that name and the landing page says so, as for any unknown link. Paths of the server's
    own routes (``SERVED_PREFIXES``) are left alone."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        raw = scope.get("raw_path") or scope.get("path", "").encode("utf-8")     # as sent: %2F stays one segment
        parts = [p for p in raw.decode("latin-1").split("/") if p] if scope["type"] == "http" else []
        if len(parts) < 2 or parts[0] in SERVED_PREFIXES or scope.get("method") not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        query = scope.get("query_string", b"").decode("latin-1")
        where = "/" + quote("/".join(parts), safe="%") + (f"?{query}" if query else "")
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", where.encode("latin-1")), (b"content-length", b"0"),
                                (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": b""})
