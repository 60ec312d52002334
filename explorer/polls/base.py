"""A class poll on a page's predict question, and the rules every vote store keeps.

Peer instruction (Mazur): the class votes, neighbours discuss, the class votes again, then the answer is revealed.
A poll is opened by one lecturer's session, which alone holds its token (the store keeps only the token's
SHA-256); students vote from their phones under a random voter id that their browser session makes. The rules,
the same for every backend (``tests/unit/test_polls.py`` runs one suite on each):

- Only the token's holder may show a round's distribution, start the second round, reveal or close.
- A vote is taken only while its round is open; one vote per voter per round, a changed vote replacing the first.
- A round's distribution is visible (to anyone, the lecturer too) only once it has been shown; the answer only once
  revealed. While a round is open, only the number of votes is.
- Nothing personal is stored: a voter is a random id, a vote is that id, a round and a choice; where a phone's id
  was issued from is kept only as a keyed digest of its address, to count the ids one address was given.
- The store keeps one secret of the deployment (``secret``: made once, shared by every replica that uses the
  store), with which the vote pages sign the voter ids they issue and the forms they send.
- Room codes are 6 characters drawn at random from 31 (about 8.9 × 10⁸ codes: knowing one tells nothing of
  another); a poll and its votes are deleted ``TTL`` seconds after it was opened.

A refused request raises ``PollError`` (its ``reason`` one of ``REASONS``) and changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"     # no 0/O, 1/I/L: read off a projector and typed on a phone
CODE_LENGTH = 6
TTL = 2 * 3600                                   # seconds a poll and its votes are kept after opening
MAX_ROUNDS = 2                                   # vote, discuss, vote again
VOTING, SHOWN, REVEALED, CLOSED = "voting", "shown", "revealed", "closed"
REASONS = ("unknown", "closed", "round", "choice", "voter", "token", "phase", "texts")
_VOTER = re.compile(r"[A-Za-z0-9_-]{16,64}")


class PollError(ValueError):
    """A request the poll refuses: ``reason`` names why (``REASONS``); nothing was changed."""

    def __init__(self, reason: str):
        assert reason in REASONS, reason
        super().__init__(f"poll refused the request: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Poll:
    """What anyone may read of a poll: its question in each language, the open round and the phase. ``shown``:
    how many rounds have had their distribution shown; ``answer``: the right choice, None until revealed."""
    code: str
    page: str
    texts: dict                 # language -> {"question": str, "choices": [str, ...]}
    n_choices: int
    round: int
    phase: str
    shown: int
    opened: float
    expires: float
    answer: int | None

    def question(self, lang: str) -> tuple[str, list[str]]:
        """The question and its choices in ``lang`` (English, or the first language stored, when it lacks it)."""
        text = self.texts.get(lang) or self.texts.get("en") or next(iter(self.texts.values()))
        return text["question"], list(text["choices"])


LETTERS = "ABCDEFGH"        # the choices' letters, the same on the projector and on every phone


def lettered(choices: list[str]) -> list[str]:
    """Each choice with its letter, as the projector and the phones show it: a class says "B" to each other.

    >>> lettered(["like d", "like √d"])
    ['A  like d', 'B  like √d']
    """
    return [f"{LETTERS[i]}  {choice}" for i, choice in enumerate(choices)]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normal_code(code: str) -> str:
    """A typed room code as stored (upper case, spaces and dashes dropped); PollError("unknown") if it cannot be one."""
    code = re.sub(r"[\s-]", "", str(code)).upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        raise PollError("unknown")
    return code


def new_voter() -> str:
    """A voter id for one browser session: random, and nothing else."""
    return secrets.token_urlsafe(18)


class Store:
    """The poll API; a backend supplies ``_insert``, ``_load``, ``_transition``, ``_vote`` and ``_tallies``, each
    atomic on its own (a database transaction, a Redis script), and ``_choice``."""

    # ------------------------------------------------------------------ the lecturer
    def open(self, page: str, texts: dict, answer: int, ttl: float = TTL) -> tuple[str, str]:
        """Open a poll on ``page``'s question (``texts``: language -> question and choices, the same number of
        choices, 2 to 8, in every language; ``answer``: the right choice). Returns (room code, lecturer token)."""
        counts = {len(t.get("choices", ())) for t in texts.values()}
        if len(counts) != 1 or not all(isinstance(t.get("question"), str) for t in texts.values()):
            raise PollError("texts")
        (n,) = counts
        if not 2 <= n <= 8:
            raise PollError("texts")
        if not 0 <= int(answer) < n:
            raise PollError("choice")
        token, now = secrets.token_urlsafe(24), time.time()
        record = {"token_hash": token_hash(token), "page": str(page), "texts": json.dumps(texts, ensure_ascii=False),
                  "n_choices": n, "answer": int(answer), "round": 1, "phase": VOTING, "shown": 0, "was_revealed": 0,
                  "opened": now, "expires": now + ttl}
        for _ in range(20):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            if self._insert(code, record):
                return code, token
        raise RuntimeError("no free room code after 20 draws")

    def show(self, code: str, token: str) -> Poll:
        """Close the open round and show its distribution."""
        poll = self.get(code)
        return self._change(poll, token, (VOTING,), {"phase": SHOWN, "shown": poll.round})

    def again(self, code: str, token: str) -> Poll:
        """After the first round was shown: open the second."""
        poll = self.get(code)
        if poll.round >= MAX_ROUNDS:
            self._authorise(poll.code, token)
            raise PollError("phase")
        return self._change(poll, token, (SHOWN,), {"phase": VOTING, "round": poll.round + 1})

    def reveal(self, code: str, token: str) -> Poll:
        """After a round was shown: reveal the answer."""
        return self._change(self.get(code), token, (SHOWN,), {"phase": REVEALED})

    def close(self, code: str, token: str) -> Poll:
        """End the poll (no more votes); what was shown stays readable until it expires, for the export."""
        return self._change(self.get(code), token, (VOTING, SHOWN, REVEALED), {"phase": CLOSED})

    # ------------------------------------------------------------------ everyone
    def get(self, code: str) -> Poll:
        code = normal_code(code)
        record = self._load(code)
        if record is None or float(record["expires"]) <= time.time():
            raise PollError("unknown")
        return Poll(code, record["page"], json.loads(record["texts"]), int(record["n_choices"]), int(record["round"]),
                    record["phase"], int(record["shown"]), float(record["opened"]), float(record["expires"]),
                    int(record["answer"]) if int(record["was_revealed"]) else None)

    def vote(self, code: str, voter: str, round_: int, choice: int) -> None:
        """Record ``voter``'s choice in round ``round_`` (replacing an earlier one of the same round)."""
        poll = self.get(code)
        if not isinstance(voter, str) or not _VOTER.fullmatch(voter):
            raise PollError("voter")
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < poll.n_choices:
            raise PollError("choice")
        if isinstance(round_, bool) or not isinstance(round_, int):
            raise PollError("round")
        status = self._vote(poll.code, round_, voter, choice)
        if status != "ok":
            raise PollError(status)

    def choice(self, code: str, voter: str) -> int | None:
        """``voter``'s choice in the open (or last) round, None if they have not voted in it (a phone's page says
        what is recorded, not what it remembers)."""
        poll = self.get(code)
        if not isinstance(voter, str) or not _VOTER.fullmatch(voter):
            return None
        return self._choice(poll.code, poll.round, voter)

    def count(self, code: str) -> int:
        """Votes so far in the open (or last) round: the one number shown while a round is open."""
        poll = self.get(code)
        return sum(self._tallies(poll.code, poll.round, poll.n_choices))

    def rounds(self, code: str) -> list[list[int]]:
        """The distribution of each round shown so far (round 1 first): votes per choice."""
        poll = self.get(code)
        return [self._tallies(poll.code, r, poll.n_choices) for r in range(1, poll.shown + 1)]

    def secret(self) -> bytes:
        """The deployment's secret (32 random bytes, made by the first server that asks and kept in the store, so
        every replica signs and checks with the same one)."""
        if getattr(self, "_secret_cache", None) is None:
            self._secret_cache = bytes.fromhex(self._secret(secrets.token_hex(32)))
        return self._secret_cache

    def issue(self, code: str, address_key: str, limit: int) -> bool:
        """Count one more voter id issued in room ``code`` to the address whose keyed digest is ``address_key``:
        True, unless that address was already given ``limit`` ids in this room (then False, and nothing changes).
        The count lives as long as the poll."""
        poll = self.get(code)
        return self._issue(poll.code, str(address_key), int(limit), poll.expires)

    # ------------------------------------------------------------------ shared
    def _authorise(self, code: str, token: str) -> None:
        record = self._load(code)
        if record is None:
            raise PollError("unknown")
        if not isinstance(token, str) or not hmac.compare_digest(record["token_hash"], token_hash(token)):
            raise PollError("token")

    def _change(self, poll: Poll, token: str, phases: tuple[str, ...], changes: dict) -> Poll:
        if not isinstance(token, str):
            raise PollError("token")
        if changes.get("phase") == REVEALED:
            changes = {**changes, "was_revealed": 1}
        status = self._transition(poll.code, token_hash(token), phases, poll.round, changes)
        if status != "ok":
            raise PollError(status)
        return self.get(poll.code)

    # ------------------------------------------------------------------ a backend's part
    def _insert(self, code: str, record: dict) -> bool:
        """Store a new poll; False when ``code`` is taken."""
        raise NotImplementedError

    def _load(self, code: str) -> dict | None:
        """The poll's record (``open``'s fields), None when absent or expired."""
        raise NotImplementedError

    def _transition(self, code: str, token_hash: str, phases: tuple[str, ...], round_: int, changes: dict) -> str:
        """If the token hash matches ("token" otherwise), the phase is one of ``phases`` and the round is
        ``round_`` ("phase" otherwise), apply ``changes``: "ok"; "unknown" for no such poll."""
        raise NotImplementedError

    def _vote(self, code: str, round_: int, voter: str, choice: int) -> str:
        """If the poll is voting ("closed" otherwise) in round ``round_`` ("round" otherwise), set the voter's
        choice for the round: "ok"; "unknown" for no such poll."""
        raise NotImplementedError

    def _tallies(self, code: str, round_: int, n_choices: int) -> list[int]:
        """Votes per choice in round ``round_``."""
        raise NotImplementedError

    def _choice(self, code: str, round_: int, voter: str) -> int | None:
        """``voter``'s choice in round ``round_``, None if none."""
        raise NotImplementedError

    def _secret(self, candidate: str) -> str:
        """The stored secret (hex); ``candidate`` stored first if there is none yet (atomically: two servers that
        start at once get the same one)."""
        raise NotImplementedError

    def _issue(self, code: str, key: str, limit: int, expires: float) -> bool:
        """Atomically: if fewer than ``limit`` ids were issued to ``key`` in ``code``, count one more and True;
        else False. The count expires with the poll (``expires``)."""
        raise NotImplementedError
