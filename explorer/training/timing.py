"""The KV-cache lesson's numbers: the work of generating a token with and without the cache, counted (FLOPs,
deterministic) and timed on this machine (on demand, repeated until stable)."""

from __future__ import annotations

import math
import time

import torch

from .._checks import integer_in
from .model import ModelConfig, TinyTransformer

VOCAB = 32


def _model(lengths, d_model: int, n_layers: int, n_heads: int, seed: int) -> TinyTransformer:
    cfg = ModelConfig(vocab=VOCAB, seq_len=max(lengths), n_layers=n_layers, n_heads=n_heads, d_model=d_model,
                      causal=True)
    return TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(seed)).eval()


def generation_flops(lengths, d_model: int = 64, n_layers: int = 2) -> list[dict]:
    """The floating-point operations of the forward pass that generates the token at position S, for each S in
    ``lengths``, in the causal model ``cache_timing`` times (no MLP, a vocabulary of ``VOCAB``): with the KV cache
    (the newest token only, attending over S cached keys) and without it (all S positions recomputed). Each is split
    into the attention part (query-key scores and weights times values, the batched matrix products) and the rest
    (the q/k/v and output projections and the output head). From the layers' shapes, with C = d_model and L layers:
    attention 4·S·C·L with the cache and 4·S²·C·L without; the rest 2·(4·C²·L + C·VOCAB) per position computed (1
    with the cache, S without). These are the counts torch's ``FlopCounterMode`` makes on the model itself
    (tests/unit/test_training.py), written out because entering that counter imports torch's compiler (3.5 s of CPU
    in a process that had not); the same at every seed and on every machine. The number of heads does not change
    them.

    Returns one dict per S: ``length``, ``cache_attention``, ``cache_other``, ``no_cache_attention``,
    ``no_cache_other`` (FLOPs; a multiply-add counts as 2).

    >>> row = generation_flops([32], d_model=64, n_layers=2)[0]
    >>> row["cache_attention"] == 2 * 4 * 32 * 64, row["no_cache_attention"] == 2 * 4 * 32 * 32 * 64
    (True, True)
    """
    lengths = [integer_in(n, "length", 2, 1024) for n in lengths]
    c = integer_in(d_model, "d_model", 1, 4096)
    layers = integer_in(n_layers, "n_layers", 1, 64)
    per_position = 2 * (4 * c * c * layers + c * VOCAB)
    return [{"length": s, "cache_attention": 4 * s * c * layers, "cache_other": per_position,
             "no_cache_attention": 4 * s * s * c * layers, "no_cache_other": s * per_position} for s in lengths]


def cache_timing(lengths, d_model: int = 64, n_layers: int = 2, n_heads: int = 4, seed: int = 0,
                 max_rounds: int = 9, rel_tol: float = 0.05, repeats: int = 5, clock=time.perf_counter) -> dict:
    """Milliseconds of the step that generates the token at position S, with and without the KV cache, for each S
    in ``lengths``, measured on this machine until the numbers settle.

    The step is the one ``generation_flops`` counts, on the same randomly initialised causal model: with the cache,
    the newest token alone, its keys and values added to the S - 1 cached ones; without it, all S positions
    recomputed. Each length's cache is filled once, untimed, and every cached step starts from a copy of it. Every
    round times each (length, cache) once, as the mean of ``repeats`` steps, lengths interleaved so a burst of load
    hits all alike; each keeps its best time. From the third round on, the timings are ``stable`` when a round
    lowered no best time by more than ``rel_tol``; after ``max_rounds`` rounds they are reported as they are,
    ``stable`` False. ``spread``: the largest ratio, over the points, of a point's median time to its best, minus 1
    (how much the machine's load moved the runs).

    Returns ``{"rows": [(length, ms_cache, ms_no_cache, max_abs_logit_diff)], "stable", "rounds", "spread"}``; the
    logit difference compares the two steps' predictions for the next token.
    """
    lengths = [integer_in(n, "length", 2, 1024) for n in lengths]
    repeats = integer_in(repeats, "repeats", 1, 1000)
    model = _model(lengths, d_model, n_layers, n_heads, seed)
    tokens = torch.randint(0, VOCAB, (1, max(lengths)), generator=torch.Generator().manual_seed(seed))
    with torch.inference_mode():
        filled = {}
        for n in lengths:
            filled[n] = [{} for _ in model.blocks]
            model(tokens[:, :n - 1], kv_caches=filled[n])              # the cache holds the first S - 1 tokens

        def step(n: int, use_cache: bool) -> torch.Tensor:
            if use_cache:
                out, _ = model(tokens[:, n - 1:n], kv_caches=[dict(c) for c in filled[n]], start_pos=n - 1)
            else:
                out, _ = model(tokens[:, :n])
            return out[:, -1]

        for n in lengths:                                    # warm-up: first calls are slower
            step(n, True), step(n, False)
        runs: dict[tuple[int, bool], list[float]] = {(n, c): [] for n in lengths for c in (True, False)}
        logits: dict[tuple[int, bool], torch.Tensor] = {}
        stable, rounds = False, 0
        while rounds < max_rounds and not stable:
            before = {k: min(v, default=math.inf) for k, v in runs.items()}
            for n in lengths:
                for use_cache in (True, False):
                    t0 = clock()
                    for _ in range(repeats):
                        logits[n, use_cache] = step(n, use_cache)
                    runs[n, use_cache].append((clock() - t0) * 1000 / repeats)
            rounds += 1
            stable = rounds >= 3 and all(min(v) >= before[k] * (1 - rel_tol) for k, v in runs.items())
    spread = max(sorted(v)[len(v) // 2] / min(v) - 1 for v in runs.values())
    rows = [(n, min(runs[n, True]), min(runs[n, False]), float((logits[n, True] - logits[n, False]).abs().max()))
            for n in lengths]
    return {"rows": rows, "stable": stable, "rounds": rounds, "spread": spread}


def kv_summary(rows) -> dict:
    """How much slower a token got from the shortest to the longest length, with and without the cache."""
    first, last = rows[0], rows[-1]
    return {"s0": first[0], "s1": last[0], "growth": last[0] / first[0],
            "cache_ratio": last[1] / first[1], "no_cache_ratio": last[2] / first[2]}


def kv_timing_agrees(timing: dict) -> bool:
    """Whether a timing run can be read as the lesson reads it: it settled, and at the longest length a token with
    the cache took less time than one without (what the FLOP counts say it must, bar noise)."""
    last = timing["rows"][-1]
    return bool(timing["stable"] and last[1] < last[2])


def kv_flops_summary(rows) -> dict:
    """What the FLOP caption quotes: from the shortest to the longest S, how many times the attention work per
    token grew with and without the cache, and how many times more work a token takes without it at the longest."""
    first, last = rows[0], rows[-1]
    total = lambda r, k: r[f"{k}_attention"] + r[f"{k}_other"]          # noqa: E731
    return {"s0": first["length"], "s1": last["length"], "growth": last['length'] / first['length'],
            "cache_ratio": last['cache_attention'] / first['cache_attention'],
            "no_cache_ratio": last['no_cache_attention'] / first['no_cache_attention'],
            "saving": total(last, 'no_cache') / total(last, 'cache')}
