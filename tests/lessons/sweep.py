"""What a lesson test sweeps: the seeds a lecturer may type and the settings a page lets a viewer move.

A claim on screen must hold wherever the lecturer moves the page, so a lesson test that checks one runs it over
``SEEDS`` and over each control the sentence depends on, at the control's ends and a middle value (``ends``),
each dataset and each kernel, and is marked ``@pytest.mark.sweep``. ``tests/lessons/test_coverage.py`` fails for a
claim that no swept test names (unless it is listed there as not depending on the data, with the reason).
"""

from __future__ import annotations

from explorer.data import DATASETS
from explorer.kernels import KERNELS
from explorer.lessons.params import Param

SEEDS = range(5)
DATASET_NAMES = tuple(DATASETS)
WIDE_KERNELS = tuple(k for k in KERNELS if KERNELS[k].canonical)      # every kernel with a width


def ends(control: Param) -> tuple:
    """The control's two ends and a middle value: a slider's lo, (lo + hi) / 2 (rounded to its step) and hi;
    the first, middle and last option of a select slider."""
    if control.options is not None:
        options = list(control.options)
        return options[0], options[len(options) // 2], options[-1]
    lo, hi = control.lo, control.hi
    kind = type(control.default_value())
    step = control.step or 1
    mid = lo + round((hi - lo) / 2 / step) * step
    return kind(lo), kind(mid), kind(hi)
