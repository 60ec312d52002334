"""Class polls on a page's predict question: ``Store`` (the API and its rules, in ``base``), two backends (SQLite
for one server, Redis for replicas) and ``store_from_env``, which picks one.

    >>> import tempfile, pathlib
    >>> from explorer.polls import SQLiteStore, new_voter
    >>> store = SQLiteStore(pathlib.Path(tempfile.mkdtemp()) / "polls.sqlite3")
    >>> code, token = store.open("scaling", {"en": {"question": "How?", "choices": ["a", "b"]}}, answer=1)
    >>> store.vote(code, new_voter(), 1, 0)
    >>> store.count(code), store.rounds(code)
    (1, [])
    >>> store.show(code, token).phase, store.rounds(code)
    ('shown', [[1, 0]])
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .base import (
    CLOSED,
    LETTERS,
    MAX_ROUNDS,
    REVEALED,
    SHOWN,
    TTL,
    VOTING,
    Poll,
    PollError,
    Store,
    lettered,
    new_voter,
    normal_code,
)
from .redis_store import RedisStore
from .sqlite import SQLiteStore

__all__ = ["CLOSED", "LETTERS", "MAX_ROUNDS", "REVEALED", "SHOWN", "TTL", "VOTING", "Poll", "PollError", "RedisStore",
           "SQLiteStore", "Store", "default_path", "lettered", "new_voter", "normal_code", "store_from_env"]


def default_path() -> Path:
    """Where a single server keeps its polls: ``$XDG_STATE_HOME`` (or ``~/.local/state``)/attention-explorer/."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "attention-explorer" / "polls.sqlite3"


@functools.lru_cache(maxsize=4)
def _store(where: str) -> Store:
    if where.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(where)
    return SQLiteStore(where.removeprefix("sqlite:///") if where.startswith("sqlite:///") else where)


def store_from_env() -> Store:
    """The store this server uses: ``$EXPLORER_POLLS`` (a ``redis://`` URL, or a SQLite file path), else the SQLite
    file at ``default_path()``; one per process."""
    return _store(os.environ.get("EXPLORER_POLLS") or str(default_path()))
