import asyncio
import functools
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]  # the repository (the app's scripts live here)
# Under pytest-xdist each worker computes with one thread: torch's OpenMP threads spin while they wait, and two workers
# each running two of them on two cores made a minute of training take fifteen (measured). Set before torch loads.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("EXPLORER_DEVICE", "cpu")  # the suite is CPU-first; CUDA tests ask for it
# AppTest runs app.py inside this process: no start-up thread computing beside the tests (tests/app/test_warm_up.py
# runs it on purpose; the browser tests' server, like `make run`, starts it)
os.environ["EXPLORER_WARM_UP"] = "0"

from explorer.figures import style  # noqa: E402  (after the device is chosen)

pytest_plugins = ["tests.budget"]      # the wall and CPU seconds per test directory, printed at the end of every run

style.VALIDATE = True  # every figure the tests build goes through plotly's property validation


def _scan_installed_components_once():
    """A new AppTest, on its first run, looks for Streamlit components in the metadata of every installed
    distribution (0.16 CPU-s here, about 150 distributions; a few hundred AppTests a run: about a minute of CPU).
    What is installed does not change while the tests run: the scan's answer is kept for the process
    (tests/unit/test_speed_guards.py checks that two AppTests scan once)."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:                      # a Streamlit without these components: no scan to keep
        return
    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_installed_components_once()

if os.environ.get("PYTEST_XDIST_WORKER"):
    import torch

    torch.set_num_threads(1)


def pytest_sessionstart(session):
    """The browser tests' screenshots of an earlier run are removed once, by the process that runs the tests or,
    under pytest-xdist, hands them out (not by each worker, which would remove the others' new ones)."""
    if not hasattr(session.config, "workerinput"):
        for old in (ROOT / "tests" / "artifacts").glob("*.png"):
            old.unlink()


# The longest files first. make test hands out whole files to its workers (pytest-xdist, --dist loadfile), in this
# order (--no-loadscope-reorder: by default xdist hands out the files with the most tests first, which put the browser
# files, long but with few tests each, at the end); a long file handed out last is the whole run's tail (the
# induction models, the browser walks: a minute or more each). Then the other browser files and the notebooks, then
# the rest. Within a file, and within each of these groups, the order is pytest's own (shuffled by pytest-randomly).
LONGEST_FIRST = ("tests/lessons/test_live_training.py", "tests/e2e/test_layout.py", "tests/e2e/test_browser.py",
                 "tests/lessons/test_icl_bandwidth.py", "tests/e2e/test_replicas.py",
                 "tests/lessons/test_efficient_attention.py", "tests/lessons/test_softmax_kernel.py")
LONG = ("tests/e2e/", "docs/notebooks/")


def file_rank(path: str) -> int:
    """Where a file's tests go in the run: ``LONGEST_FIRST`` in its order, then ``LONG``'s files, then the rest.

    >>> file_rank("tests/e2e/test_layout.py"), file_rank("tests/e2e/test_poll.py"), file_rank("tests/unit/test_x.py")
    (1, 7, 8)
    """
    if path in LONGEST_FIRST:
        return LONGEST_FIRST.index(path)
    return len(LONGEST_FIRST) + (0 if path.startswith(LONG) else 1)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """After every other reordering (pytest-randomly shuffles the files and the tests within each; it wraps this
    hook too, and a conftest's wrapper is the outer one), the longest files are moved to the front; the shuffled
    order is kept within each file and among the rest (a stable sort)."""
    yield
    items.sort(key=lambda item: file_rank(Path(item.fspath).relative_to(ROOT).as_posix()))


@pytest.fixture(scope="session", autouse=True)
def icl_grid_points_kept():
    """The bandwidth lesson's grid points (its defaults and the settings its claims are checked at) read from
    tests/lessons/models (``tests.lessons.icl_grid``; some are retrained in every run and compared), in every test
    process, instead of trained in each one that draws the page or its figures (16 s for the defaults' five). That
    the page trains a point it lacks is tests/app/test_attention_pages.py's."""
    from tests.lessons.icl_grid import put_in_place

    put_in_place()


@pytest.fixture(autouse=True)
def no_event_loop_left_running(request):
    """A test outside the browser files starts with no asyncio loop running on its thread: one left there by an
    earlier test (Playwright's synchronous API runs one while it is open) fails every later ``asyncio.run``, so the
    result would hang on which tests ran first."""
    if "tests/e2e/" not in request.node.nodeid:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        assert loop is None, f"an asyncio loop is still running on this thread: {loop!r}"
    yield


def until(check, timeout: float = 30.0, every: float = 0.1):
    """Wait until ``check()`` returns something true, polling every ``every`` s, for at most ``timeout`` s; return
    its last answer (false when the time ran out: the caller's assertion then says what was missing). A test waits
    on a condition, never for a fixed time."""
    import time

    deadline = time.monotonic() + timeout
    while not (answer := check()) and time.monotonic() < deadline:
        time.sleep(every)
    return answer
