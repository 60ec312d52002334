"""The students' vote pages as plain routes (``explorer.phone``), driven over HTTP in-process (Starlette's test
client) against a real SQLite store: what a phone sees in each phase, one voter per cookie, and every refusal with
its status and sentence in the phone's language."""

import re

import pytest

pytest.importorskip("httpx2")                 # (Starlette's test client speaks through it)
from starlette.applications import Starlette
from starlette.testclient import TestClient

from explorer import phone
from explorer.i18n import t
from explorer.polls import store_from_env

TEXTS = {"en": {"question": "How does the std of q·k grow with d?", "choices": ["like d", "like √d", "not at all"]},
         "zh": {"question": "q·k 的标准差怎样随 d 增长？", "choices": ["像 d", "像 √d", "不增长"]}}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_POLLS", str(tmp_path / "polls.sqlite3"))
    monkeypatch.setattr(phone, "PHONES", phone.Limiter(1000))
    monkeypatch.setattr(phone, "ADDRESSES", phone.Limiter(1000))
    return store_from_env()


@pytest.fixture
def poll(store):
    return store.open("scaling", TEXTS, answer=1)


def client() -> TestClient:
    return TestClient(Starlette(routes=phone.ROUTES), follow_redirects=True)


def text(response) -> str:
    """What a reader sees: tags dropped, entities read."""
    import html
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", response.text, flags=re.S))


def send(phone_, code: str, choice: int, **extra):
    page = phone_.get(f"/vote/{code}")
    form = re.search(r'name="form" value="([A-Za-z0-9_-]+)"', page.text).group(1)
    round_ = re.search(r'name="round" value="(\d+)"', page.text).group(1)
    return phone_.post(f"/vote/{code}", data={"choice": str(choice), "round": round_, "form": form, "lang": "en",
                                              **extra})


