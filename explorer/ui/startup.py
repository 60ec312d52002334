"""Work done once per server, off every page's path: the router starts it on the first run of any page.

``warm_up_once`` starts one background thread (``explorer.ui.warmup``) that computes every lesson's figures at
its defaults into the pages' own cache, so the first student to open a lesson finds its charts ready. The thread
loads the compute stack (torch) itself, after the first page has been sent, so the landing page never waits for it.
Set ``EXPLORER_WARM_UP=0`` to skip it (a developer's server that restarts on every edit).

At interpreter exit the warm-up stops after the figure it is computing and the exit waits for it: a daemon thread
killed inside a torch call aborts the whole process ("terminate called without an active exception", status 134),
as seen in a notebook or a test run that runs the app and exits while the warm-up computes.
"""

from __future__ import annotations

import atexit
import os
import threading

NAME = "explorer-warm-up"
STOP = threading.Event()          # set at exit: the warm-up returns after the figure it is computing
_lock = threading.Lock()
_thread: threading.Thread | None = None


def warm_up_once() -> threading.Thread | None:
    """Start the warm-up thread unless this server has started it (or ``EXPLORER_WARM_UP=0``); the thread."""
    global _thread
    if os.environ.get("EXPLORER_WARM_UP", "1") == "0":
        return None
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_run, name=NAME, daemon=True)
            _thread.start()
            atexit.register(stop)
    return _thread


def stop() -> None:
    """Ask the warm-up to stop and wait until it has (run at interpreter exit)."""
    STOP.set()
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _run() -> None:
    from explorer.ui import warmup  # deferred: it loads torch and every lesson, off the landing page's path

    warmup.run(stop=STOP)
