"""The students' side of a class poll: ``/vote?room=CODE`` on a phone (a hidden page of the app).

It shows only the question and its choices, in the language the student picks; refreshed every
``poll.REFRESH_S`` seconds, it follows the lecturer: round 2 after discussion, "votes closed", the class's
votes once shown, the answer once revealed. The student's browser session votes under a random id
(``polls.new_voter``); nothing else about them is kept.
"""

from __future__ import annotations

import streamlit as st

from ..i18n import LANGUAGES
from ..outside import Outside
from ..polls import CLOSED, REVEALED, SHOWN, VOTING, PollError, new_voter, normal_code
from .poll import REFRESH_S, refusal, rounds_chart, store
from .state import keep_shared_state, lang, tr


def vote_page() -> None:
    """The page body (``pages/vote.py``: ``st.Page(..., url_path="vote", visibility="hidden")``)."""
    keep_shared_state()                       # a replica's first request: routed through app.py like any page
    state = st.session_state
    state.setdefault("poll.voter", new_voter())
    st.segmented_control(" ", list(LANGUAGES), format_func=LANGUAGES.get, key="vote.lang", default=lang(),
                         on_change=_language, label_visibility="collapsed")
    st.title(tr("poll.page"))
    code = st.query_params.get("room", "")
    try:
        code = normal_code(code) if code else ""
    except PollError:
        st.warning(tr("poll.no_room", code=Outside(code, limit=12)))
        code = ""
    if not code:
        _ask_for_room()
        return
    try:
        store().get(code)
    except Exception as err:                  # unknown, expired, or the store is down
        st.warning(tr("poll.no_room", code=code) if isinstance(err, PollError) else refusal(err))
        _ask_for_room()
        return
    st.fragment(_follow, run_every=REFRESH_S)(code)
    st.caption(tr("poll.privacy"))


def _language() -> None:
    if st.session_state.get("vote.lang"):
        st.session_state["ui.lang"] = st.session_state["vote.lang"]


def _ask_for_room() -> None:
    with st.form("vote.room_form", border=False):
        typed = st.text_input(tr("poll.room_prompt"), max_chars=9, help=tr("poll.room_help"))
        if st.form_submit_button(tr("poll.join_button"), type="primary"):
            st.query_params["room"] = typed.strip().upper()
            st.rerun()


def _follow(code: str) -> None:
    state = st.session_state
    try:
        poll = store().get(code)
    except Exception as err:                  # an expired room or a store that is down
        st.warning(refusal(err))
        return
    question, choices = poll.question(lang())
    st.markdown(f"#### {question}")
    mine_key = f"vote.{code}.{poll.round}.sent"
    if poll.phase == VOTING:
        if poll.round > 1:
            st.info(tr("poll.round2"))
        pick = st.radio(tr("poll.your_answer"), list(range(poll.n_choices)), format_func=choices.__getitem__,
                        index=state.get(mine_key), key=f"vote.{code}.{poll.round}.pick")
        if st.button(tr("poll.send"), key=f"vote.{code}.{poll.round}.send", type="primary", disabled=pick is None,
                     use_container_width=True):
            try:
                store().vote(code, state["poll.voter"], poll.round, pick)
                state[mine_key] = pick
            except Exception as err:          # a closed round, a store that is down
                st.warning(refusal(err))
        if state.get(mine_key) is not None:
            st.success(tr("poll.sent", choice=choices[state[mine_key]]))
        return
    if poll.phase == SHOWN:
        st.info(tr("poll.wait"))
    elif poll.phase == REVEALED:
        st.success(tr("poll.revealed", answer=choices[poll.answer]))
    elif poll.phase == CLOSED:
        st.info(tr("poll.over"))
    rounds = store().rounds(code)
    if rounds:
        rounds_chart(f"vote.{code}", poll, rounds)