def test_a_phone_sees_the_question_and_choices_in_its_language_and_gets_a_voter_cookie(poll):
    code, _ = poll
    first = client().get(f"/vote/{code}")
    assert first.status_code == 200
    assert TEXTS["en"]["question"] in text(first) and all(c in text(first) for c in TEXTS["en"]["choices"])
    for letter, choice in zip("ABC", TEXTS["en"]["choices"], strict=True):   # lettered as on the projector
        assert re.search(rf"value=\"{'ABC'.index(letter)}\"[^>]*>\s*<b class=\"letter\">{letter}</b>\s*"
                         rf"{re.escape(choice)}</label>", first.text), (letter, choice)
    assert first.text.count("<input type=\"radio\"") == 3 and "<script src=\"/vote.js\"" in first.text
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{phone.COOKIE}{code}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert f"Path=/vote/{code}" in cookie and "Secure" not in cookie                          # plain HTTP here
    zh = client().get(f"/vote/{code}", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert TEXTS["zh"]["question"] in text(zh) and '<html lang="zh-Hans"' in zh.text
    assert TEXTS["zh"]["question"] in text(client().get(f"/vote/{code}?lang=zh"))
    assert TEXTS["en"]["question"] in text(client().get(f"/vote/{code}?lang=xx"))


def test_one_phone_is_one_voter_through_reloads_and_a_changed_vote_replaces_the_first(store, poll):
    code, _ = poll
    alice, bob = client(), client()
    answered = send(alice, code, 0)
    assert answered.status_code == 200 and answered.history[0].status_code == 303           # Post/Redirect/Get
    assert t("poll.sent", "en").split(":")[0] in text(answered) and "like d" in text(answered)
    alice.get(f"/vote/{code}")                                                                 # a reload
    send(alice, code, 1)                                                                       # she changes it
    send(bob, code, 2)
    assert store.count(code) == 2
    page = alice.get(f"/vote/{code}")
    assert re.search(r'value="1" required checked', page.text)                                # what is recorded
    assert "like √d" in text(page).split(t("poll.sent", "en").split(":")[0])[1]


def test_a_form_without_its_phones_cookie_or_from_another_room_is_refused(store, poll):
    code, _ = poll
    other, _ = store.open("scaling", TEXTS, answer=0)
    page = client().get(f"/vote/{code}")
    form = re.search(r'name="form" value="([A-Za-z0-9_-]+)"', page.text).group(1)
    stranger = client()                                                                        # no cookie
    refused = stranger.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": form})
    assert refused.status_code == 403 and t("poll.err.form", "en") in text(refused)
    mallory = client()
    mallory.get(f"/vote/{code}")
    forged = mallory.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": form})   # someone else's
    assert forged.status_code == 403
    mine = re.search(r'name="form" value="([A-Za-z0-9_-]+)"', mallory.get(f"/vote/{other}").text).group(1)
    assert mallory.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": mine}).status_code == 403
    assert store.count(code) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_the_store_refuses_gets_its_status_and_one_sentence_in_the_phones_language(store, poll, lang):
    code, token = poll
    voter = client()
    page = voter.get(f"/vote/{code}?lang={lang}")
    form = re.search(r'name="form" value="([A-Za-z0-9_-]+)"', page.text).group(1)
    bad = voter.post(f"/vote/{code}", data={"choice": "7", "round": "1", "form": form, "lang": lang})
    assert bad.status_code == 400 and t("poll.err.choice", lang) in text(bad)
    word = voter.post(f"/vote/{code}", data={"choice": "one", "round": "1", "form": form, "lang": lang})
    assert word.status_code == 400
    store.show(code, token)
    closed = voter.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": form, "lang": lang})
    assert closed.status_code == 409 and t("poll.err.closed", lang) in text(closed)
    unknown = voter.get(f"/vote/ABCDEF?lang={lang}")
    assert unknown.status_code == 404 and t("poll.err.unknown", lang) in text(unknown)
    big = voter.post(f"/vote/{code}", content=b"choice=0&" + b"x" * 5000,
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert big.status_code == 413
    assert store.count(code) == 0


def test_a_vote_counts_only_with_an_id_and_a_form_this_server_issued(store, poll):
    """A script that never loads the page: fresh random cookies of the right shape, form values computed as a
    page would compute them without the deployment's secret, an id issued for another room: none counts."""
    import hashlib
    import secrets

    code, _ = poll
    other, _ = store.open("scaling", TEXTS, answer=0)
    for _ in range(5):
        forger = client()
        voter = secrets.token_urlsafe(18) + secrets.token_urlsafe(18)[:22]
        forger.cookies.set(phone.COOKIE + code, voter, path=f"/vote/{code}")
        unsigned = hashlib.sha256(f"vote-form:{code}:{voter}".encode()).hexdigest()[:32]
        sent = forger.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": unsigned})
        assert sent.status_code == 403 and t("poll.err.form", "en") in text(sent)
    elsewhere = client()
    elsewhere.get(f"/vote/{other}")
    id_of_other = elsewhere.cookies[phone.COOKIE + other]
    forger = client()
    forger.cookies.set(phone.COOKIE + code, id_of_other, path=f"/vote/{code}")
    secret = store.secret()
    sent = forger.post(f"/vote/{code}", data={"choice": "0", "round": "1",
                                              "form": phone.form_value(secret, other, id_of_other)})
    assert sent.status_code == 403
    assert store.count(code) == 0 and phone.issued_here(secret, other, id_of_other)
    assert not phone.issued_here(secret, code, id_of_other) and not phone.issued_here(b"x" * 32, other, id_of_other)


def test_a_planted_cookie_is_one_phone_and_one_address_gets_at_most_its_ids(store, poll, monkeypatch):
    code, _ = poll
    alice = client()
    send(alice, code, 0)
    planted = client()                                    # a page elsewhere wrote alice's id into another browser
    planted.cookies.set(phone.COOKIE + code, alice.cookies[phone.COOKIE + code], path=f"/vote/{code}")
    send(planted, code, 2)
    assert store.count(code) == 1 and store.choice(code, alice.cookies[phone.COOKIE + code]) == 2
    monkeypatch.setattr(phone, "PHONES_PER_ADDRESS", 3)
    phones = [client() for _ in range(5)]                 # one address (the test client's), 5 phones
    pages = [p.get(f"/vote/{code}") for p in phones]
    assert [p.status_code for p in pages] == [200, 200, 429, 429, 429]        # alice's id was the first of 3
    assert t("poll.err.phones", "en") in text(pages[2]) and 'name="form"' not in pages[2].text
    for p in phones[:2]:
        send(p, code, 1)
    assert store.count(code) == 3


def test_a_form_of_more_fields_than_a_vote_is_400_with_a_sentence(store, poll):
    code, _ = poll
    voter = client()
    page = voter.get(f"/vote/{code}?lang=zh")
    form = re.search(r'name="form" value="([A-Za-z0-9_-]+)"', page.text).group(1)
    extra = {f"f{i}": "x" for i in range(6)}
    sent = voter.post(f"/vote/{code}", data={"choice": "0", "round": "1", "form": form, "lang": "zh", **extra})
    assert sent.status_code == 400 and t("poll.err.fields", "zh") in text(sent)
    assert store.count(code) == 0


def test_over_https_the_cookie_is_a_host_cookie_of_the_room(poll):
    code, _ = poll
    phone_ = TestClient(Starlette(routes=phone.ROUTES), base_url="https://testserver")
    cookie = phone_.get(f"/vote/{code}").headers["set-cookie"]
    assert cookie.startswith(f"__Host-{phone.COOKIE}{code}=") and "Secure" in cookie and "Path=/;" in cookie + ";"
    assert "Domain" not in cookie


def test_a_room_code_from_a_link_is_shown_as_text_and_the_old_link_leads_to_the_room(poll):
    code, _ = poll
    moved = client().get(f"/vote?room={code.lower()[:3]}-{code.lower()[3:]}&lang=zh", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == f"/vote/{code}?lang=zh"
    hostile = client().get("/vote?room=<img src=x onerror=alert(1)>")
    assert hostile.status_code == 404 and "<img" not in hostile.text and "&lt;img src=x" in hostile.text
    in_path = client().get("/vote/%3Cb%3Ehi%3C%2Fb%3E")
    assert in_path.status_code == 404 and "<b>hi" not in in_path.text
    asked = client().get("/vote")
    assert asked.status_code == 200 and 'name="room"' in asked.text and 'action="/vote"' in asked.text


def test_the_page_follows_the_round_shown_revealed_and_closed(store, poll):
    code, token = poll
    alice, bob = client(), client()
    send(alice, code, 1)
    send(bob, code, 0)
    state = alice.get(f"/vote/{code}/state").json()["state"]
    store.show(code, token)
    assert alice.get(f"/vote/{code}/state").json()["state"] != state
    shown = alice.get(f"/vote/{code}")
    assert t("poll.wait", "en") in text(shown) and '<input type="radio"' not in shown.text
    assert t("poll.round_n", "en", n=1, total=2) in text(shown)
    assert re.findall(r'<progress max="2" value="(\d)"', shown.text) == ["1", "1", "0"]
    store.again(code, token)
    again = alice.get(f"/vote/{code}")
    assert t("poll.round2", "en") in text(again) and " checked" not in again.text       # round 2: not voted yet
    send(alice, code, 1)
    store.show(code, token)
    store.reveal(code, token)
    revealed = text(alice.get(f"/vote/{code}"))
    assert re.search(r"The answer: +like √d", revealed) and t("poll.round_n", "en", n=2, total=1) in revealed
    store.close(code, token)
    assert t("poll.over", "en") in text(alice.get(f"/vote/{code}"))


def test_a_phone_or_an_address_past_its_rate_gets_429_and_a_sentence(store, poll, monkeypatch):
    code, _ = poll
    monkeypatch.setattr(phone, "PHONES", phone.Limiter(1))
    monkeypatch.setattr(phone.time, "monotonic", lambda: 100.0)                    # both votes in the same instant
    voter = client()
    assert send(voter, code, 0).status_code == 200
    busy = send(voter, code, 1)
    assert busy.status_code == 429 and t("poll.err.busy", "en") in text(busy)
    assert store.choice(code, voter.cookies[phone.COOKIE + code]) == 0


def test_the_limiter_counts_one_second_per_key_and_holds_a_bounded_number_of_keys():
    limit = phone.Limiter(2, keys=3)
    assert [limit.allow("a", now) for now in (0.0, 0.1, 0.2, 0.99, 1.05)] == [True, True, False, False, True]
    for key in "bcde":
        limit.allow(key, 2.0)
    assert len(limit._seen) == 3 and "a" not in limit._seen


class _Down:
    """A store that does not answer (a Redis that is gone)."""

    def __getattr__(self, name):
        def refuse(*args, **kwargs):
            raise ConnectionError("the store did not answer")
        return refuse


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_store_that_does_not_answer_gets_503_and_a_sentence_not_a_traceback(store, poll, monkeypatch, lang):
    code, _ = poll
    voter = client()
    page = voter.get(f"/vote/{code}")
    fields = {k: re.search(f'name="{k}" value="([^"]+)"', page.text).group(1) for k in ("form", "round")}
    monkeypatch.setattr(phone, "store_from_env", lambda: _Down())
    down = voter.get(f"/vote/{code}?lang={lang}")
    assert down.status_code == 503 and t("poll.phone_unavailable", lang) in text(down)
    sent = voter.post(f"/vote/{code}", data={"choice": "0", "lang": lang, **fields})
    assert sent.status_code == 503 and t("poll.phone_unavailable", lang) in text(sent)
    assert voter.get(f"/vote/{code}/state").status_code == 503
