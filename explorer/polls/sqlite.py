"""Polls in one SQLite file (WAL): the store of a single server, nothing to set up.

Each operation is one transaction (``BEGIN IMMEDIATE``: the check and the write under one lock), so a vote racing
the lecturer's "show" is either counted before the round closes or refused. ``synchronous=FULL``: a vote is on
disk when its acknowledgement returns. Expired polls and their votes are deleted when the next poll opens.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

from .base import VOTING, Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS polls (
    code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, page TEXT NOT NULL, texts TEXT NOT NULL,
    n_choices INTEGER NOT NULL, answer INTEGER NOT NULL, round INTEGER NOT NULL, phase TEXT NOT NULL,
    shown INTEGER NOT NULL, was_revealed INTEGER NOT NULL, opened REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS votes (
    code TEXT NOT NULL, round INTEGER NOT NULL, voter TEXT NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (code, round, voter));
CREATE TABLE IF NOT EXISTS issued (
    code TEXT NOT NULL, address TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (code, address));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
FIELDS = ("token_hash", "page", "texts", "n_choices", "answer", "round", "phase", "shown", "was_revealed", "opened",
          "expires")


class SQLiteStore(Store):
    def __init__(self, path: str | Path):
        self.path = str(path)
        # owner-only: a folder this creates, and the file (SQLite gives its -wal and -shm files the file's mode)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path != ":memory:" and not Path(self.path).exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._local = threading.local()
        self._db().execute("PRAGMA journal_mode=WAL")
        self._db().executescript(SCHEMA)

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)          # one connection per thread (Streamlit runs sessions in threads)
        if db is None:
            db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            db.execute("PRAGMA synchronous=FULL")
            db.row_factory = sqlite3.Row
            self._local.db = db
        return db

    @contextlib.contextmanager
    def _transaction(self):
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _insert(self, code: str, record: dict) -> bool:
        with self._transaction() as db:
            db.execute("DELETE FROM votes WHERE code IN (SELECT code FROM polls WHERE expires <= ?)", (time.time(),))
            db.execute("DELETE FROM issued WHERE code IN (SELECT code FROM polls WHERE expires <= ?)", (time.time(),))
            db.execute("DELETE FROM polls WHERE expires <= ?", (time.time(),))
            if db.execute("SELECT 1 FROM polls WHERE code = ?", (code,)).fetchone():
                return False
            db.execute(f"INSERT INTO polls (code, {', '.join(FIELDS)}) VALUES (?{', ?' * len(FIELDS)})",
                       (code, *(record[f] for f in FIELDS)))
        return True

    def _load(self, code: str, db: sqlite3.Connection | None = None) -> dict | None:
        row = (db or self._db()).execute("SELECT * FROM polls WHERE code = ? AND expires > ?",
                                         (code, time.time())).fetchone()
        return dict(row) if row else None

    def _transition(self, code, token_hash, phases, round_, changes) -> str:
        with self._transaction() as db:
            row = self._load(code, db)              # read inside the transaction that writes
            if row is None:
                return "unknown"
            if row["token_hash"] != token_hash:
                return "token"
            if row["phase"] not in phases or row["round"] != round_:
                return "phase"
            db.execute(f"UPDATE polls SET {', '.join(f'{k} = ?' for k in changes)} WHERE code = ?",
                       (*changes.values(), code))
        return "ok"

    def _vote(self, code, round_, voter, choice) -> str:
        with self._transaction() as db:
            row = self._load(code, db)
            if row is None:
                return "unknown"
            if row["phase"] != VOTING:
                return "closed"
            if row["round"] != round_:
                return "round"
            db.execute("INSERT INTO votes (code, round, voter, choice) VALUES (?, ?, ?, ?) "
                       "ON CONFLICT (code, round, voter) DO UPDATE SET choice = excluded.choice",
                       (code, round_, voter, choice))
        return "ok"

    def _choice(self, code, round_, voter) -> int | None:
        row = self._db().execute("SELECT choice FROM votes WHERE code = ? AND round = ? AND voter = ?",
                                 (code, round_, voter)).fetchone()
        return None if row is None else int(row["choice"])

    def _tallies(self, code, round_, n_choices) -> list[int]:
        counts = [0] * n_choices
        for row in self._db().execute("SELECT choice, COUNT(*) AS n FROM votes WHERE code = ? AND round = ? "
                                      "GROUP BY choice", (code, round_)):
            counts[row["choice"]] = row["n"]
        return counts

    def _secret(self, candidate: str) -> str:
        with self._transaction() as db:
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)", (candidate,))
            return db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()["value"]

    def _issue(self, code, key, limit, expires) -> bool:
        with self._transaction() as db:
            row = db.execute("SELECT n FROM issued WHERE code = ? AND address = ?", (code, key)).fetchone()
            if row is not None and row["n"] >= limit:
                return False
            db.execute("INSERT INTO issued (code, address, n) VALUES (?, ?, 1) "
                       "ON CONFLICT (code, address) DO UPDATE SET n = n + 1", (code, key))
        return True
