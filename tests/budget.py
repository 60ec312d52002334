"""The suite's budget, printed at the end of every run: wall and CPU seconds per test directory.

Each test's three phases (setup, call, teardown) are timed in the process that runs them (a pytest-xdist worker or
pytest itself): wall seconds and the CPU seconds of that process. The servers, browsers and tools that fixtures start
are child processes, whose CPU is known only once they have ended: it is summed on a line of its own. The reports
carry the seconds to the process that prints the table (``user_properties`` travel with xdist's reports).

    tests/unit    312 tests   wall  95.1 s   CPU  90.3 s
    ...

and, under it, the slowest test files, a file's setup, calls and teardowns summed (a file's tests run on one worker).

A directory's wall seconds are summed over the workers (worker-seconds): the run's own wall time is printed below
the table, next to the sum, so idle workers show as the gap between the two.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict

import pytest

CPU, CHILDREN = "cpu_s", "children_cpu_s"
SLOWEST_FILES = 15
# the rows of the table, in this order; a node id that starts with none of them is "other"
DIRECTORIES = {"tests/unit/": "tests/unit", "tests/lessons/": "tests/lessons", "tests/app/": "tests/app",
               "tests/e2e/": "tests/e2e", "docs/notebooks/": "notebooks", "explorer/": "doctests"}


def directory(nodeid: str) -> str:
    """The table's row for a test's node id.

    >>> directory("tests/unit/test_kernels.py::test_x"), directory("explorer/kernels.py::explorer.kernels.gaussian")
    ('tests/unit', 'doctests')
    """
    return next((name for prefix, name in DIRECTORIES.items() if nodeid.startswith(prefix)), "other")


def cpu_seconds() -> tuple[float, float]:
    """User + system CPU seconds of this process, and of its child processes that have ended and been waited for."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


_KEY = pytest.StashKey[dict]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _wrap(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _wrap(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _wrap(item, "teardown"))


def _wrap(item, when):
    start = cpu_seconds()
    try:
        return (yield)
    finally:
        item.stash.setdefault(_KEY, {})[when] = tuple(b - a for a, b in zip(start, cpu_seconds(), strict=True))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    own, children = item.stash.get(_KEY, {}).get(call.when, (0.0, 0.0))
    report.user_properties += [(CPU, own), (CHILDREN, children)]
    return report


class Table:
    """Collects every report (in the process that prints the summary) and prints the table."""

    def __init__(self):
        self.started = time.time()
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.tests: dict[str, set] = defaultdict(set)
        self.files: dict[str, float] = defaultdict(float)    # worker-seconds per test file (its fixtures included)
        self.children = 0.0

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        row = directory(report.nodeid)
        self.tests[row].add(report.nodeid)
        self.wall[row] += report.duration
        self.files[report.nodeid.split("::")[0]] += report.duration
        properties = dict(report.user_properties)
        self.cpu[row] += properties.get(CPU, 0.0)
        self.children += properties.get(CHILDREN, 0.0)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter):
        if not self.tests:
            return
        write = terminalreporter.write_line
        terminalreporter.section("time per test directory (wall: worker-seconds; CPU: user + system of the tests)")
        rows = [r for r in (*DIRECTORIES.values(), "other") if r in self.tests]
        for row in rows:
            write(f"{row:<14} {len(self.tests[row]):>5} tests   wall {self.wall[row]:7.1f} s   "
                  f"CPU {self.cpu[row]:7.1f} s")
        total_wall, total_cpu = sum(self.wall.values()), sum(self.cpu.values())
        write(f"{'all':<14} {sum(len(t) for t in self.tests.values()):>5} tests   wall {total_wall:7.1f} s   "
              f"CPU {total_cpu:7.1f} s")
        write(f"servers, browsers and tools the fixtures started (child processes, counted as they ended): CPU "
              f"{self.children:.1f} s")
        write(f"the run itself: {time.time() - self.started:.1f} s of wall time")
        slowest = sorted(self.files.items(), key=lambda item: -item[1])[:SLOWEST_FILES]
        write(f"the {len(slowest)} slowest test files (worker-seconds): "
              + ", ".join(f"{path} {seconds:.0f}" for path, seconds in slowest))


def pytest_configure(config):
    if not hasattr(config, "workerinput"):          # the printing process: pytest itself, or xdist's controller
        config.pluginmanager.register(Table(), "budget-table")
