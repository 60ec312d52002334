"""Polls in Redis: the store that replicas share (``make serve-class`` starts ``redis-server`` for it).

A poll is the hash ``ae:poll:<code>``, the votes of round r the hash ``ae:votes:<code>:<r>`` (voter -> choice),
the ids issued per address the hash ``ae:issued:<code>``; all expire with the poll. The deployment's secret is
``ae:secret``. The check and the write of a vote or a lecturer's step run in one Lua script, so
they are atomic across replicas. Started with an append-only file written on every command (``appendfsync
always``), a restarted Redis still has every vote it acknowledged.
"""

from __future__ import annotations

import re

import redis

from .base import Store

_POLL, _VOTES, _ISSUED, _SECRET = "ae:poll:{}", "ae:votes:{}:{}", "ae:issued:{}", "ae:secret"

_VOTE = """
local h = redis.call('HMGET', KEYS[1], 'phase', 'round', 'expires')
if not h[1] then return 'unknown' end
if h[1] ~= 'voting' then return 'closed' end
if h[2] ~= ARGV[1] then return 'round' end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('EXPIREAT', KEYS[2], math.ceil(tonumber(h[3])))
return 'ok'
"""

_TRANSITION = """
local h = redis.call('HMGET', KEYS[1], 'token_hash', 'phase', 'round')
if not h[1] then return 'unknown' end
if h[1] ~= ARGV[1] then return 'token' end
if not string.find(',' .. ARGV[2] .. ',', ',' .. h[2] .. ',', 1, true) or h[3] ~= ARGV[3] then return 'phase' end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 'ok'
"""

_INSERT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(ARGV[1])))
return 1
"""


_ISSUE = """
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if n >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(ARGV[3])))
return 1
"""


class RedisStore(Store):
    def __init__(self, url: str):
        self.url = url
        self.db = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=5,
                                       health_check_interval=10)
        self._vote_script = self.db.register_script(_VOTE)
        self._transition_script = self.db.register_script(_TRANSITION)
        self._insert_script = self.db.register_script(_INSERT)
        self._issue_script = self.db.register_script(_ISSUE)

    def __repr__(self) -> str:                           # (the URL's password is not said)
        return f"RedisStore({re.sub(r':[^:@/]*@', ':***@', self.url)!r})"

    def _insert(self, code: str, record: dict) -> bool:
        pairs = [str(x) for kv in record.items() for x in kv]
        return bool(self._insert_script(keys=[_POLL.format(code)], args=[record["expires"], *pairs]))

    def _load(self, code: str) -> dict | None:
        return self.db.hgetall(_POLL.format(code)) or None

    def _transition(self, code, token_hash, phases, round_, changes) -> str:
        pairs = [str(x) for kv in changes.items() for x in kv]
        return self._transition_script(keys=[_POLL.format(code)], args=[token_hash, ",".join(phases), round_, *pairs])

    def _vote(self, code, round_, voter, choice) -> str:
        return self._vote_script(keys=[_POLL.format(code), _VOTES.format(code, round_)], args=[round_, voter, choice])

    def _choice(self, code, round_, voter) -> int | None:
        choice = self.db.hget(_VOTES.format(code, round_), voter)
        return None if choice is None else int(choice)

    def _tallies(self, code, round_, n_choices) -> list[int]:
        counts = [0] * n_choices
        for choice in self.db.hvals(_VOTES.format(code, round_)):
            counts[int(choice)] += 1
        return counts

    def _secret(self, candidate: str) -> str:
        self.db.set(_SECRET, candidate, nx=True)
        return self.db.get(_SECRET)

    def _issue(self, code, key, limit, expires) -> bool:
        return bool(self._issue_script(keys=[_ISSUED.format(code)], args=[key, limit, expires]))
