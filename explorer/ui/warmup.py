"""Every lesson's figures at its defaults, computed once into the pages' cache (``cache.spec_data``): the body of
the start-up thread (``explorer.ui.startup``). A figure that reads live state (a model being trained) or times
this machine is left to its page."""

from __future__ import annotations

import logging
import threading
import time

from ..lessons import LESSONS
from ..lessons.params import defaults
from .cache import spec_data
from .internals import SCRIPT_RUN_CONTEXT_LOGGER

log = logging.getLogger(__name__)


class _NoContextWarning(logging.Filter):
    """Streamlit warns that a cached function ran outside a script run; here that is the point."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "ScriptRunContext" not in record.getMessage()


def run(lessons=LESSONS, stop: threading.Event | None = None) -> dict[str, float]:
    """Compute each lesson's default figures (lesson name -> seconds it took); a failure is logged, not raised,
    and the page computes that figure itself when asked. Once ``stop`` is set, no further figure is started."""
    logging.getLogger(SCRIPT_RUN_CONTEXT_LOGGER).addFilter(_NoContextWarning())
    took = {}
    for lesson in lessons:
        if stop is not None and stop.is_set():
            break
        start = time.perf_counter()
        try:
            for spec in lesson.module.figures(defaults(lesson.module.PARAMS)).values():
                if stop is not None and stop.is_set():
                    break
                if spec.figure_def.cached and spec.figure_def.exported:
                    spec_data(spec)
        except Exception:                # the page computes it again and shows the error where the viewer looks
            log.exception("warm-up of %s failed", lesson.name)
        took[lesson.name] = time.perf_counter() - start
    return took
