"""Fair training on one server: at most K sessions train at once; the others wait in line, first come first served.

A session's model trains in a worker process (``worker.POOL``, one process per slot) while the session holds a
slot; the page's live view, rerun every second while a session is running, asks for one at each tick (``claim``):
a session that waits shows its place in the line and hands its model to a worker as soon as a slot frees. A slot is
given back on Pause, Reset, a stop, and, because a closed or frozen tab sends no more ticks, when its holder has not
ticked for ``STALE_SECONDS`` (so nothing is held by a tab nobody looks at). K comes from ``EXPLORER_TRAINING_SLOTS``,
else the CPU cores less one (at least 1): one core is left for the pages.

The line is process-wide state shared by every session of this server, guarded by one lock.
"""

from __future__ import annotations

import os
import threading
import time

STALE_SECONDS = 5.0          # a holder or waiter that has not ticked for this long has left


def capacity() -> int:
    """K: ``EXPLORER_TRAINING_SLOTS`` when set to a whole number >= 1, else the cores less one (at least 1)."""
    raw = os.environ.get("EXPLORER_TRAINING_SLOTS", "").strip()
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    return max(1, (os.cpu_count() or 2) - 1)


class Slots:
    """K training slots and the line of sessions waiting for one."""

    def __init__(self, k: int | None = None, clock=time.monotonic):
        self.k = k
        self.clock = clock
        self.lock = threading.Lock()
        self.holders: dict[str, float] = {}       # session -> last tick
        self.waiting: dict[str, float] = {}       # session -> last tick, in arrival order

    def _expire(self, now: float) -> None:
        for table in (self.holders, self.waiting):
            for session in [s for s, seen in table.items() if now - seen > STALE_SECONDS]:
                del table[session]

    def claim(self, session: str) -> int:
        """A tick of a running session: 0 when it holds a slot (train now), else its place in the line (1 = next)."""
        with self.lock:
            now = self.clock()
            self._expire(now)
            if session in self.holders:
                self.holders[session] = now
                return 0
            self.waiting.setdefault(session, now)
            self.waiting[session] = now
            line = list(self.waiting)
            k = self.k or capacity()
            if len(self.holders) < k and line.index(session) < k - len(self.holders):
                del self.waiting[session]
                self.holders[session] = now
                return 0
            return line.index(session) + 1

    def release(self, session: str) -> None:
        """Pause, Reset or a stop: the session neither holds a slot nor waits for one."""
        with self.lock:
            self.holders.pop(session, None)
            self.waiting.pop(session, None)

    def holding(self) -> set[str]:
        """The sessions that hold a slot now."""
        with self.lock:
            self._expire(self.clock())
            return set(self.holders)

    def status(self) -> tuple[int, int, int]:
        """(slots, sessions training, sessions waiting)."""
        with self.lock:
            self._expire(self.clock())
            return self.k or capacity(), len(self.holders), len(self.waiting)


SLOTS = Slots()
