"""What a page reads of a model under training: its evaluation batch, uniform attention's scores, heads switched
off (ablation), its circuits, and the KV cache's agreement.

Each function reads the trainer under its lock (a training run may be mid-step in another thread) and keeps what
does not change between reruns in the trainer's own memo (``Trainer.memo``), so a page's code takes no lock and
keeps no cache of its own.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..bandwidth import select_bandwidth
from ..regression import nadaraya_watson
from .circuits import ablate, copying_score, head_importance, k_composition, ov_circuit, qk_circuit
from .heads import uniform_scores
from .model import generate

EVAL_SEED, EVAL_SIZE = 2024, 128        # one fixed evaluation batch per model (the page's tables and the tests)


def head_pair(name: str) -> tuple[int, int]:
    """A head's name ("l1h0") as (layer, head)."""
    layer, head = name[1:].split("h")
    return int(layer), int(head)


def heads(trainer) -> list[str]:
    """Every head of the model, by name ("l0h0", …)."""
    cfg = trainer.config
    return [f"l{layer}h{head}" for layer in range(cfg.n_layers) for head in range(cfg.n_heads)]


def eval_batch(trainer):
    """The model's fixed evaluation batch (the same tokens for every ablation and every step)."""
    return trainer.memo("eval_batch", lambda: trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED))
                        .to(trainer.device))


def uniform_baseline(trainer) -> dict:
    """Entropy, prevtok and induction of uniform attention on the evaluation batch: what the head scores of the
    table and the chart are to be read against."""
    def compute():
        scores = uniform_scores(trainer.task, eval_batch(trainer)) if not trainer.task.regression else \
            {"prevtok": math.nan, "induction": math.nan}
        return {"entropy": trainer.task.entropy_ceiling(), **scores}
    return trainer.memo("uniform", compute)


def _loss_and_accuracy(trainer, out, batch) -> tuple[float, float]:
    loss = float(trainer.task.loss(out, batch))
    acc = trainer.task.accuracy(out, batch)
    return loss, (math.nan if acc is None else float(acc))


def untrained_loss(trainer) -> float:
    """The evaluation loss before any training (the initial weights rebuilt from the seed), once per model."""
    batch = eval_batch(trainer)
    return trainer.memo("untrained", lambda: float(trainer.task.loss(
        ablate(trainer.initial_model(), batch.inputs, [], "zero", batch.attn_mask), batch)))


def head_importance_memo(trainer, how: str) -> dict:
    """Each head switched off in turn, recomputed only when the weights moved (a new step), the temperature or
    ``how`` changed: a rerun for another control does not pay for one forward pass per head again."""
    temp = trainer.temperature
    return trainer.memo("importance", lambda: head_importance(trainer.model, eval_batch(trainer), trainer.task.loss,
                                                              how, temp), trainer.step_count, temp, how)


def ablation(trainer, chosen: list[str], how: str) -> dict:
    """The evaluation loss and accuracy intact and with the ``chosen`` heads switched off (``how``); each head
    switched off in turn (recomputed only when the weights, the temperature or ``how`` changed); the loss before
    training; and, for a model of two layers or more with two heads or more, the loss with every head of the last
    layer off (``together``: do they cover for each other?). Evaluation only: the weights are never touched."""
    batch, cfg = eval_batch(trainer), trainer.config
    with trainer.lock:
        temp = trainer.temperature
        run = lambda pairs: _loss_and_accuracy(trainer, ablate(trainer.model, batch.inputs, pairs, how,  # noqa: E731
                                                                batch.attn_mask, temp), batch)
        out = {"intact": run([]), "off": run([head_pair(h) for h in chosen]),
               "importance": head_importance_memo(trainer, how),
               "untrained": untrained_loss(trainer), "together": None}
        if cfg.n_layers >= 2 and cfg.n_heads >= 2 and trainer.history:
            out["together"] = run([(cfg.n_layers - 1, h) for h in range(cfg.n_heads)])[0]
    return out


def composition(model, names: list[str]) -> dict:
    """K-composition of every layer-0 head (writing) with every layer-1 head (keys reading)."""
    return {(a, b): k_composition(model, head_pair(a), head_pair(b))
            for a in names for b in names if head_pair(a)[0] == 0 and head_pair(b)[0] == 1}


