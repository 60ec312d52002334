"""Lesson tests build the data a figure shows at the page's defaults and check what its text says. Models that take
training to check are trained once per test session here and shared by every test that reads them."""

import pytest
import torch
from streamlit import config

config.set_option("runner.magicEnabled", False)

INDUCTION_STEPS = 600          # the page's claims about the induction task are about models trained this far


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
    0-4): {seed: (untrained loss, trainer after 600 steps, the page's evaluation batch)}, trained on as many CPU
    threads as the page's trainer uses (``trainer_threads``: the thread count changes how sums round, and the page
    quotes these models). About 40 s, once per session."""
    from explorer.device import torch_threads, trainer_threads
    from explorer.lessons.live_training import EVAL_SEED, EVAL_SIZE, INDUCTION_SEEDS
    from explorer.training import Trainer, ablate

    out = {}
    with torch_threads(trainer_threads()):
        for seed in INDUCTION_SEEDS["seeds"]:
            trainer = Trainer.for_task("induction", seed=seed)
            batch = trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED))
            untrained = float(trainer.task.loss(ablate(trainer.initial_model(), batch.inputs, []), batch))
            trainer.step(INDUCTION_STEPS)
            out[seed] = (untrained, trainer, batch)
    return out
