"""What a trainer records of each head: entropy, largest weight, previous-token and induction scores, and the
notices (a collapsed head, two duplicate heads) that the Live training page shows."""

from __future__ import annotations

import math

import torch

from ..attention import entropy
from .tasks import Batch, Task


def metric_key(kind: str, layer: int, head: int | None = None) -> str:
    """The name of a per-head metric in a trainer's history rows: ``entropy_l0_h1``, ``maxw_…``, ``prevtok_…``,
    ``induction_…``; per layer (``head`` None): ``headsim_l0``. The one place that spells it.

    Parameters
    ----------
    kind : str
    layer : int
    head : int, optional

    Returns
    -------
    str

    Examples
    --------
    >>> metric_key("entropy", 0, 1), metric_key("headsim", 2)
    ('entropy_l0_h1', 'headsim_l2')
    """
    return f"{kind}_l{layer}" if head is None else f"{kind}_l{layer}_h{head}"


def head_metrics(weights: list[torch.Tensor]) -> dict[str, float]:
    """Per layer l and head h: mean row entropy (nats) ``entropy_l{l}_h{h}``, mean max weight
    ``maxw_l{l}_h{h}``; per layer, the largest cosine similarity between two heads' maps ``headsim_l{l}``
    (1 = duplicates; NaN with one head).

    Parameters
    ----------
    weights : list of torch.Tensor
        Per layer, the (B, H, T, S) attention weights.

    Returns
    -------
    dict

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([[[[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [0.0, 1.0]]]])      # a uniform head, a sharp one
    >>> m = head_metrics([w])
    >>> round(m["entropy_l0_h0"], 4), m["entropy_l0_h1"], m["maxw_l0_h0"], m["maxw_l0_h1"]
    (0.6931, 0.0, 0.5, 1.0)
    """
    return head_metrics_steps([weights])[0]


def head_metrics_steps(steps: list[list[torch.Tensor]]) -> list[dict[str, float]]:
    """``head_metrics`` of several steps of one model and batch shape at once (one item per step), computed
    on the stacked weights with one host transfer per layer: the trainer records every step, and per-step
    small ops would cost a noticeable share of a step.

    Parameters
    ----------
    steps : list of list of torch.Tensor
        Per step, per layer, the (B, H, T, S) attention weights.

    Returns
    -------
    list of dict
        One ``head_metrics`` row per step.

    Examples
    --------
    >>> import torch
    >>> a, b = torch.full((1, 1, 2, 2), 0.5), torch.eye(2).reshape(1, 1, 2, 2)
    >>> head_metrics_steps([[a], [b]]) == [head_metrics([a]), head_metrics([b])]
    True
    """
    rows: list[dict[str, float]] = [{} for _ in steps]
    for layer in range(len(steps[0])):
        w = torch.stack([s[layer].detach().float() for s in steps])        # (K, B, H, T, S)
        k, n = w.shape[0], w.shape[2]
        ent = entropy(w).mean(dim=(1, 3))                                  # (K, H)
        maxw = w.amax(-1).mean(dim=(1, 3))                                 # (K, H)
        flat = torch.nn.functional.normalize(w.transpose(1, 2).reshape(k, n, -1), dim=-1)
        sim = flat @ flat.transpose(1, 2) - 2 * torch.eye(n, device=w.device)   # diagonal out of the max
        values = torch.cat([ent, maxw, sim.amax(dim=(1, 2))[:, None]], dim=1).tolist()
        for row, v in zip(rows, values, strict=True):
            for h in range(n):
                row[metric_key("entropy", layer, h)] = v[h]
                row[metric_key("maxw", layer, h)] = v[n + h]
            row[metric_key("headsim", layer)] = v[2 * n] if n > 1 else math.nan
    return rows


