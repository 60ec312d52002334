"""Lesson tests build the data a figure shows at the page's defaults and check what its text says. The induction
models and the bandwidth lesson's grid points the claims are about are kept trained in tests/lessons/models
(``induction_models``, read once per test session here, and ``icl_grid``, put in place for every test by
tests/conftest.py), shared by every test that reads them. A figure's data is computed once per test process for
each setting (``computed_once``): the sweeps of different claims meet at the same settings."""

import hashlib
import pickle

import pytest
import torch
from streamlit import config

from explorer.lessons.base import Spec
from explorer.ui.memory import Budget, Kept

config.set_option("runner.magicEnabled", False)

@pytest.fixture(autouse=True)
def trained_as_the_page_trains():
    """Every lesson test computes on as many CPU threads as the page's trainer (``trainer_threads``, one unless
    EXPLORER_TRAINER_THREADS says otherwise): the thread count changes how sums round, and over hundreds of training
    steps that moves the numbers the pages quote. Without it a plain ``pytest`` (all cores) and ``make test`` (one
    thread per worker) would check different models."""
    from explorer.device import torch_threads, trainer_threads

    with torch_threads(trainer_threads()):
        yield


# the server's cache (``explorer.ui.memory.Kept``: least recently used dropped first, arrays handed out as copies),
# on a byte budget of its own so that it neither takes from nor is emptied by the page runs' caches in this process
_COMPUTED = Kept("lesson tests' figure data", size=10_000, budget=Budget(256 * 2**20), copies=True)
_plain_data = Spec.data


def _data_once(spec: Spec) -> dict:
    """``Spec.data`` kept per (compute, inputs), keyed as ``explorer.ui.memory.memo`` keys (the inputs pickled);
    each test gets its own copy of the arrays (a test that wrote into one would otherwise change what the next
    reads). A figure that reads live state (``cached=False``) or inputs that cannot be pickled: computed each time."""
    key = None
    if spec.figure_def.cached:
        compute = spec.figure_def.compute
        try:
            key = hashlib.blake2b(pickle.dumps((compute.__module__, compute.__qualname__, sorted(spec.inputs.items())),
                                               protocol=pickle.HIGHEST_PROTOCOL), digest_size=16).digest()
        except (pickle.PicklingError, TypeError, AttributeError):
            pass
    return _COMPUTED.get(key, lambda: _plain_data(spec))


@pytest.fixture(autouse=True)
def computed_once(monkeypatch):
    """Every lesson test reads a figure's data through ``_data_once``."""
    monkeypatch.setattr(Spec, "data", _data_once)


@pytest.fixture(scope="session")
def induction_seeds():
    """The induction task at its defaults, at the seeds its claims are about (explorer/assets/induction_seeds.json,
    0-4): {seed: (untrained loss, trainer after 600 steps, the page's evaluation batch)}. The trained weights are the
    ones kept in tests/lessons/models (``induction_models``; one seed is retrained in every run and compared)."""
    from explorer.lessons.live_training import EVAL_SEED, EVAL_SIZE, INDUCTION_SEEDS
    from explorer.training import ablate
    from tests.lessons.induction_models import kept

    out = {}
    for seed in INDUCTION_SEEDS["seeds"]:
        trainer = kept(seed)
        batch = trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED))
        untrained = float(trainer.task.loss(ablate(trainer.initial_model(), batch.inputs, []), batch))
        out[seed] = (untrained, trainer, batch)
    return out
