"""What the server keeps between reruns, bounded in bytes: one budget for every cache of computed results and drawn
figures.

A class shares one server, and a link can ask for a heavy setting (Attention heatmap at 1,000 queries over 2,000
points: 16 MB of weights). A cache bounded only by its number of entries grows with every such link until the
process is killed. Here each kept entry is sized by the arrays and text it holds (``nbytes``), all caches draw on
one ``BUDGET`` (``EXPLORER_CACHE_MB``, 384 MiB by default: the Kubernetes pod's 1536 MiB limit less an idle
server's ~400 MiB, its sessions and a heavy page being computed), and when a new entry does not fit, the entries
least recently used anywhere go first. An entry larger than ``MAX_ENTRY_SHARE`` of the budget is used for the run
that computed it and not kept.

Freed memory goes back to the system only if the C allocator lets it: glibc serves a large array freed once from its
heap the next time (its mmap threshold rises with each large block freed, up to 32 MiB), and a heap full of holes is
never returned; with ``return_large_blocks`` (the server calls it once at start) every block of 512 KiB or more is
its own mapping, returned when freed. And the server runs without Streamlit's full garbage collection after every
script run (``postScriptGC = false``: 120 ms a run): arrays held by cycles a finished run left behind wait for
Python's oldest generation, which large arrays do not hasten, so after a page run that left the process
``COLLECT_AFTER`` larger than after the last collection, ``collect_if_grown`` collects and trims once. Measured in
``make bench`` ("hostile": RSS after 20 heavy links).

A computed result (``memo``) is handed out as a copy of its arrays, as Streamlit's own cache did, so no page can
change what another will be handed; a drawn figure (never changed once drawn) is handed out as it is.

>>> budget = Budget(1000)                       # entries of up to 250 bytes are kept
>>> a, b = Kept("a", 10, budget), Kept("b", 10, budget)
>>> import numpy as np
>>> for cache, key in ((a, b"1"), (b, b"2"), (a, b"3"), (b, b"4")):
...     _ = cache.get(key, lambda: np.zeros(30))                  # 240 bytes each
>>> _ = a.get(b"5", lambda: np.zeros(30))       # does not fit: the oldest entry anywhere (a's first) goes
>>> budget.used, len(a), len(b), b"1" in a._kept
(960, 2, 2, False)
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import hashlib
import itertools
import os
import pickle
import sys
import threading
import weakref
from collections import OrderedDict

import numpy as np

from .internals import figure_parts

BUDGET_ENV = "EXPLORER_CACHE_MB"
DEFAULT_MB = 384
MAX_ENTRY_SHARE = 0.25          # an entry over this share of the budget is not kept


def budget_bytes(env: dict | None = None) -> int:
    """The budget in bytes from ``EXPLORER_CACHE_MB`` (MiB; default ``DEFAULT_MB``). ValueError names what is
    allowed.

    >>> budget_bytes({"EXPLORER_CACHE_MB": "64"})
    67108864
    """
    value = (os.environ if env is None else env).get(BUDGET_ENV, "") or str(DEFAULT_MB)
    try:
        mb = float(value)
    except ValueError:
        mb = -1.0
    if not 16 <= mb <= 1_048_576:
        raise ValueError(f"{BUDGET_ENV} must be a number of MiB from 16 to 1048576; it is {value[:20]!r}")
    return int(mb * 2**20)


MMAP_THRESHOLD = 512 * 1024     # bytes: blocks this large are mapped on their own (glibc's M_MMAP_THRESHOLD)
COLLECT_AFTER = 64 * 2**20      # bytes of growth since the last full collection that make a page run collect
_collected = {"rss": 0}
_collect_lock = threading.Lock()


def rss_bytes() -> int:
    """This process's resident memory (``/proc/self/statm``), 0 where there is none to read."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def collect_if_grown() -> bool:
    """A full garbage collection and a trim of the C heap when the process has grown ``COLLECT_AFTER`` since the
    last one (the first call only notes the size); True when it collected."""
    with _collect_lock:
        now = rss_bytes()
        if not _collected["rss"] or now - _collected["rss"] < COLLECT_AFTER:
            _collected["rss"] = _collected["rss"] or now
            return False
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)
        _collected["rss"] = rss_bytes()
        return True


def return_large_blocks() -> bool:
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD`` (``mallopt(M_MMAP_THRESHOLD)``), so that large blocks go
    back to the system when freed; True when set (False on a C library without it: nothing changes)."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(-3, MMAP_THRESHOLD))           # M_MMAP_THRESHOLD is -3 in glibc's malloc.h
    except (OSError, AttributeError):
        return False