def head_scores_steps(steps: list[list[torch.Tensor]], batches: list) -> list[dict[str, float]]:
    """Per layer l and head h, for each step (weights and the batch they were computed on):

    ``prevtok_l{l}_h{h}``: the mean weight a query puts on the position just before it, over the
    batch's ``prev_rows`` (all t >= 1 when the task names none).
    ``induction_l{l}_h{h}``: the mean total weight a query at t puts on the positions j <= t right after
    an earlier occurrence of its own token (x[j-1] = x[t]), over the batch's ``ind_rows`` (default:
    every query whose token occurred before). NaN for feature inputs and where no query qualifies.

    Parameters
    ----------
    steps : list of list of torch.Tensor
        Per step, per layer, the (B, H, T, T) attention weights.
    batches : list of Batch
        The batch of each step.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> import torch
    >>> from explorer.training import Batch
    >>> tokens = torch.tensor([[1, 2, 3, 1]])
    >>> batch = Batch(tokens, tokens, torch.ones(1, 4, dtype=torch.bool))
    >>> previous = torch.eye(4).roll(-1, dims=1).tril()              # every query on the position before it
    >>> previous[0, 0] = 1.0
    >>> scores = head_scores_steps([[previous.reshape(1, 1, 4, 4)]], [batch])[0]
    >>> scores["prevtok_l0_h0"], scores["induction_l0_h0"]           # the last 1 would need weight on position 1
    (1.0, 0.0)
    """
    rows: list[dict[str, float]] = [{} for _ in steps]
    x = torch.stack([b.inputs for b in batches])                                  # (K, B, T) or (K, B, T, F)
    K, B, T = x.shape[:3]
    dev = steps[0][0].device
    tokens = x.dtype in (torch.int64, torch.int32)
    prev = torch.stack([b.prev_rows if b.prev_rows is not None else
                        torch.arange(T, device=dev).expand(B, T) >= 1 for b in batches])[..., 1:].float()
    if tokens:
        match = torch.zeros(K, B, T, T, dtype=torch.bool, device=dev)
        match[..., 1:] = x[..., :, None] == x[..., None, :-1]                     # x[j-1] == x[t]
        match &= torch.ones(T, T, dtype=torch.bool, device=dev).tril()            # j <= t
        ind_rows = torch.stack([b.ind_rows if b.ind_rows is not None else match[i].any(-1)
                                for i, b in enumerate(batches)]).float()           # (K, B, T)
    for layer in range(len(steps[0])):
        w = torch.stack([s[layer].detach().float() for s in steps])               # (K, B, H, T, T)
        H = w.shape[2]
        on_prev = w.diagonal(offset=-1, dim1=-2, dim2=-1)                          # (K, B, H, T-1): weight on t-1
        pt = (on_prev * prev[:, :, None]).sum((1, 3)) / prev.sum((1, 2))[:, None].clamp_min(1)   # (K, H)
        pt = torch.where(prev.sum((1, 2))[:, None] > 0, pt, torch.nan)
        if tokens:
            mass = (w * match[:, :, None]).sum(-1)                                  # (K, B, H, T)
            n = ind_rows.sum((1, 2))[:, None]
            ind = torch.where(n > 0, (mass * ind_rows[:, :, None]).sum((1, 3)) / n.clamp_min(1), torch.nan)
        else:
            ind = torch.full_like(pt, torch.nan)
        values = torch.cat([pt, ind], dim=1).tolist()
        for row, v in zip(rows, values, strict=True):
            for h in range(H):
                row[metric_key("prevtok", layer, h)] = v[h]
                row[metric_key("induction", layer, h)] = v[H + h]
    return rows


def head_scores(model, batch, temperature: float = 1.0) -> dict[str, float]:
    """``prevtok_l{l}_h{h}`` and ``induction_l{l}_h{h}`` of ``model`` on ``batch`` (a task's ``Batch``), as
    the trainer records them; the model is run in eval mode without gradients and left as it was.

    Parameters
    ----------
    model : TinyTransformer
    batch : Batch
    temperature : float

    Returns
    -------
    dict

    Examples
    --------
    >>> import torch
    >>> from explorer.training import Trainer
    >>> trainer = Trainer.for_task("induction", seed=0)
    >>> batch = trainer.task.batch(4, torch.Generator().manual_seed(0))
    >>> scores = head_scores(trainer.model, batch)
    >>> sorted(scores)[:2], all(0 <= v <= 1 for v in scores.values())
    (['induction_l0_h0', 'induction_l0_h1'], True)
    """
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        _, weights = model(batch.inputs, batch.attn_mask, temperature=temperature)
    model.train(was_training)
    return head_scores_steps([weights], [batch])[0]


