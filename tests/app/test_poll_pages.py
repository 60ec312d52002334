"""The class poll in the app (AppTest, one SQLite store): the lecturer's panel in lecture mode. The students' pages
are plain routes (tests/unit/test_phone.py); the store's own rules are tests/unit/test_polls.py."""

import pytest
from streamlit.testing.v1 import AppTest

from explorer.i18n import t
from explorer.polls import new_voter, store_from_env
from tests.app.helpers import assert_clean, page


@pytest.fixture(autouse=True)
def poll_store(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_POLLS", str(tmp_path / "polls.sqlite3"))
    return store_from_env()


def _lecturer() -> AppTest:
    at = page("scaling")
    at.session_state["ui.lecture"] = True
    at.session_state["ui.predict"] = True
    return at.run()


def _text(at):
    return " ".join(m.value for m in [*at.markdown, *at.subheader, *at.warning])


def test_the_lecturer_opens_a_poll_in_both_languages_and_holds_its_token(poll_store):
    at = _lecturer()
    at.button(key="poll.sc.growth.open").click().run()
    assert_clean(at)
    held = at.session_state["poll.sc.growth"]
    poll = poll_store.get(held["code"])
    assert poll.question("en")[0] == t("sc.predict_q", "en") and poll.question("zh")[0] == t("sc.predict_q", "zh")
    assert poll.question("zh")[1] == [t(f"sc.law_{i}", "zh") for i in range(3)]
    assert poll.answer is None                                      # hidden until revealed
    assert f"/vote/{held['code']}" in _text(at)                     # the students' link
    assert "  \n".join(f"**{'ABC'[i]}**  {t(f'sc.law_{i}', 'en')}" for i in range(3)) in _text(at)  # lettered
    assert not at.radio                                             # the class answers; the lecturer's guess goes


def test_a_poll_ended_before_its_reveal_gives_the_page_its_own_reveal_back(poll_store):
    """End poll before Reveal to the class: the page's own guess and Reveal come back (the page is not stuck)."""
    at = _lecturer()
    at.button(key="poll.sc.growth.open").click().run()
    assert not at.radio
    held = at.session_state["poll.sc.growth"]
    poll_store.close(held["code"], held["token"])
    at.run()
    assert_clean(at)
    assert at.radio and at.button(key="predict.sc.growth.reveal")


def test_a_link_no_phone_can_reach_is_said_before_any_phone_tries_with_the_setting_that_fixes_it():
    from tests.app.helpers import shown

    at = _lecturer()                     # (AppTest has no browser address: the link falls back to localhost:8501)
    at.button(key="poll.sc.growth.open").click().run()
    code = at.session_state["poll.sc.growth"]["code"]
    [warning] = [w.value for w in at.warning]
    assert "Phones cannot reach localhost, this computer's own address" in shown(warning) and "make room" in warning
    link = f"http://localhost:8501/vote/{code}"        # whole, with its scheme, a link that copies as it reads
    assert at.subheader[0].value == f"[{link}]({link})" and shown(at.subheader[0].value) == link
    store_from_env().vote(code, new_voter(), 1, 0)          # a phone got through (on this machine): said no more
    at.run()
    assert not at.warning


def test_a_link_at_the_address_phones_reach_gets_no_note(monkeypatch):
    from tests.app.helpers import shown

    monkeypatch.setenv("EXPLORER_PUBLIC_URL", "http://10.0.0.5:8501")
    at = _lecturer()
    at.button(key="poll.sc.growth.open").click().run()
    code = at.session_state["poll.sc.growth"]["code"]
    assert not at.warning and shown(at.subheader[0].value) == f"http://10.0.0.5:8501/vote/{code}"
    assert "\u2060" not in at.subheader[0].value


@pytest.mark.parametrize("url, reachable", [
    ("http://localhost:8501/vote", False), ("http://127.0.0.1:8501", False), ("http://127.8.0.1", False),
    ("http://[::1]:8501", False), ("http://app.localhost", False), ("http://10.0.0.5:8501", True),
    ("https://explorer.example.edu", True), ("http://[fe80::1]:8501", True),
])
def test_which_hosts_phones_cannot_reach(url, reachable):
    from explorer.ui.poll import loopback

    assert loopback(url) is not reachable
