"""What one HTTP connection may cost the server: how long its request may take to arrive, and whose word on the
client's address is believed.

uvicorn (which serves Streamlit's ASGI app) closes a connection idle between requests after a few seconds, but it
has no limit on a request that is *arriving*: a client that sends a header line every 5 s, or stops after ten
bytes of a body, holds its connection for as long as it likes. :class:`TimedH11Protocol` adds the two limits
(``REQUEST_TIMEOUT_S``, 10 s by default, ``EXPLORER_REQUEST_TIMEOUT_S`` to change it): a request's headers must be
whole within that time of the connection opening (a kept connection's next request: of its first byte), and its
body may pause no longer than that between two reads (waits on the app itself, when it has not yet read what
arrived, do not count). A connection past either is closed; the app
sees a disconnect.

uvicorn also believes ``X-Forwarded-For`` from 127.0.0.1 by default, so under ``make run`` or ``make room`` any
local client could claim to be any address. Here forwarded addresses are believed only from the balancers named
in ``EXPLORER_TRUSTED_PROXIES`` (comma separated addresses or networks: ``make serve-class`` names its HAProxy,
the Kubernetes manifest its ingress); by default from none.

``app.py`` applies both with :func:`install` before the server starts.

>>> uvicorn_options({"EXPLORER_TRUSTED_PROXIES": ""})["proxy_headers"]
False
>>> uvicorn_options({"EXPLORER_TRUSTED_PROXIES": "127.0.0.1"})["forwarded_allow_ips"]
'127.0.0.1'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .ui.internals import loading_uvicorn_config

TRUSTED_PROXIES_ENV = "EXPLORER_TRUSTED_PROXIES"
REQUEST_TIMEOUT_S = float(os.environ.get("EXPLORER_REQUEST_TIMEOUT_S", "10"))


class TimedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on each request's headers and on each pause in its body."""

    _deadline = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()                                    # the first request's headers start now

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and self._deadline is None:
            self._arm()                                # the first bytes of a next request on a kept connection
        super().data_received(data)
        if self.transport.get_protocol() is not self:  # upgraded to a websocket, which has its own pings
            self._disarm()
        elif self.conn.their_state is h11.SEND_BODY:
            self._arm()                                # a body: the clock restarts at each read
        elif self.conn.their_state is not h11.IDLE:
            self._disarm()                             # the request is whole (IDLE: its headers are not yet)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.flow is not None and self.flow.read_paused:       # the app has not read what came: not the client's
            self._arm()
        elif not self.transport.is_closing():
            self.transport.close()


def trusted_proxies(env: Mapping[str, str] | None = None) -> str:
    """The addresses whose ``X-Forwarded-For`` is believed (uvicorn's ``forwarded_allow_ips``), "" for none."""
    env = os.environ if env is None else env
    return ",".join(part.strip() for part in env.get(TRUSTED_PROXIES_ENV, "").split(",") if part.strip())


def uvicorn_options(env: Mapping[str, str] | None = None) -> dict:
    """What ``install`` sets on uvicorn's ``Config``: the timed protocol and the trusted balancers (none: no
    forwarded header is read at all)."""
    trusted = trusted_proxies(env)
    return {"http_protocol_class": TimedH11Protocol, "proxy_headers": bool(trusted), "forwarded_allow_ips": trusted}


def install() -> bool:
    """Set ``uvicorn_options`` on the server that is importing ``app.py`` (``streamlit run``): True; False when the
    app is imported some other way (a test, a notebook), which has no server to set."""
    config = loading_uvicorn_config()
    if config is None:
        return False
    for name, value in uvicorn_options().items():
        setattr(config, name, value)
    return True