def uniform_scores(task: Task, batch: Batch) -> dict[str, float]:
    """The baseline of every head score: ``prevtok`` and ``induction`` of uniform attention (each query spreads its
    weight evenly over the keys it may see: t + 1 of them in a causal task), on the same rows of ``batch`` and by
    the same formula as the heads' scores. A head's score means something only against this.

    Parameters
    ----------
    task : Task
    batch : Batch

    Returns
    -------
    dict
        ``prevtok`` and ``induction``.

    Examples
    --------
    >>> from explorer.training import make_task
    >>> import torch
    >>> task = make_task("reverse")                        # bidirectional, 12 positions: 1/12 on t - 1
    >>> round(uniform_scores(task, task.batch(4, torch.Generator().manual_seed(0)))["prevtok"], 4)
    0.0833
    """
    B, T = batch.inputs.shape[:2]
    allowed = torch.ones(T, T, dtype=torch.bool, device=batch.inputs.device)
    if task.causal:
        allowed = allowed.tril()
    if batch.attn_mask is not None:
        allowed = allowed & batch.attn_mask.to(torch.bool)
    w = allowed.float() / allowed.sum(-1, keepdim=True).clamp_min(1)
    w = w.expand(B, 1, T, T)
    row = head_scores_steps([[w]], [batch])[0]
    return {"prevtok": row[metric_key("prevtok", 0, 0)], "induction": row[metric_key("induction", 0, 0)]}


COLLAPSE_NATS, COLLAPSE_STEPS, DUPLICATE_SIM = 0.1, 50, 0.95
MOVED_FRACTION = 0.8          # a head has "moved away from uniform" below this share of the entropy ceiling


def head_warnings(history: list[dict], n_layers: int, n_heads: int, ceiling: float = math.inf) -> list[tuple]:
    """Heads worth a warning, from the metrics rows so far:

    ``("collapsed", layer, head)`` when a head's entropy stayed below ``COLLAPSE_NATS`` for the last
    ``COLLAPSE_STEPS`` steps (it attends to one position), and ``("duplicate", layer, similarity)`` when
    two heads of a layer have near-identical maps in the latest step (cosine above ``DUPLICATE_SIM``)
    and every head of the layer has moved away from uniform (mean entropy below ``MOVED_FRACTION`` of
    ``ceiling``, the entropy of uniform rows): near-uniform maps are near-identical for any untrained
    model, so they do not count.

    Parameters
    ----------
    history : list of dict
        A trainer's metrics rows.
    n_layers, n_heads : int
    ceiling : float
        The entropy of uniform rows (``Task.entropy_ceiling()``).

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> rows = [{"entropy_l0_h0": 0.01, "entropy_l0_h1": 1.2}] * COLLAPSE_STEPS
    >>> head_warnings(rows, n_layers=1, n_heads=2)
    [('collapsed', 0, 0)]
    """
    out: list[tuple] = []
    tail = history[-COLLAPSE_STEPS:]
    if len(tail) == COLLAPSE_STEPS:
        for layer in range(n_layers):
            for h in range(n_heads):
                if all(row[metric_key("entropy", layer, h)] < COLLAPSE_NATS for row in tail):
                    out.append(("collapsed", layer, h))
    if history:
        last = history[-1]
        for layer in range(n_layers):
            sim = last.get(metric_key("headsim", layer), math.nan)
            moved = all(last[metric_key("entropy", layer, h)] < MOVED_FRACTION * ceiling for h in range(n_heads))
            if math.isfinite(sim) and sim > DUPLICATE_SIM and moved:
                out.append(("duplicate", layer, sim))
    return out
