"""The students' side of a class poll: plain web pages served beside the app, not a Streamlit session.

``GET /vote/<CODE>`` answers a small page (the question and its choices in the phone's language, ``?lang=zh`` or
its Accept-Language; a few KB, no Streamlit front end); ``POST /vote/<CODE>`` records a vote and answers with the
page in its new state (Post/Redirect/Get: a reload sends nothing twice). It works with JavaScript off (a plain
form); with it on, ``/vote.js`` asks ``/vote/<CODE>/state`` every ``FOLLOW_S`` seconds and reloads the page when
the round moves on (open, shown, round 2, revealed, closed). ``GET /vote?room=CODE`` (the old link) leads there.

A vote counts only what this server issued. A phone that opens an open round gets a voter id for that room, signed
with the deployment's secret (``Store.secret``, shared by replicas), in a cookie of that room (HttpOnly,
SameSite=Lax, kept for the poll's lifetime; over HTTPS a ``__Host-`` cookie), so a reload, a lost connection or
another replica keeps one vote per phone per round. One address is issued at most ``PHONES_PER_ADDRESS`` ids in a
room (a hall behind one NAT address fits). The form carries a value signed over the room and the id, which a page
elsewhere can neither read nor compute. An id or a form value the server did not sign is refused (403) and counts
nothing. The store's rules decide the rest; what they refuse gets a status and one sentence in the phone's
language: an unknown or expired room 404, a closed round 409, a bad choice or a form of more than a vote's fields
400, a body over ``MAX_BODY`` bytes 413, more than ``PER_COOKIE`` votes a second from one phone, ``PER_ADDRESS``
from one address or an address past its ids 429, a store that does not answer 503. The address is the client's as
the server sees it; a balancer's forwarded address is believed only from the balancers named in
``EXPLORER_TRUSTED_PROXIES`` (``make serve-class`` and the Kubernetes manifest name theirs; ``make run`` and
``make room`` none).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import os
import re
import secrets
import threading
import time
from collections import deque
from importlib.resources import files
from urllib.parse import parse_qsl, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .i18n import LANGUAGES, marks_as_html, t
from .polls import CLOSED, LETTERS, REVEALED, SHOWN, TTL, VOTING, PollError, normal_code, store_from_env

COOKIE = "explorer_voter_"  # + the room's code; over HTTPS with the __Host- prefix (Secure, Path=/, no Domain)
FOLLOW_S = 2.0            # seconds between a phone's looks at its round (with JavaScript on)
MAX_BODY = 1024           # bytes of a vote's form: a choice, a round, the form value and a language
MAX_FIELDS = 8            # fields of a vote's form (it has four)
PER_COOKIE = 2            # votes a second from one phone
PER_ADDRESS = int(os.environ.get("EXPLORER_VOTES_PER_ADDRESS", "100"))   # votes a second from one address (a
#                           hall behind one NAT address shares it; the load bench's phones all come from 127.0.0.1)
PHONES_PER_ADDRESS = int(os.environ.get("EXPLORER_PHONES_PER_ADDRESS", "400"))   # voter ids one address is issued
#                           in a room: a hall's phones behind one NAT address, and no more
STATUS = {"unknown": 404, "closed": 409, "round": 409, "phase": 409, "choice": 400, "voter": 403, "texts": 400,
          "token": 403, "form": 403, "size": 413, "busy": 429, "fields": 400, "phones": 429}
_VOTER = re.compile(r"[A-Za-z0-9_-]{46}")       # 24 random characters, then 22 of their signature
_STYLE = (files("explorer") / "assets" / "phone.css").read_text(encoding="utf-8")
_SCRIPT = (files("explorer") / "assets" / "phone.js").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- what a phone is told, and how
def language(request: Request, asked: str | None = None) -> str:
    """``asked`` (a form's or the link's ``lang``) when it is one of ours, else the first of the phone's
    Accept-Language that is, else English."""
    asked = asked or request.query_params.get("lang")
    if asked in LANGUAGES:
        return asked
    for part in request.headers.get("accept-language", "")[:200].split(","):
        primary = part.split(";")[0].strip().lower().split("-")[0]
        if primary in LANGUAGES:
            return primary
    return "en"


def say(key: str, lang: str, **values) -> str:
    """The catalog's sentence as HTML: its own ``**bold**`` and ``code`` marks drawn, every value escaped."""
    template = marks_as_html(html.escape(t(key, lang), quote=False))
    return template.format(**{k: html.escape(str(v)) for k, v in values.items()})


