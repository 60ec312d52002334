"""Leave-one-out scores, each computed once per process.

The Kernel regression page scores the same data at the same bandwidths several times in one run: its curve, the
search for the optimum (the search grid, then golden-section steps) and the check for a flat stretch below it
(the search grid again). At the upload limit (5,000 points) one score costs about 50 ms, so the first fit of an
upload repeated most of 4 s of work. A score is a pure function of the data, the kernel, the bandwidth and the
method, so it is kept under those: at most ``MAX_SCORES`` of them (a float and a 60-byte key each: about 1.5 MB),
the oldest dropped first.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

MAX_SCORES = 8_192
_SCORES: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def data_key(*tensors) -> bytes:
    """A digest of the tensors' values, dtypes and device."""
    digest = hashlib.blake2b(digest_size=16)
    for t in tensors:
        digest.update(f"{t.dtype}:{t.device}:{tuple(t.shape)}".encode())
        digest.update(t.detach().cpu().numpy().tobytes())
    return digest.digest()


def remembered(key: tuple, compute: Callable[[], float]) -> float:
    """The score kept under ``key``, else ``compute()`` kept under it."""
    with _LOCK:
        if key in _SCORES:
            _SCORES.move_to_end(key)
            return _SCORES[key]
    score = compute()                       # outside the lock: sessions scoring other data do not wait
    with _LOCK:
        _SCORES[key] = score
        while len(_SCORES) > MAX_SCORES:
            _SCORES.popitem(last=False)
    return score
