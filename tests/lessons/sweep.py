"""What a lesson test sweeps: every setting its page lets a viewer move, built from the lesson's own ``PARAMS``.

A claim on screen must hold wherever the lecturer moves the page. A lesson test that checks a lesson's sentences
names the ``@says`` functions it checks and takes the settings to check them at::

    @checks(masking.verdicts)                    # the claims it checks (coverage reads these marks)
    def test_verdicts(settings):                 # every setting of the sweep, seeds 0-4 each
        for values in settings: ...

The sweep is made from the lesson's ``PARAMS``, so a new control is swept without anyone remembering to: each
setting at its regime values (a slider's two ends and middle, every option of a select, both sides of a switch, a
multiselect empty and with one choice; ``extra`` adds values where a regime changes between those), one setting at
a time from the defaults, then the settings named in ``together`` in every combination; each of these at seeds 0-4.
``tests/lessons/test_coverage.py`` fails for a ``@says`` function that no swept test checks (unless the function
says why it is ``fixed``).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

import pytest

from explorer.kernels import KERNELS
from explorer.lessons.base import Say
from explorer.lessons.params import Param, defaults

SEEDS = range(5)
WIDE_KERNELS = tuple(k for k in KERNELS if KERNELS[k].canonical)      # every kernel with a width
CHECKED: dict[Any, list[tuple[str, bool]]] = {}     # what a test checks -> (test, whether it sweeps)


def ends(control: Param) -> tuple:
    """The control's two ends and a middle value: a slider's lo, (lo + hi) / 2 (rounded to its step) and hi;
    the first, middle and last option of a select slider."""
    if control.options is not None:
        options = list(control.options)
        return options[0], options[len(options) // 2], options[-1]
    lo, hi = control.lo, control.hi
    kind = int if control.whole else float
    step = control.step or 1
    mid = lo + round((hi - lo) / 2 / step) * step
    return kind(lo), kind(mid), kind(hi)


def is_seed(param: Param) -> bool:
    return param.key.endswith("seed")


def regimes(param: Param) -> tuple:
    """The values a sweep takes for one setting: a slider's ends and middle, a select box's every option (but one
    a link cannot carry, an upload), a select slider's ends and middle, a switch's two sides, a multiselect empty
    and with its first option."""
    if param.kind == "toggle":
        return False, True
    if param.kind == "multiselect":
        return [], [param.options[0]]
    if param.kind == "select":
        return tuple(o for o in param.options if o not in (param.not_in_links or {}))
    return tuple(dict.fromkeys(ends(param)))


def settings(lesson: ModuleType, over: Sequence[Param] | None = None, together: Sequence[Param] = (),
             extra: Mapping[Param, Iterable] | None = None, fixed: Mapping[Param, Any] | None = None,
             also: Iterable[Mapping[Param, Any]] = (), seeds: Iterable[int] = SEEDS) -> list[dict]:
    """The settings to check the lesson at: its defaults with each of ``over`` (default: every setting but the
    seeds) at each of its regime values (``regimes``, plus ``extra``'s), one at a time; every combination of the
    ``together`` settings' values; the settings ``also`` names (where a regime changes only in a combination);
    ``fixed`` settings held at a value throughout; each at every seed in ``seeds`` (all of the lesson's seed
    settings at once)."""
    params = lesson.PARAMS
    extra = {p: tuple(v) for p, v in (extra or {}).items()}
    over = [p for p in (params if over is None else over) if not is_seed(p)]

    def values_of(p: Param) -> tuple:
        return tuple(dict.fromkeys((*regimes(p), *extra.get(p, ())), None)) if p.kind != "multiselect" else \
            (*regimes(p), *extra.get(p, ()))

    base = defaults(params)
    base.update({p.key: v for p, v in (fixed or {}).items()})
    variants = [dict(base)]
    for p in over:
        variants += [{**base, p.key: v} for v in values_of(p)]
    if together:
        for combo in itertools.product(*(values_of(p) for p in together)):
            variants.append({**base, **{p.key: v for p, v in zip(together, combo, strict=True)}})
    variants += [{**base, **{p.key: v for p, v in setting.items()}} for setting in also]
    seed_keys = [p.key for p in params if is_seed(p)]
    out, seen = [], set()
    for variant in variants:
        for seed in (seeds if seed_keys else (None,)):
            values = {**variant, **{k: seed for k in seed_keys}}
            mark = repr(sorted(values.items()))
            if mark not in seen:
                seen.add(mark)
                out.append(values)
    return out


def lesson_of(target) -> ModuleType:
    return sys.modules[target.__module__]


def checks(*targets, lesson: ModuleType | None = None, **sweep) -> Callable:
    """Mark a lesson test as the check of ``targets`` (``@says`` functions of a lesson, or a ``Param`` whose help
    states a fact). A test with a ``settings`` argument is given the sweep's settings (``settings(lesson,
    **sweep)``, the lesson being the first target's module unless given) and is marked ``sweep``; one without
    checks the targets at fixed inputs (enough only for a target that declares itself ``fixed``)."""
    def mark(test: Callable) -> Callable:
        signature = inspect.signature(test)
        swept = "settings" in signature.parameters
        for target in targets:
            CHECKED.setdefault(target, []).append((f"{test.__module__}::{test.__name__}", swept))
        if not swept:
            return test
        where = lesson or lesson_of(targets[0])

        @functools.wraps(test)
        def run(*args, **kwargs):
            return test(*args, settings=settings(where, **sweep), **kwargs)
        run.__signature__ = signature.replace(parameters=[p for p in signature.parameters.values()
                                                          if p.name != "settings"])
        return pytest.mark.sweep(run)
    return mark


MARKUP = re.compile(r"\{[a-z_]+[^}]*\}|\$|<[a-z/]")


def assert_words(said: Say) -> None:
    """A sentence as a viewer reads it, in both languages: no inf or nan, no unfilled placeholder, no raw markup."""
    for lang in ("en", "zh"):
        text = said.in_lang(lang)
        assert not re.search(r"\b-?(inf|nan)\b|∞%", text), (said.key, lang, text)      # a number formatted
        assert not MARKUP.search(text), (said.key, lang, text)
