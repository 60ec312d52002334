import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository (the app's scripts live here)
os.environ.setdefault("EXPLORER_DEVICE", "cpu")  # the suite is CPU-first; CUDA tests ask for it
# AppTest runs app.py inside this process: no start-up thread computing beside the tests (tests/app/test_warm_up.py
# runs it on purpose; the browser tests' server, like `make run`, starts it)
os.environ["EXPLORER_WARM_UP"] = "0"

from explorer.figures import style  # noqa: E402  (after the device is chosen)

style.VALIDATE = True  # every figure the tests build goes through plotly's property validation


def pytest_sessionstart(session):
    """The browser tests' screenshots of an earlier run are removed once, by the process that runs the tests or,
    under pytest-xdist, hands them out (not by each worker, which would remove the others' new ones)."""
    if not hasattr(session.config, "workerinput"):
        for old in (ROOT / "tests" / "artifacts").glob("*.png"):
            old.unlink()