def _signed(secret: bytes, *parts: str) -> str:
    """22 URL-safe characters (132 bits) of the HMAC-SHA256 of ``parts`` under the deployment's ``secret``."""
    mac = hmac.new(secret, "\x1f".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode()[:22]


def new_voter_id(secret: bytes, code: str) -> str:
    """A voter id for room ``code``: 24 random characters and their signature (46 in all)."""
    nonce = secrets.token_urlsafe(18)
    return nonce + _signed(secret, "voter", code, nonce)


def issued_here(secret: bytes, code: str, voter: str) -> bool:
    """Whether ``voter`` is an id this deployment issued for room ``code``."""
    return bool(_VOTER.fullmatch(voter)) and hmac.compare_digest(voter[24:], _signed(secret, "voter", code, voter[:24]))


def form_value(secret: bytes, code: str, voter: str) -> str:
    """The value a phone's form carries: signed over the room and the phone's id (which only the phone's browser
    sends, and no page can read or compute)."""
    return _signed(secret, "form", code, voter)


def address_key(secret: bytes, address: str) -> str:
    """What the store keeps of an address to count its ids: a keyed digest, not the address."""
    return _signed(secret, "address", address)


class Limiter:
    """At most ``rate`` events a second per key; it holds at most ``keys`` keys (the oldest go first)."""

    def __init__(self, rate: int, keys: int = 20_000):
        self.rate, self.keys = rate, keys
        self._seen: dict[str, deque] = {}
        self._lock = threading.Lock()

    def allow(self, key: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._seen.pop(key, None) or deque()
            while times and now - times[0] >= 1.0:
                times.popleft()
            allowed = len(times) < self.rate
            if allowed:
                times.append(now)
            self._seen[key] = times                       # (re-inserted: the dict keeps keys by last use)
            while len(self._seen) > self.keys:
                self._seen.pop(next(iter(self._seen)))
            return allowed


PHONES, ADDRESSES = Limiter(PER_COOKIE), Limiter(PER_ADDRESS)


def _page(lang: str, body: str, status: int = 200, state: str = "", cookie: tuple[str, str, bool] | None = None,
          here: str = "/vote") -> Response:
    """The page around ``body``; ``state``: the round it shows (the script reloads when it changes); ``cookie``:
    the room's code, a new voter id to set, and whether the phone came over HTTPS (then a ``__Host-`` cookie)."""
    switch = " · ".join(f'<a href="{here}?lang={code}" lang="{code}"' + (' aria-current="true"' if code == lang
                        else "") + f">{html.escape(name)}</a>" for code, name in LANGUAGES.items())
    follow = '<script src="/vote.js" defer></script>' if state else ""
    page = (f'<!doctype html><html lang="{"zh-Hans" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(t('poll.page', lang))}</title><style>{_STYLE}</style>{follow}</head>"
            f'<body data-state="{html.escape(state)}" data-follow="{FOLLOW_S * 1000:.0f}">'
            f'<nav aria-label="{html.escape(t("ui.language", lang))}">{switch}</nav>'
            f"<main><h1>{html.escape(t('poll.page', lang))}</h1>{body}</main></body></html>")
    response = Response(page, status_code=status, media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-store"})
    if cookie is not None:
        code, voter, https = cookie
        response.set_cookie(("__Host-" if https else "") + COOKIE + code, voter, max_age=int(TTL),
                            path="/" if https else f"/vote/{code}", httponly=True, samesite="lax", secure=https)
    return response


def _note(kind: str, text: str) -> str:
    return f'<p class="note {kind}" role="{"alert" if kind == "refused" else "status"}">{text}</p>'


def _room_form(lang: str, refused: str = "") -> str:
    return (refused + f'<form method="get" action="/vote"><label for="room">{html.escape(t("poll.room_prompt", lang))}'
            f'</label><input id="room" name="room" maxlength="9" autocomplete="off" autocapitalize="characters" '
            f'required aria-describedby="room-help"><input type="hidden" name="lang" value="{lang}">'
            f'<p id="room-help" class="help">{html.escape(t("poll.room_help", lang))}</p>'
            f'<button type="submit">{html.escape(t("poll.join_button", lang))}</button></form>')


def _results(lang: str, poll, rounds: list[list[int]]) -> str:
    _, choices = poll.question(lang)
    parts = [f"<h2>{html.escape(t('poll.votes', lang))}</h2>"]
    for n, counts in enumerate(rounds, start=1):
        total = sum(counts)
        rows = "".join(
            f"<tr><th scope=\"row\"><b class=\"letter\">{LETTERS[i]}</b> {html.escape(choice)}</th><td>{count}</td>"
            f"<td><progress max=\"{max(total, 1)}\" value=\"{count}\">{count}</progress> "
            f"{(100 * count / total if total else 0):.0f} %</td></tr>"
            for i, (choice, count) in enumerate(zip(choices, counts, strict=True)))
        parts.append(f"<table><caption>{html.escape(t('poll.round_n', lang, n=n, total=total))}</caption>"
                     f"<tbody>{rows}</tbody></table>")
    return "".join(parts)


def _poll_body(lang: str, poll, mine: int | None, rounds: list[list[int]], form: str, refused: str = "") -> str:
    question, choices = poll.question(lang)
    parts = [f"<h2 id=\"q\">{html.escape(question)}</h2>", refused]
    if poll.phase == VOTING:
        if poll.round > 1:
            parts.append(_note("info", say("poll.round2", lang)))
        options = "".join(
            f'<label><input type="radio" name="choice" value="{i}" required'
            f'{" checked" if mine == i else ""}> <b class="letter">{LETTERS[i]}</b> {html.escape(choice)}</label>'
            for i, choice in enumerate(choices))
        parts.append(f'<form method="post"><fieldset aria-describedby="q"><legend>'
                     f'{html.escape(t("poll.your_answer", lang))}</legend>{options}</fieldset>'
                     f'<input type="hidden" name="round" value="{poll.round}">'
                     f'<input type="hidden" name="form" value="{form}"><input type="hidden" name="lang" value="{lang}">'
                     f'<button type="submit">{html.escape(t("poll.send", lang))}</button></form>')
        if mine is not None:
            parts.append(_note("sent", say("poll.sent", lang, choice=choices[mine])))
    else:
        if poll.phase == SHOWN:
            parts.append(_note("info", say("poll.wait", lang)))
        elif poll.phase == REVEALED:
            parts.append(_note("sent", say("poll.revealed", lang, answer=choices[poll.answer])))
        elif poll.phase == CLOSED:
            parts.append(_note("info", say("poll.over", lang)))
        if rounds:
            parts.append(_results(lang, poll, rounds))
    parts.append(f'<p class="help">{say("poll.privacy", lang)}</p>')
    return "".join(parts)


def _refusal(lang: str, reason: str) -> str:
    why = t(f"poll.err.{reason}", lang)
    return _note("refused", say("poll.refused", lang, why=why))


# --------------------------------------------------------------------------- the routes
def _voter(request: Request, code: str, secret: bytes) -> str | None:
    """The phone's voter id for room ``code`` from its cookie, if this deployment issued it; else None."""
    for name in ("__Host-" + COOKIE + code, COOKIE + code):
        voter = request.cookies.get(name, "")
        if issued_here(secret, code, voter):
            return voter
    return None


def _address(request: Request) -> str:
    return request.client.host if request.client else ""


def _state(poll) -> str:
    return f"{poll.phase}:{poll.round}:{poll.shown}"


def _show(request: Request, code: str, lang: str, status: int = 200, refused: str = "") -> Response:
    """The page of room ``code`` as the phone with this request's cookie sees it."""
    store = store_from_env()
    here, fresh = f"/vote/{code}", None
    try:
        secret = store.secret()
        poll = store.get(code)
        voter = _voter(request, code, secret)
        if voter is None and poll.phase == VOTING:          # an id is issued where there is a vote to cast
            if not store.issue(code, address_key(secret, _address(request)), PHONES_PER_ADDRESS):
                return _page(lang, _refusal(lang, "phones"), STATUS["phones"], _state(poll), here=here)
            voter = fresh = new_voter_id(secret, code)
        mine = store.choice(code, voter) if voter and not fresh else None
        rounds = store.rounds(code) if poll.phase != VOTING else []
    except PollError as err:
        return _page(lang, _room_form(lang, _refusal(lang, err.reason)), STATUS[err.reason])
    except Exception:                          # a store that does not answer: said, and the phone can reload
        return _page(lang, _note("refused", say("poll.phone_unavailable", lang)), 503)
    body = _poll_body(lang, poll, mine, rounds, form_value(secret, code, voter or ""), refused)
    cookie = (code, fresh, request.url.scheme == "https") if fresh else None
    return _page(lang, body, status, _state(poll), cookie, here)


async def ask_room(request: Request) -> Response:
    """``GET /vote``: the room's form; ``?room=CODE`` (the QR code's link before the route) leads to the room."""
    lang = language(request)
    typed = request.query_params.get("room", "")[:40]
    if not typed:
        return _page(lang, _room_form(lang))
    try:
        code = normal_code(typed)
    except PollError:
        return _page(lang, _room_form(lang, _note("refused", say("poll.no_room", lang, code=typed[:12]))), 404)
    return RedirectResponse(f"/vote/{code}?lang={lang}", status_code=303)


async def room(request: Request) -> Response:
    """``GET /vote/<CODE>``: the room's page; ``POST``: a vote, then the page again."""
    lang = language(request)
    try:
        code = normal_code(request.path_params["code"])
    except PollError:
        typed = request.path_params["code"][:12]
        return _page(lang, _room_form(lang, _note("refused", say("poll.no_room", lang, code=typed))), 404)
    if request.method == "GET":
        return await run_in_threadpool(_show, request, code, lang)
    body = b""
    if int(request.headers.get("content-length") or 0) > MAX_BODY:
        return await run_in_threadpool(_show, request, code, lang, 413, _refusal(lang, "size"))
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return await run_in_threadpool(_show, request, code, lang, 413, _refusal(lang, "size"))
    pairs = parse_qsl(body.decode("utf-8", "replace"))          # (at most MAX_BODY bytes: cheap whatever it holds)
    fields = dict(reversed(pairs))                               # (a name given twice: its first value)
    lang = language(request, fields.get("lang"))
    if len(pairs) > MAX_FIELDS:
        return await run_in_threadpool(_show, request, code, lang, 400, _refusal(lang, "fields"))
    try:
        secret = await run_in_threadpool(store_from_env().secret)
    except Exception:                          # a store that does not answer
        return _page(lang, _note("refused", say("poll.phone_unavailable", lang)), 503)
    voter = _voter(request, code, secret)
    if voter is None or not hmac.compare_digest(fields.get("form", ""), form_value(secret, code, voter)):
        return await run_in_threadpool(_show, request, code, lang, 403, _refusal(lang, "form"))
    if not PHONES.allow(voter) or not ADDRESSES.allow(_address(request)):
        return await run_in_threadpool(_show, request, code, lang, 429, _refusal(lang, "busy"))
    try:
        choice, round_ = int(fields.get("choice", "")), int(fields.get("round", ""))
    except ValueError:
        return await run_in_threadpool(_show, request, code, lang, 400, _refusal(lang, "choice"))
    try:
        await run_in_threadpool(store_from_env().vote, code, voter, round_, choice)
    except PollError as err:
        return await run_in_threadpool(_show, request, code, lang, STATUS[err.reason], _refusal(lang, err.reason))
    except Exception:                          # a store that does not answer
        return _page(lang, _note("refused", say("poll.phone_unavailable", lang)), 503)
    return RedirectResponse(f"/vote/{code}?lang={quote(lang)}", status_code=303)


async def room_state(request: Request) -> Response:
    """``GET /vote/<CODE>/state``: the round's phase, number and shown rounds, for the page's script."""
    try:
        poll = await run_in_threadpool(store_from_env().get, normal_code(request.path_params["code"]))
    except PollError as err:
        return JSONResponse({"state": err.reason}, status_code=STATUS[err.reason],
                            headers={"Cache-Control": "no-store"})
    except Exception:                          # a store that does not answer: the page keeps what it shows
        return JSONResponse({"state": ""}, status_code=503, headers={"Cache-Control": "no-store"})
    return JSONResponse({"state": _state(poll)}, headers={"Cache-Control": "no-store"})


async def script(_request: Request) -> Response:
    return Response(_SCRIPT, media_type="text/javascript; charset=utf-8", headers={"Cache-Control": "max-age=300"})


ROUTES = [Route("/vote", ask_room, methods=["GET"]), Route("/vote.js", script, methods=["GET"]),
          Route("/vote/{code}", room, methods=["GET", "POST"]),
          Route("/vote/{code}/state", room_state, methods=["GET"])]
