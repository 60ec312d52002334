"""The poll store's rules (``explorer.polls.base``), one suite run against both backends: SQLite (one server) and
Redis (replicas). Every refusal is checked to change nothing."""

import os
import threading
import time

import pytest

from explorer.polls import CLOSED, REVEALED, SHOWN, VOTING, PollError, SQLiteStore, new_voter, normal_code
from explorer.polls.base import ALPHABET, CODE_LENGTH
from tests.polls_support import REDIS, REDIS_MISSING, RedisServer

TEXTS = {"en": {"question": "Which?", "choices": ["a", "b", "c"]},
         "zh": {"question": "哪个？", "choices": ["甲", "乙", "丙"]}}


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if REDIS is None:
        if os.environ.get("REQUIRE_REDIS"):
            pytest.fail(REDIS_MISSING)
        pytest.skip(REDIS_MISSING)
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "polls.sqlite3")
    from explorer.polls.redis_store import RedisStore

    return RedisStore(request.getfixturevalue("redis_server").url)


def _state(store, code):
    p = store.get(code)
    return p.phase, p.round, p.shown, p.answer, store.count(code), store.rounds(code)


def test_a_poll_opens_voting_with_nothing_shown_and_the_token_not_stored(store):
    code, token = store.open("scaling", TEXTS, answer=2)
    p = store.get(code)
    assert (p.phase, p.round, p.shown, p.answer, p.n_choices, p.page) == (VOTING, 1, 0, None, 3, "scaling")
    assert p.question("zh") == ("哪个？", ["甲", "乙", "丙"]) and p.question("fr") == ("Which?", ["a", "b", "c"])
    assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET)
    assert token not in str(store._load(code))                 # only its hash is kept
    assert store.get(code.lower()[:3] + "-" + code.lower()[3:]).code == code      # typed as read off the screen


def test_one_vote_per_voter_per_round_and_a_changed_vote_replaces(store):
    code, _ = store.open("scaling", TEXTS, answer=0)
    alice, bob = new_voter(), new_voter()
    store.vote(code, alice, 1, 0)
    store.vote(code, bob, 1, 1)
    store.vote(code, alice, 1, 2)                               # alice changes her mind
    assert store.count(code) == 2
    assert store.choice(code, alice) == 2 and store.choice(code, bob) == 1
    assert store.choice(code, new_voter()) is None and store.choice(code, "not a voter id") is None


def test_a_voters_choice_is_of_the_open_round(store):
    code, token = store.open("scaling", TEXTS, answer=0)
    alice = new_voter()
    store.vote(code, alice, 1, 1)
    store.show(code, token)
    assert store.choice(code, alice) == 1                      # round 1, shown: still hers
    store.again(code, token)
    assert store.choice(code, alice) is None                   # round 2: not yet
    store.vote(code, alice, 2, 0)
    assert store.choice(code, alice) == 0


def test_the_distribution_is_hidden_until_shown_and_votes_stop_when_shown(store):
    code, token = store.open("scaling", TEXTS, answer=1)
    for choice in (0, 1, 1):
        store.vote(code, new_voter(), 1, choice)
    assert store.rounds(code) == []                             # while voting: only the count
    assert store.show(code, token).phase == SHOWN
    assert store.rounds(code) == [[1, 2, 0]]
    before = _state(store, code)
    with pytest.raises(PollError) as err:
        store.vote(code, new_voter(), 1, 0)
    assert err.value.reason == "closed" and _state(store, code) == before


