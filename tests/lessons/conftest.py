"""Lesson tests build the data a figure shows at the page's defaults and check what its text says. The induction
models and the bandwidth lesson's grid points the claims are about are kept trained in tests/lessons/models
(``induction_models``, read once per test session here, and ``icl_grid``, put in place for every test by
tests/conftest.py), shared by every test that reads them."""

import pytest
import torch
from streamlit import config

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
