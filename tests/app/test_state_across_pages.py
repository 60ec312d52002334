"""Nothing is lost between pages: every control a page declares keeps its value, and Live training its model,
while the viewer visits every other page and comes back (the app through its router, as a browser runs it)."""

import pytest
from streamlit.testing.v1 import AppTest

from explorer.lessons import LESSONS
from explorer.lessons.shared import SHARED as SHARED_PARAMS
from tests.app.helpers import ROOT, assert_clean

CONTROLS = {item.name: item.module.PARAMS for item in LESSONS}
SHARED = {c.key for c in SHARED_PARAMS}


# the ablation controls name heads, which must exist in the model the other changed settings build
OVERRIDES = {"train.layers": 2, "train.heads": 4, "train.ablate": ["l1h3"], "train.circuit_head": "l1h3"}


def other_value(control):
    """A value the control can hold other than its default."""
    if control.key in OVERRIDES:
        return OVERRIDES[control.key]
    default = control.default_value() if not callable(control.default) else None
    if control.kind == "toggle":
        return not default
    if control.kind == "multiselect":
        return [control.options[1]]
    if control.options is not None:
        return next(o for o in control.options if o != default)
    return control.lo if default != control.lo else control.hi


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_a_page_keeps_its_settings_while_every_other_page_is_visited(name):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page(f"pages/{name}.py").run()
    own = [c for c in CONTROLS[name] if c.key not in SHARED]
    heads = {"train.ablate", "train.circuit_head"}            # set once the model with those heads is built
    for phase in (False, True):
        for control in own:
            if (control.key in heads) == phase:
                at.session_state[control.key] = other_value(control)
        at.run()
    assert_clean(at)
    if name == "live_training":
        at.button(key="train.step").click().run()
    shown = {c.key: at.session_state[c.key] for c in own}
    defaults = {c.key: c.default for c in own if not callable(c.default)}
    changed = [k for k in defaults if shown[k] != defaults[k]]
    assert len(changed) >= len(defaults) - 1     # at most one value was clamped back by another's bound
    steps = at.session_state["train.run"].trainer.step_count if name == "live_training" else None
    for other in (*sorted(CONTROLS), "home"):
        if other != name:
            at.switch_page(f"pages/{other}.py").run()
            assert_clean(at)
    at.switch_page(f"pages/{name}.py").run()
    assert_clean(at)
    assert {c.key: at.session_state[c.key] for c in own} == shown
    if name == "live_training":
        assert at.session_state["train.run"].trainer.step_count == steps == 10
        assert not any("new model" in i.value for i in at.info)
