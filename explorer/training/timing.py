"""Timing helpers for the KV-cache lesson: how long generating a token takes with and without the cache."""

from __future__ import annotations

import math
import time

import torch

from .._checks import integer_in
from .model import ModelConfig, TinyTransformer, generate


def cache_timing(lengths, d_model: int = 64, n_layers: int = 2, n_heads: int = 4, seed: int = 0, repeats: int = 3):
    """Milliseconds per generated token, with and without the KV cache, for each total length.

    A randomly initialised causal model decodes from a 1-token prompt up to each length; the best of
    ``repeats`` runs is kept. Returns rows of (length, ms_per_token_cache, ms_per_token_no_cache,
    max_abs_logit_diff).
    """
    lengths = [integer_in(n, "length", 2, 1024) for n in lengths]
    cfg = ModelConfig(vocab=32, seq_len=max(lengths), n_layers=n_layers, n_heads=n_heads, d_model=d_model,
                      causal=True)
    model = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(seed)).eval()
    prompt = torch.randint(0, 32, (1, 1), generator=torch.Generator().manual_seed(seed))
    generate(model, prompt, min(lengths) - 1, True)              # warm-up: first calls are slower
    best: dict[tuple[int, bool], float] = {}
    logits: dict[tuple[int, bool], torch.Tensor] = {}
    for _ in range(repeats):                # repeats outermost: a burst of load hits every length alike
        for n in lengths:
            for use_cache in (True, False):
                t0 = time.perf_counter()
                _, logits[n, use_cache] = generate(model, prompt, n - 1, use_cache)
                dt = (time.perf_counter() - t0) * 1000 / (n - 1)
                best[n, use_cache] = min(dt, best.get((n, use_cache), math.inf))
    rows = [(n, best[n, True], best[n, False], float((logits[n, True] - logits[n, False]).abs().max()))
            for n in lengths]
    return rows
