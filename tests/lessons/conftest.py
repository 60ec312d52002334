"""Lesson tests build the data a figure shows at the page's defaults and check what its text says. The induction
models and the bandwidth lesson's grid points the claims are about are kept trained in tests/lessons/models
(``induction_models``, read once per test session here, and ``icl_grid``, put in place for every test by
tests/conftest.py), shared by every test that reads them. A figure's data is computed once per test process for
each setting (``computed_once``): the sweeps of different claims meet at the same settings."""

import hashlib
from collections import OrderedDict

import numpy as np
import pytest
import torch
from streamlit import config

from explorer.lessons.base import Spec

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


CACHE_BYTES = 256 * 2**20
_COMPUTED: OrderedDict = OrderedDict()           # key -> (data, its arrays' bytes), the oldest first
_plain_data = Spec.data


def _key(value):
    """A hashable stand-in for a compute input (an array by its shape, type and bytes); None for anything else,
    which is then computed each time."""
    if isinstance(value, (bool, int, float, str, type(None))):
        return type(value).__name__, value
    if isinstance(value, np.ndarray):
        return "array", value.shape, value.dtype.str, hashlib.blake2b(np.ascontiguousarray(value).tobytes()).digest()
    if isinstance(value, (list, tuple)):
        parts = [_key(v) for v in value]
        return None if None in parts else (type(value).__name__, *parts)
    if isinstance(value, dict):
        parts = [(k, _key(v)) for k, v in sorted(value.items())]
        return None if any(v is None for _, v in parts) else ("dict", *parts)
    return None


def _copy(value):
    """``value`` with every array in it (in dicts, lists and tuples too) copied."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_copy(v) for v in value)
    return value


def _nbytes(value) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    return 0


def _data_once(spec: Spec) -> dict:
    """``Spec.data`` kept per (compute, inputs), as the server's cache keeps it (``explorer.ui.cache.spec_data``);
    each test gets its own copy of the arrays (a test that wrote into one would otherwise change what the next
    reads); at most CACHE_BYTES of arrays, the oldest dropped first."""
    key = _key(dict(spec.inputs)) if spec.figure_def.cached else None
    if key is None:
        return _plain_data(spec)
    key = (spec.figure_def.compute.__module__, spec.figure_def.compute.__qualname__, key)
    if key in _COMPUTED:
        _COMPUTED.move_to_end(key)
        return _copy(_COMPUTED[key][0])
    data = _plain_data(spec)
    _COMPUTED[key] = (data, _nbytes(data))
    while sum(kept for _, kept in _COMPUTED.values()) > CACHE_BYTES:
        _COMPUTED.popitem(last=False)
    return _copy(data)


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