def circuits(trainer, head: str) -> dict:
    """What the weights say, read under the lock: the QK circuit of ``head``, every head's copying score (its OV
    circuit), the K-composition now and at initialisation (once per model: random weights compose too)."""
    names, (layer, number) = heads(trainer), head_pair(head)
    with trainer.lock:
        return {"qk": qk_circuit(trainer.model, layer, number),
                "copying": {h: copying_score(ov_circuit(trainer.model, *head_pair(h))) for h in names},
                "composition": composition(trainer.model, names),
                "at_init": trainer.memo("kcomp_init", lambda: composition(trainer.initial_model(), names))}


def kv_cache_gap(trainer) -> tuple[int, float] | None:
    """(tokens generated, largest logit difference) between generating with and without the KV cache from the
    example's first four tokens; None for a bidirectional model, which has no cache."""
    if not trainer.config.causal:
        return None
    with trainer.lock:
        prompt = trainer.example.inputs[:, :4]
        n_new = trainer.config.seq_len - 4
        _, with_cache = generate(trainer.model, prompt, n_new, use_cache=True)
        _, without = generate(trainer.model, prompt, n_new, use_cache=False)
    return n_new, float((with_cache - without).abs().max())


COVER_ALONE, COVER_TOGETHER = 0.25, 0.5     # cover: each alone < 25 %, all together > 50 % of the gap


def cover(alone: list[float], together: float, gap: float) -> dict:
    """Whether a layer's heads cover for each other: each switched off alone raises the loss by less than
    ``COVER_ALONE`` of the untrained-to-trained ``gap``, all together by more than ``COVER_TOGETHER`` of it."""
    alone_share = max(alone) / gap if gap > 0 else math.nan
    together_share = together / gap if gap > 0 else math.nan
    return {"alone": alone_share, "together": together_share,
            "covers": bool(alone_share < COVER_ALONE and together_share > COVER_TOGETHER)}


def icl_view(example: dict, maps: list[np.ndarray]) -> dict:
    """The sine_icl example as the page draws it: queries (rows) and context points (columns) each sorted by
    x, so a head that weights nearby x draws a diagonal band as in the NW heatmap; NW's estimate at the
    queries from the same context, with h chosen by leave-one-out on the context; both errors."""
    feats = np.asarray(example["inputs"])
    x = feats[:, 0] * 3
    y = np.asarray(example["targets"], dtype=float)
    is_query = np.asarray(example["loss_mask"], dtype=bool)
    ctx, qry = np.flatnonzero(~is_query), np.flatnonzero(is_query)
    ctx, qry = ctx[np.argsort(x[ctx])], qry[np.argsort(x[qry])]
    sub = [m[:, qry][:, :, ctx] for m in maps]                           # (H, queries, context) per layer
    h = select_bandwidth(x[ctx], y[ctx], "gaussian")
    nw = nadaraya_watson(torch.as_tensor(x[qry]), torch.as_tensor(x[ctx]), torch.as_tensor(y[ctx]), "gaussian",
                         h).numpy()
    pred = np.asarray(example["prediction"], dtype=float)
    order = np.argsort(np.argsort(x[is_query]))     # icl_figure draws queries in position order
    return {"maps": sub, "x": x, "y": y, "is_query": is_query, "prediction": pred,
            "nw_prediction": nw[order], "h": h, "x_query": x[qry], "x_context": x[ctx],
            "mse": float(np.mean((pred[qry] - y[qry]) ** 2)), "nw_mse": float(np.mean((nw - y[qry]) ** 2))}


def local_distances(view) -> dict:
    """In-context regression's maps (``icl_view``): |x_query − x_context| averaged with each head's weights (the best
    head's, ``near``) and with uniform weights (``uniform``)."""
    d = np.abs(np.asarray(view["x_query"])[:, None] - np.asarray(view["x_context"])[None, :])
    heads = [w for layer in view["maps"] for w in layer]
    near = min(float(((w / w.sum(-1, keepdims=True)) * d).sum(-1).mean()) for w in heads)
    return {"near": near, "uniform": float(d.mean())}
