"""The "Attention learns its bandwidth" grid points the lesson tests read, trained once and kept in this folder.

A grid point (``explorer.incontext.grid_point``) trains the softmax unit and linear attention at one slope L, noise,
context size and seed, and finds the oracle and leave-one-out bandwidths: 0.3-2 s each on one thread. The claims
about the page are checked at five L for each (noise, n, seed) in ``SETTINGS``: 110 points, about 75 s of training
in every run. They are kept in ``models/icl_grid.json`` (each point's eleven numbers) and put where the lesson looks
for trained points before any test runs (``tests/conftest.py``), so the page's own tests (tests/app) and the figure
tests (tests/unit) read them too. ``tests/lessons/test_icl_bandwidth.py`` retrains some of them in every run and
compares them with what is kept, so the file cannot drift from what training gives; that the page trains a point it
lacks, behind its progress bar, is tests/app/test_attention_pages.py's.

    python -m tests.lessons.icl_grid      # after a change to the unit, its training, the tasks or torch
"""

import json
from pathlib import Path

import torch

from explorer import incontext
from explorer.device import torch_threads, trainer_threads
from explorer.lessons import icl_bandwidth as IB

KEPT = Path(__file__).parent / "models" / "icl_grid.json"
# (noise, n, seed): the page's defaults and the ends of the noise and context sliders at seeds 0-2, as the lesson
# tests sweep them
SETTINGS = [(noise, n, seed) for seed in range(3) for noise, n in
            [(0.0, 8), (0.0, 32), (0.0, 128), (0.1, 8), (0.1, 128), (0.3, 32), (1.0, 8)]] + [(0.3, 64, 0)]


def train(lipschitz: float, noise: float, n: int, seed: int) -> dict:
    """One grid point trained as the page trains it (on the trainer's thread count)."""
    with torch_threads(trainer_threads()):
        return incontext.grid_point(lipschitz, noise, n, seed)


def kept() -> dict[tuple, dict]:
    """{(L, noise, n, seed): the point} for every point in the file."""
    points = json.loads(KEPT.read_text())["points"]
    return {(p["L"], p["noise"], p["n"], p["seed"]): p for p in points}


def put_in_place() -> None:
    """Hand the kept points to the lesson as if it had trained them (``icl_bandwidth.grid_point`` reads them)."""
    IB._POINTS.update(kept())


def write() -> None:
    points = [train(lip, noise, n, seed) for noise, n, seed in SETTINGS for lip in IB.LIPSCHITZ]
    KEPT.parent.mkdir(exist_ok=True)
    rows = ",\n".join(json.dumps(point) for point in points)           # a point a line
    KEPT.write_text(f'{{"torch": {json.dumps(torch.__version__)}, "points": [\n{rows}\n]}}\n')


if __name__ == "__main__":
    write()
