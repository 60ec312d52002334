"""The table every ``make test`` ends with (tests/budget.py): tests and seconds per directory, and the slowest files."""

import os
import re
import subprocess
import sys
import textwrap

from tests.conftest import ROOT


def test_the_table_counts_each_directorys_tests_and_names_the_slowest_files(tmp_path):
    """A small suite of three files in two directories, run by pytest with the table's plugin: each directory's row
    counts its own tests, and the file whose test busies the CPU for half a second is named first."""
    for path, body in {
        "tests/unit/test_quick.py": "def test_a():\n    pass\n\ndef test_b():\n    pass\n",
        "tests/unit/test_busy.py": """
            import time

            def test_busy():
                end = time.process_time() + 0.5
                while time.process_time() < end:
                    pass
            """,
        "tests/lessons/test_one.py": "def test_c():\n    pass\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    command = [sys.executable, "-m", "pytest", "-p", "tests.budget", "-p", "no:randomly", "-p", "no:cacheprovider",
               "-q", "tests"]
    out = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120).stdout
    assert "4 passed" in out, out
    rows = {m[0]: (int(m[1]), float(m[2]), float(m[3]))
            for m in re.findall(r"^(\S+)\s+(\d+) tests\s+wall\s+([\d.]+) s\s+CPU\s+([\d.]+) s", out, flags=re.M)}
    assert rows["tests/unit"][0] == 3 and rows["tests/lessons"][0] == 1 and rows["all"][0] == 4, rows
    assert rows["tests/unit"][2] >= 0.45 > rows["tests/lessons"][2], rows          # the busy test's CPU, in its row
    slowest = re.search(r"slowest test files \(worker-seconds\): (.*)", out)
    assert slowest, out
    files = [part.rsplit(" ", 1)[0] for part in slowest[1].split(", ")]
    assert files[0] == "tests/unit/test_busy.py" and sorted(files) == sorted(
        ["tests/unit/test_busy.py", "tests/unit/test_quick.py", "tests/lessons/test_one.py"]), files
