"""No page raises at an edge: every lesson page rendered with each of its settings at each end of its range (and
each option of a select box), one at a time, and with the data settings a previous page may have left (the smallest
and largest n, no noise), and none shows an exception, an error box, or a sentence with inf, nan or raw markup."""

import re

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS
from explorer.lessons.params import Param
from explorer.lessons.shared import DATA_PARAMS, NOISE, N
from tests.app.helpers import ROOT

# settings whose every value costs a training run (seconds to minutes): their ends are the lesson tests' to sweep
TRAINED = {"ib.n", "ib.noise", "train.task", "train.layers", "train.heads", "train.d_model", "train.seq_len",
           "train.mlp", "train.lr", "train.warmup"}
RAW = re.compile(r"\b-?(inf|nan)\b|\{[a-z_]+[^}]*\}|\$[^$]+\$|<[a-z/]")


def edges(param: Param) -> list:
    if param.kind == "toggle":
        return [not param.default_value({})] if not callable(param.default) else [True, False]
    if param.kind == "multiselect":
        return [[], list(param.options[:1])]
    if param.options is not None:
        return [o for o in param.options if o not in (param.not_in_links or {})] if param.kind == "select" \
            else [param.options[0], param.options[-1]]
    if param.kind == "number":
        return [int(param.lo), int(min(param.hi, 9999))]
    kind = int if param.whole else float
    return [kind(param.lo), kind(param.hi)]


def _texts(at):
    return [e.value for kind in ("markdown", "caption", "info", "success", "warning") for e in at.get(kind)]


@pytest.mark.parametrize("name", [lesson.name for lesson in LESSONS])
def test_every_setting_at_each_end_renders_cleanly(name):
    lesson = next(item for item in LESSONS if item.name == name).module
    own = [p for p in lesson.PARAMS if p.key not in TRAINED and p not in DATA_PARAMS]
    shared = [(N, N.lo), (N, N.hi), (NOISE, NOISE.lo)] if any(p in DATA_PARAMS for p in lesson.PARAMS) else []
    cases = [(p, v) for p in own for v in edges(p)] + shared
    bad = []
    for param, value in cases:
        at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=300)
        at.session_state[param.key] = value
        at.run()
        problems = [e.message for e in at.exception] + [e.value for e in at.error]
        problems += [t for t in _texts(at) if RAW.search(t)]
        if problems:
            bad.append((param.key, value, problems[:2]))
    assert not bad, bad
