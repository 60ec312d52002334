"""Peer instruction on a page's question: the lecturer's poll panel (lecture mode, under the question).

"Poll the class" opens a poll on the question in every UI language (``explorer.polls``); the panel shows the room
code, its QR code and link, and, refreshed every ``REFRESH_S`` seconds, how many have answered. The lecturer then
shows the votes, may run a second round after discussion, and reveals: the page draws its figure and answer, and
the class's rounds beside it (``class_result``). Only this session holds the poll's token.
"""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlsplit

import segno
import streamlit as st

from ..figures.poll import rounds_figure
from ..i18n import LANGUAGES, in_lang
from ..outside import Outside
from ..polls import CLOSED, LETTERS, MAX_ROUNDS, REVEALED, SHOWN, VOTING, Poll, PollError, lettered, store_from_env
from .figure import show
from .state import lang, lecture_mode, take_room, tr

REFRESH_S = 2.0
CLASS_ROW = 64        # px: the class's result row under a revealed answer (lecture mode), and the gap under it


def store():
    return store_from_env()


def refusal(err: Exception) -> str:
    """One sentence for a refused or failed poll request, in the viewer's language."""
    if isinstance(err, PollError):
        return tr("poll.refused", why=tr(f"poll.err.{err.reason}"))
    return tr("poll.unavailable")


def vote_url(code: str) -> str:
    """The students' link: ``$EXPLORER_PUBLIC_URL`` when set (the address students reach), else the address this
    browser opened the app at."""
    base = os.environ.get("EXPLORER_PUBLIC_URL")
    if not base:
        parts = urlsplit(st.context.url or "")
        base = f"{parts.scheme}://{parts.netloc}" if parts.netloc else "http://localhost:8501"
    return f"{base.rstrip('/')}/vote/{code}"


def loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine's own address (``localhost``, 127.x, ::1), which no phone reaches."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def qr_width(phase: str, round_: int, lecture: bool) -> int:
    """The QR code's width in px: while a phone can still vote (a round open, or a round shown with a second one to
    come) what the back row scans (in lecture mode 250 px, over a third of a 720 px projector's height); once the
    voting is over, a corner's worth."""
    if phase == VOTING or (phase == SHOWN and round_ < MAX_ROUNDS):
        return 250 if lecture else 180
    return 130


LINK = re.compile(r"https?://[A-Za-z0-9.\-]+(:[0-9]+)?(/[A-Za-z0-9.\-/]*)?")   # no character Markdown would read


def link_markdown(url: str) -> str:
    """The students' link as Markdown that shows it whole, scheme included, and copies as it reads: a link whose text
    is the address itself, character for character (no escape, no invisible joiner), when the address has nothing
    Markdown would read; else the address as code (``EXPLORER_PUBLIC_URL`` is the deployer's, and may hold more).

    >>> link_markdown("http://10.0.0.5:8501/vote/ABC234")
    '[http://10.0.0.5:8501/vote/ABC234](http://10.0.0.5:8501/vote/ABC234)'
    >>> link_markdown("https://hall.example.edu/x_(y)/vote/ABC234")
    '`https://hall.example.edu/x_(y)/vote/ABC234`'
    """
    if LINK.fullmatch(url):
        return f"[{url}]({url})"
    return f"`{url.replace('`', '')}`"


def qr_svg(url: str) -> str:
    """The link as a QR code: black on white with a quiet zone, so that a phone reads it off a dark page too."""
    return segno.make(url, error="m").svg_inline(scale=5, border=3, dark="#000000", light="#ffffff")


def _held(key: str) -> dict | None:
    return st.session_state.get(f"poll.{key}")


def lecturer_panel(key: str, question: str, choices: list[str], answer: int) -> None:
    """The poll button, or the open poll's panel, for the question ``key`` (``kr.loo``: what the poll is filed
    under). The panel shows the question itself (``prediction`` then draws no box of its own)."""
    held = _held(key)
    if held is None:
        if st.button(tr("poll.open"), key=f"poll.{key}.open", icon=":material/how_to_vote:",
                     help=tr("poll.open_help")):
            texts = {code: {"question": in_lang(question, code), "choices": [in_lang(c, code) for c in choices]}
                     for code in LANGUAGES}
            try:
                code, token = store().open(key, texts, answer)
            except Exception as err:          # a store that is down must not take the page down
                st.warning(refusal(err))
                return
            st.session_state[f"poll.{key}"] = {"code": code, "token": token}
            st.rerun()
        return
    st.fragment(_panel, run_every=REFRESH_S)(key)


def _act(key: str, step: str) -> None:
    held = _held(key)
    try:
        poll = getattr(store(), step)(held["code"], held["token"])
    except Exception as err:                  # said where the lecturer looks
        st.session_state[f"poll.{key}.said"] = refusal(err)
        return
    st.session_state.pop(f"poll.{key}.said", None)
    if poll.phase == REVEALED:                # the page shows its figure and answer, as its own Reveal does
        st.session_state[f"predict.{key}.done"] = True
        st.session_state[f"predict.{key}.guess"] = None
        st.session_state[f"predict.{key}.scroll"] = True