def test_a_second_round_after_discussion_then_reveal_then_close(store):
    code, token = store.open("scaling", TEXTS, answer=1)
    voters = [new_voter() for _ in range(4)]
    for v, choice in zip(voters, (0, 0, 1, 2), strict=True):
        store.vote(code, v, 1, choice)
    with pytest.raises(PollError) as err:                        # no second round before the first was shown
        store.again(code, token)
    assert err.value.reason == "phase"
    store.show(code, token)
    assert store.again(code, token).round == 2 and store.count(code) == 0
    with pytest.raises(PollError) as err:
        store.vote(code, voters[0], 1, 1)                        # round 1 is over
    assert err.value.reason == "round"
    for v, choice in zip(voters, (1, 1, 1, 2), strict=True):
        store.vote(code, v, 2, choice)
    assert store.rounds(code) == [[2, 1, 1]]                     # round 2 not shown yet
    assert store.get(code).answer is None
    with pytest.raises(PollError) as err:                        # reveal needs the round shown
        store.reveal(code, token)
    assert err.value.reason == "phase"
    store.show(code, token)
    with pytest.raises(PollError) as err:                        # two rounds at most
        store.again(code, token)
    assert err.value.reason == "phase"
    assert store.reveal(code, token).answer == 1 and store.get(code).phase == REVEALED
    assert store.rounds(code) == [[2, 1, 1], [0, 3, 1]]
    closed = store.close(code, token)
    assert (closed.phase, closed.answer) == (CLOSED, 1) and store.rounds(code) == [[2, 1, 1], [0, 3, 1]]
    with pytest.raises(PollError):
        store.vote(code, new_voter(), 2, 0)


@pytest.mark.parametrize("step", ["show", "again", "reveal", "close"])
def test_another_token_changes_nothing(store, step):
    code, token = store.open("scaling", TEXTS, answer=1)
    other_code, other_token = store.open("masking", TEXTS, answer=0)
    store.vote(code, new_voter(), 1, 1)
    if step in ("again", "reveal"):
        store.show(code, token)
    before = _state(store, code)
    for forged in (other_token, token[:-1] + ("A" if token[-1] != "A" else "B"), "", None, 17):
        with pytest.raises(PollError) as err:
            getattr(store, step)(code, forged)
        assert err.value.reason == "token", forged
    assert _state(store, code) == before and store.get(other_code).phase == VOTING


@pytest.mark.parametrize("voter, round_, choice, reason", [
    ("short", 1, 0, "voter"), ("x" * 65, 1, 0, "voter"), ("bad voter id with spaces", 1, 0, "voter"),
    (None, 1, 0, "voter"), ("v" * 24, 1, 3, "choice"), ("v" * 24, 1, -1, "choice"), ("v" * 24, 1, "1", "choice"),
    ("v" * 24, 1, True, "choice"), ("v" * 24, 1, 1.0, "choice"), ("v" * 24, 2, 0, "round"), ("v" * 24, "1", 0, "round"),
])
def test_a_malformed_vote_is_refused_and_changes_nothing(store, voter, round_, choice, reason):
    code, _ = store.open("scaling", TEXTS, answer=1)
    store.vote(code, new_voter(), 1, 1)
    before = _state(store, code)
    with pytest.raises(PollError) as err:
        store.vote(code, voter, round_, choice)
    assert err.value.reason == reason and _state(store, code) == before


@pytest.mark.parametrize("code", ["", "ABC", "ABCDEFG", "ABCDE0", "AB CD!E", None, "ZZZZZZ"])
def test_an_unknown_or_malformed_room_is_refused(store, code):
    store.open("scaling", TEXTS, answer=1)
    with pytest.raises(PollError) as err:
        store.vote(code, new_voter(), 1, 0)
    assert err.value.reason == "unknown"
    with pytest.raises(PollError):
        store.get(code)


@pytest.mark.parametrize("texts, answer, reason", [
    ({}, 0, "texts"), ({"en": {"question": "q", "choices": ["a"]}}, 0, "texts"),
    ({"en": {"question": "q", "choices": ["a", "b"]}, "zh": {"question": "q", "choices": ["a", "b", "c"]}}, 0, "texts"),
    ({"en": {"question": None, "choices": ["a", "b"]}}, 0, "texts"), (TEXTS, 3, "choice"), (TEXTS, -1, "choice"),
])
def test_a_poll_needs_one_question_with_two_to_eight_choices(store, texts, answer, reason):
    with pytest.raises(PollError) as err:
        store.open("scaling", texts, answer=answer)
    assert err.value.reason == reason


def _gone(store, code) -> bool:
    try:
        store.get(code)
    except PollError:
        return True
    return False