def nbytes(value, _seen: set | None = None) -> int:
    """What keeping ``value`` costs, from above: a numpy array's buffer, a string's or bytes' length, the sum over a
    container's items (plus 8 bytes an item), a plotly figure's dict (``ReadyFigure.spec``, or a Figure's traces and
    layout as plotly holds them); anything else ``sys.getsizeof``. Shared objects count once.

    >>> nbytes({"w": np.zeros((10, 10)), "name": "abc"})
    824
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) if value.base is None or id(value.base) not in seen else 0
    if isinstance(value, (str, bytes, bytearray)):
        return len(value)
    if isinstance(value, dict):
        return sum(nbytes(k, seen) + nbytes(v, seen) + 8 for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(nbytes(v, seen) + 8 for v in value)
    spec = getattr(value, "spec", None)                       # a ReadyFigure: its dict
    if isinstance(spec, dict):
        return nbytes(spec, seen)
    parts = figure_parts(value)                               # a plotly Figure: its traces' and layout's dicts
    if parts is not None:
        return nbytes(parts, seen)
    return sys.getsizeof(value)


def copied(value):
    """``value`` with every numpy array in it (in dicts, lists and tuples) copied; anything else shared."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(copied(v) for v in value)
    return value


class Budget:
    """Bytes that the caches registered with it hold together, at most ``limit``."""

    def __init__(self, limit: int):
        self.limit, self.used = int(limit), 0
        self.lock = threading.RLock()
        self.caches: weakref.WeakSet[Kept] = weakref.WeakSet()
        self.clock = itertools.count()

    def make_room(self, size: int) -> None:
        """Drop the least recently used entries, of any cache, until ``size`` more bytes fit."""
        with self.lock:
            while self.used + size > self.limit:
                holding = [c for c in self.caches if c._kept]
                if not holding:
                    return
                oldest = min(holding, key=lambda c: next(iter(c._kept.values()))[2])
                oldest._drop_oldest()


try:
    BUDGET, BUDGET_ERROR = Budget(budget_bytes()), None
except ValueError as err:       # a mistyped EXPLORER_CACHE_MB: the server says so and stops (app.py)
    BUDGET, BUDGET_ERROR = Budget(DEFAULT_MB * 2**20), str(err)


class Kept:
    """A cache of at most ``size`` entries in the server's byte ``budget``, least recently used dropped first
    (here and across the budget's other caches); ``name`` says what it keeps (``make bench`` reports each);
    ``copies``: hand out copies of the arrays (``copied``), not the kept value itself."""

    def __init__(self, name: str = "drawn figures", size: int = 256, budget: Budget | None = None,
                 copies: bool = False):
        self.name, self.size, self.budget = name, size, budget or BUDGET
        self.handed = copied if copies else (lambda value: value)
        self._kept: OrderedDict = OrderedDict()            # key -> (value, bytes, last use)
        self.hits = self.misses = self.too_big = 0
        with self.budget.lock:
            self.budget.caches.add(self)

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def bytes(self) -> int:
        return sum(size for _, size, _ in self._kept.values())

    def get(self, key, build):
        """The value kept under ``key``, else ``build()``, kept under it if it fits (``key`` None: built, not kept)."""
        if key is None:
            return build()
        with self.budget.lock:
            if key in self._kept:
                value, size, _ = self._kept.pop(key)
                self._kept[key] = (value, size, next(self.budget.clock))
                self.hits += 1
                return self.handed(value)
        value = build()                 # outside the lock: two sessions computing different things do not wait
        size = nbytes(value)
        with self.budget.lock:
            self.misses += 1
            if size > MAX_ENTRY_SHARE * self.budget.limit or self.size < 1:
                self.too_big += 1
                return value
            if key in self._kept:
                self._drop(key)
            while len(self._kept) >= self.size:
                self._drop_oldest()
            self.budget.make_room(size)
            self._kept[key] = (value, size, next(self.budget.clock))
            self.budget.used += size
        return self.handed(value)

    def clear(self) -> None:
        with self.budget.lock:
            while self._kept:
                self._drop_oldest()

    def _drop(self, key) -> None:
        _, size, _ = self._kept.pop(key)
        self.budget.used -= size

    def _drop_oldest(self) -> None:
        self._drop(next(iter(self._kept)))


def memo(max_entries: int, name: str | None = None):
    """Decorator: keep a function's results in a ``Kept`` cache keyed on its arguments (pickled: plain values and
    arrays, never object identity). ``f.clear()`` empties it; ``f.kept`` is the cache."""

    def wrap(fn):
        kept = Kept(name or fn.__qualname__, max_entries, copies=True)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            try:
                key = hashlib.blake2b(pickle.dumps((args, sorted(kwargs.items())), protocol=pickle.HIGHEST_PROTOCOL),
                                      digest_size=16).digest()
            except (pickle.PicklingError, TypeError, AttributeError):
                key = None
            return kept.get(key, lambda: fn(*args, **kwargs))

        cached.clear, cached.kept = kept.clear, kept
        return cached

    return wrap
