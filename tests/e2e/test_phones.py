"""The vote route against a real server (``streamlit run app.py``: the app's ASGI entry serves it): phones as HTTP
clients with their own cookies, and the single server restarted in the middle of a round."""

import re

import pytest

from explorer.polls import SQLiteStore
from explorer.serving import AppServer, free_port

httpx2 = pytest.importorskip("httpx2")
TEXTS = {"en": {"question": "Which?", "choices": ["a", "b", "c"]}}


def _vote(phone, base: str, code: str, choice: int):
    page = phone.get(f"{base}/vote/{code}")
    fields = {k: re.search(f'name="{k}" value="([^"]+)"', page.text).group(1) for k in ("form", "round")}
    return phone.post(f"{base}/vote/{code}", data={"choice": str(choice), **fields})


def test_a_single_server_restarted_mid_round_keeps_every_vote_and_each_phone_stays_one_voter(tmp_path):
    polls = tmp_path / "polls.sqlite3"
    store = SQLiteStore(polls)
    code, token = store.open("scaling", TEXTS, answer=2)
    port = free_port()
    phones = [httpx2.Client(timeout=60, follow_redirects=True) for _ in range(3)]
    try:
        with AppServer(port=port, env={"EXPLORER_POLLS": str(polls)}) as up:
            for i, phone in enumerate(phones):
                assert _vote(phone, up.url, code, i).status_code == 200
        assert store.count(code) == 3                                    # on disk when acknowledged
        with AppServer(port=port, env={"EXPLORER_POLLS": str(polls)}) as up:   # a new process, the same file
            for i, phone in enumerate(phones):
                page = phone.get(f"{up.url}/vote/{code}")
                assert re.search(f'value="{i}" required checked', page.text)    # its own vote, from its cookie
                answered = _vote(phone, up.url, code, 2)                        # and it changes it
                assert answered.status_code == 200 and 'class="note sent"' in answered.text
        assert store.count(code) == 3
        store.show(code, token)
        assert store.rounds(code) == [[0, 0, 3]]
    finally:
        for phone in phones:
            phone.close()