def test_a_poll_expires_with_its_votes(store):
    code, token = store.open("scaling", TEXTS, answer=1, ttl=1.0)
    store.vote(code, new_voter(), 1, 0)
    deadline = time.monotonic() + 30                 # the store's clock passes the ttl (waited for, not assumed)
    while time.monotonic() < deadline and not _gone(store, code):
        time.sleep(0.05)
    for call in (lambda: store.get(code), lambda: store.vote(code, new_voter(), 1, 0), lambda: store.show(code, token)):
        with pytest.raises(PollError) as err:
            call()
        assert err.value.reason == "unknown"


def test_room_codes_are_random_and_distinct(store):
    codes = [store.open("scaling", TEXTS, answer=0)[0] for _ in range(200)]
    assert len(set(codes)) == 200
    for position in range(CODE_LENGTH):                       # no position is fixed or counts up
        assert len({c[position] for c in codes}) >= 20, position
    assert all(normal_code(c) == c for c in codes)


def test_every_vote_of_a_crowd_counts_once(store):
    """200 voters on 8 threads, some changing their vote: each counted once, in its last choice."""
    code, token = store.open("scaling", TEXTS, answer=0)
    voters = [new_voter() for _ in range(200)]
    errors = []

    def cast(chunk):
        try:
            for i, v in chunk:
                store.vote(code, v, 1, i % 3)
                if i % 10 == 0:
                    store.vote(code, v, 1, (i + 1) % 3)
        except Exception as exc:        # reported by the assertion below
            errors.append(exc)
    threads = [threading.Thread(target=cast, args=(list(enumerate(voters))[k::8],)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == [] and store.count(code) == 200
    store.show(code, token)
    expected = [0, 0, 0]
    for i in range(200):
        expected[(i + 1) % 3 if i % 10 == 0 else i % 3] += 1
    assert store.rounds(code) == [expected]


def test_sqlite_votes_survive_a_new_process_handle(tmp_path):
    path = tmp_path / "polls.sqlite3"
    first = SQLiteStore(path)
    code, token = first.open("scaling", TEXTS, answer=0)
    for choice in (0, 1, 1):
        first.vote(code, new_voter(), 1, choice)
    again = SQLiteStore(path)
    again.show(code, token)
    assert again.rounds(code) == [[1, 2, 0]]


def test_redis_killed_and_restarted_keeps_every_acknowledged_vote(tmp_path):
    if REDIS is None:
        pytest.skip(REDIS_MISSING)
    from explorer.polls.redis_store import RedisStore

    server = RedisServer(tmp_path / "redis").start()
    try:
        store = RedisStore(server.url)
        code, token = store.open("scaling", TEXTS, answer=0)
        for i in range(50):
            store.vote(code, new_voter(), 1, i % 3)
        server.kill()                                          # SIGKILL: no save on shutdown
        server = RedisServer(tmp_path / "redis", port=server.port).start()
        store = RedisStore(server.url)
        assert store.count(code) == 50
        store.show(code, token)
        assert store.rounds(code) == [[17, 17, 16]]
    finally:
        server.stop()


def test_the_secret_is_made_once_and_every_server_on_the_store_reads_the_same(store, tmp_path):
    again = SQLiteStore(store.path) if isinstance(store, SQLiteStore) else type(store)(store.url)
    assert len(store.secret()) == 32 and again.secret() == store.secret()
    assert SQLiteStore(tmp_path / "elsewhere.sqlite3").secret() != store.secret()     # another deployment's


def test_ids_issued_to_one_address_stop_at_the_limit_in_each_room_and_only_there(store):
    code, _ = store.open("scaling", TEXTS, answer=0)
    other, _ = store.open("scaling", TEXTS, answer=0)
    assert [store.issue(code, "hall", 3) for _ in range(5)] == [True, True, True, False, False]
    assert store.issue(code, "another hall", 3) and store.issue(other, "hall", 3)
    with pytest.raises(PollError):
        store.issue("ABCDEF", "hall", 3)


def test_ids_issued_at_once_from_many_threads_never_pass_the_limit(store):
    code, _ = store.open("scaling", TEXTS, answer=0)
    granted = []
    threads = [threading.Thread(target=lambda: granted.append(store.issue(code, "hall", 25))) for _ in range(60)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert granted.count(True) == 25 and len(granted) == 60
