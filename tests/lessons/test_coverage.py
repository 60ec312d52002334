"""Every claim on screen has a lesson test, and the test checks it wherever a lecturer can move the page.

A lesson declares its claims: the UI-text keys its ``@says`` functions may return (``explorer.lessons.base.says``).
A test in tests/lessons names the functions it checks (``sweep.checks``) and, unless the function says why no setting
can change what it says (``fixed``), is given the sweep of the lesson's settings. So a new sentence cannot ship
unchecked: its function has to be named by a test that sweeps it, read here from those marks (no guessing from key
names or from the tests' source text).
"""

import importlib
import math
import pkgutil
import re

import pytest

import explorer.lessons as lesson_package
import tests.lessons as test_package
from explorer.i18n import EN, ZH
from explorer.lessons import LESSONS
from explorer.lessons.base import Say, flatten, sayers
from explorer.lessons.params import defaults
from tests.lessons.sweep import CHECKED, assert_words

MODULES = [importlib.import_module(f"explorer.lessons.{m.name}") for m in pkgutil.iter_modules(lesson_package.__path__)]
for _m in pkgutil.iter_modules(test_package.__path__):          # their ``checks`` marks fill CHECKED
    if _m.name.startswith("test_") and _m.name != "test_coverage":
        importlib.import_module(f"tests.lessons.{_m.name}")
SAYERS = [(module.__name__.rsplit(".", 1)[-1], name, fn) for module in MODULES for name, fn in sayers(module).items()]


def test_the_lessons_declare_their_sentences():
    assert len(SAYERS) > 50 and {m for m, _, _ in SAYERS} >= {lesson.name for lesson in LESSONS}


@pytest.mark.parametrize("where, name, fn", SAYERS, ids=[f"{m}.{n}" for m, n, _ in SAYERS])
def test_every_sentence_function_is_checked(where, name, fn):
    """A test names it; and one that sweeps the lesson's settings does, unless it says why it is fixed."""
    checked = CHECKED.get(fn, [])
    assert checked, f"explorer.lessons.{where}.{name} (says {fn.says}) is checked by no test in tests/lessons"
    if fn.fixed is None:
        assert any(swept for _, swept in checked), \
            (f"explorer.lessons.{where}.{name} is checked only at fixed settings ({[t for t, _ in checked]}): sweep "
             f"it (a test with a `settings` argument) or say in @says(fixed=...) why no setting can change it")


def test_each_claim_is_declared_once_and_exists_in_both_languages():
    seen = {}
    for where, name, fn in SAYERS:
        for key in fn.says:
            assert key not in seen, f"{key} is declared by {seen[key]} and {where}.{name}"
            seen[key] = f"{where}.{name}"
            assert key in EN and key in ZH, f"{key} ({where}.{name}) is missing from a catalog"


@pytest.mark.parametrize("name", [lesson.name for lesson in LESSONS])
def test_every_lesson_says_its_sentences_headless(name):
    """``<lesson>.sentences(values)`` gives everything the page says at its defaults (what the app's wiring test
    compares with the page), each a declared claim, in words: no inf, nan or raw markup."""
    lesson = importlib.import_module(f"explorer.lessons.{name}")
    said = lesson.sentences(defaults(lesson.PARAMS))
    assert said and all(isinstance(s, Say) for s in said)
    declared = {key for _, _, fn in SAYERS for key in fn.says}
    assert all(s.key in declared for s in said), [s.key for s in said if s.key not in declared]
    for s in said:
        assert_words(s)


def test_pages_build_no_claim_of_their_own():
    """A page (and the UI) places what its lesson says: no claim key appears in a page script or in explorer/ui."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    declared = {key for _, _, fn in SAYERS for key in fn.says}
    found = []
    for path in [*root.glob("pages/*.py"), *root.glob("explorer/ui/*.py")]:
        for key in re.findall(r"[\"']([a-z_]+\.[a-z0-9_.]+)[\"']", path.read_text(encoding="utf-8")):
            if key in declared:
                found.append(f"{path.relative_to(root)}: {key}")
    assert not found, found


def test_flatten_and_words():
    assert flatten([Say("kr.snap", pct=0.03), None, [Say("mk.notice")]]) == [Say("kr.snap", pct=0.03), Say("mk.notice")]
    with pytest.raises(AssertionError):
        assert_words(Say("kr.snap", pct=math.inf))


def test_a_figures_data_is_computed_once_per_inputs_and_each_test_reads_its_own_copy(monkeypatch):
    """tests/lessons/conftest.py's ``computed_once``: the second read of a figure at the same settings does not
    compute, and what one reader writes into its arrays the next does not see; other settings compute anew."""
    import numpy as np

    from explorer.lessons import scaling
    from explorer.lessons.params import defaults
    from tests.lessons import conftest

    computed = []
    plain = conftest._plain_data
    monkeypatch.setattr(conftest, "_plain_data", lambda spec: computed.append(spec.inputs) or plain(spec))
    conftest._COMPUTED.clear()               # (the other tests' entries: computed again when next read)
    spec = scaling.figures(defaults(scaling.PARAMS))["logit_histogram"]
    first = spec.data()
    arrays = [k for k, v in first.items() if isinstance(v, np.ndarray)]
    assert arrays and len(computed) == 1
    for k in arrays:
        first[k][...] = -1
    second = spec.data()
    assert len(computed) == 1
    fresh = plain(spec)
    assert all(np.array_equal(second[k], fresh[k]) and not np.all(second[k] == -1) for k in arrays)
    scaling.figures({**defaults(scaling.PARAMS), "scale.seed": 3})["logit_histogram"].data()
    assert len(computed) == 2