def _panel(key: str) -> None:
    """The projector's view of an open poll, on one 1280 x 720 screen in lecture mode: the question; the QR code
    beside the room, its count and its link; under them the lettered choices while the class votes, the rounds'
    chart once shown; the lecturer's buttons last."""
    held = _held(key)
    try:
        poll = store().get(held["code"])
        count, rounds = store().count(poll.code), store().rounds(poll.code)
    except Exception as err:                  # an expired room or a store that is down
        st.warning(refusal(err))
        return
    url = vote_url(poll.code)
    question, choices = poll.question(lang())
    shown = rounds and poll.phase != REVEALED
    width = qr_width(poll.phase, poll.round, lecture_mode())
    with st.container(border=True, key=f"poll-panel-{key.replace('.', '-')}"):
        st.markdown(f"**{tr('ui.predict_first')}**{tr('punct.colon')}{question}")
        columns = st.columns([width + 30, 760 - width], vertical_alignment="top")
        columns[0].image(qr_svg(url), width=width)
        with columns[1]:
            st.subheader(link_markdown(url), anchor=False)               # what a student types, in large type
            if shown and poll.phase != VOTING:            # (each round's count in the chart's legend)
                rounds_chart(key, poll, rounds, compact=lecture_mode())
            else:                             # how many have answered; what A, B, C are, for a class looking up
                st.markdown(f"#### {tr('poll.count', n=count, round=poll.round)}")
                with st.container(key=f"poll-choices-{key.replace('.', '-')}"):
                    st.markdown("  \n".join(f"**{LETTERS[i]}**  {choice}" for i, choice in enumerate(choices)))
        with st.container(horizontal=True):
            st.button(tr("poll.show"), key=f"poll.{key}.show", disabled=poll.phase != VOTING,
                      on_click=_act, args=(key, "show"), type="primary")
            st.button(tr("poll.again"), key=f"poll.{key}.again",
                      disabled=poll.phase != SHOWN or poll.round >= MAX_ROUNDS, on_click=_act, args=(key, "again"))
            if st.button(tr("poll.reveal"), key=f"poll.{key}.reveal", disabled=poll.phase != SHOWN):
                _act(key, "reveal")
                st.rerun(scope="app")         # the whole page: its figure and answer come next
            st.button(tr("poll.close"), key=f"poll.{key}.close", disabled=poll.phase == CLOSED,
                      on_click=_act, args=(key, "close"), type="tertiary")
        if st.session_state.get(f"poll.{key}.said"):
            st.warning(st.session_state[f"poll.{key}.said"])
        if loopback(url) and count == 0 and poll.round == 1:      # before any phone tries; once one has
            # voted the link evidently reaches someone. Under the buttons: Show votes stays on a 720 px screen
            st.warning(tr("poll.loopback", host=Outside(urlsplit(url).hostname or "", limit=60)))


def rounds_chart(key: str, poll: Poll, rounds: list[list[int]], compact: bool = False) -> None:
    """The class's rounds shown so far, as a chart with its export control (``key``: the chart's own), its choices
    lettered as the projector and the phones letter them; ``compact``: beside the QR code on the projector."""
    _, choices = poll.question(lang())
    fig = rounds_figure(lettered(choices), rounds, poll.answer, lang(), compact=compact)
    show(fig, key=f"poll_{key.replace('.', '-')}", main=int(fig.layout.height))


def class_result(key: str) -> None:
    """After the reveal, in one row under the page's answer: how many of the class were right in each round, the
    class's votes (a popover: the chart, with its export) and the poll's end."""
    held = _held(key)
    if held is None:
        return
    try:
        poll = store().get(held["code"])
        rounds = store().rounds(poll.code)
    except Exception as err:                  # the room expired or the store is down
        st.caption(refusal(err))
        return
    if poll.phase not in (REVEALED, CLOSED) or not rounds or poll.answer is None:
        return
    take_room("class_result", CLASS_ROW)
    with st.container(horizontal=True, vertical_alignment="center", gap="small",
                      key=f"poll-result-{key.replace('.', '-')}"):
        st.markdown(summary(rounds, poll.answer) + tr("punct.end"), width="content")
        with st.popover(tr("poll.votes"), icon=":material/bar_chart:"):
            rounds_chart(key, poll, rounds)
        if poll.phase == CLOSED:
            st.caption(tr("poll.closed_note"))
        else:
            st.button(tr("poll.close"), key=f"poll.{key}.close_after", on_click=_act, args=(key, "close"))


def summary(rounds: list[list[int]], answer: int) -> str:
    """"The class: 4 of 9 right in round 1, 7 of 9 after discussion" (the second part when there was a round 2)."""
    text = tr("poll.summary", right1=rounds[0][answer], total1=sum(rounds[0]))
    if len(rounds) > 1:
        text += tr("poll.summary2", right2=rounds[1][answer], total2=sum(rounds[1]))
    return text


def is_open(key: str) -> bool:
    """Whether this session has a poll running on the question ``key`` (not ended, not expired, its store up):
    while it has, the class answers and the page's own guess and Reveal step aside."""
    held = _held(key)
    if held is None:
        return False
    try:
        return store().get(held["code"]).phase != CLOSED
    except Exception:                         # expired, or the store is down: the page's own question comes back
        return False
