"""The start-up warm-up: once per server, in a background thread, every lesson's default figures land in the cache
the pages read; a failure is logged and leaves the page to compute (and report) it."""

import logging
import threading

import pytest

from explorer.lessons import LESSONS, lesson
from explorer.lessons.params import defaults
from explorer.ui import startup, warmup
from explorer.ui.cache import _computed, spec_data


def _default_specs(name):
    mod = lesson(name).module
    return {k: s for k, s in mod.figures(defaults(mod.PARAMS)).items() if s.figure_def.cached and s.figure_def.exported}


def test_the_default_figures_are_served_from_the_cache_after_the_warm_up(monkeypatch):
    """After ``run``, the pages' ``spec_data`` of each default figure of the warmed lessons answers without calling
    the compute: the computes are replaced by ones that fail, and every figure still comes back."""
    _computed.clear()                     # nothing an earlier test computed counts
    chosen = [item for item in LESSONS if item.name in ("masking", "scaling")]
    took = warmup.run(chosen)
    assert set(took) == {"masking", "scaling"}
    for name in took:
        specs = _default_specs(name)
        assert specs, name
        for spec in specs.values():
            compute = spec.figure_def.compute
            module = __import__(compute.__module__, fromlist=["_"])

            def refuse(**_):
                raise AssertionError("computed again")
            monkeypatch.setattr(module, compute.__qualname__, refuse)
            assert spec_data(spec) is not None


def test_a_failing_figure_is_logged_and_the_rest_still_warm(monkeypatch, caplog):
    mod = lesson("scaling").module
    spec = next(iter(_default_specs("scaling").values()))
    real = mod.figures

    def broken(values):
        raise RuntimeError("no data")
    monkeypatch.setattr(mod, "figures", broken)
    with caplog.at_level(logging.ERROR, logger=warmup.__name__):
        took = warmup.run([item for item in LESSONS if item.name in ("scaling", "masking")])
    assert set(took) == {"scaling", "masking"}
    assert any("warm-up of scaling failed" in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(mod, "figures", real)
    assert spec_data(spec) is not None


def test_one_thread_per_server_and_none_when_switched_off(monkeypatch):
    started = []
    monkeypatch.setattr(startup, "_thread", None)
    monkeypatch.setattr(startup, "_run", lambda: started.append(threading.current_thread().name))
    monkeypatch.setenv("EXPLORER_WARM_UP", "0")
    assert startup.warm_up_once() is None
    monkeypatch.setenv("EXPLORER_WARM_UP", "1")
    threads = [startup.warm_up_once() for _ in range(3)]
    threads[0].join(5)
    assert threads[0] is threads[1] is threads[2] and started == [startup.NAME]


@pytest.mark.parametrize("name", [item.name for item in LESSONS])
def test_every_lesson_has_default_figures_to_warm(name):
    """Each lesson's ``figures`` at its defaults gives the warm-up something that is cached (live training: its
    settings-only figure, the lr and temperature schedules)."""
    assert _default_specs(name)


EXIT_WHILE_WARMING = """
import os, sys, threading, time
os.environ["EXPLORER_WARM_UP"] = "1"
from streamlit import config
config.set_option("runner.magicEnabled", False)
from streamlit.testing.v1 import AppTest
for _ in range(3):
    at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
deadline = time.monotonic() + 60
while not ("explorer.lessons.kernel_regression" in sys.modules
           and any(t.name == "explorer-warm-up" for t in threading.enumerate())):
    assert time.monotonic() < deadline, "the warm-up never started"
    time.sleep(0.05)
time.sleep(2)                  # inside the warm-up's torch work (kernel regression's bandwidth search)
assert any(t.name == "explorer-warm-up" for t in threading.enumerate()), "the warm-up ended before the exit"
"""


def test_a_process_that_runs_the_app_exits_cleanly_while_the_warm_up_computes(tmp_path):
    """A TA's pytest or notebook that runs app.py three times (warm-up on) and exits while the warm-up is inside a
    torch computation exits with status 0: the warm-up stops after its current figure and the exit waits for it
    (a daemon thread killed inside torch aborted the process with status 134)."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "exit_while_warming.py"
    script.write_text(EXIT_WHILE_WARMING)
    app = Path(__file__).resolve().parents[2] / "app.py"
    env = {k: v for k, v in __import__("os").environ.items() if k != "EXPLORER_WARM_UP"}
    done = subprocess.run([sys.executable, str(script), str(app)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "terminate called" not in done.stderr
