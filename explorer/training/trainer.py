"""Training loop with per-head attention metrics, schedules, and a stop on non-finite loss."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .._checks import integer_in, one_of, positive_number
from ..attention import entropy
from ..device import get_device
from ..i18n import Message
from .model import ModelConfig, TinyTransformer
from .tasks import Batch, Task, held_out_example, make_task

SCHEDULES = ("constant", "cosine")
TEMPERATURE_SCHEDULES = ("constant", "linear", "cosine")
MAX_LR = 10.0


@dataclass(frozen=True)
class TemperatureSchedule:
    kind: str = "constant"
    start: float = 1.0
    end: float = 1.0

    def __post_init__(self):
        one_of(self.kind, TEMPERATURE_SCHEDULES, "temperature schedule")
        positive_number(self.start, "start temperature", upper=100.0)
        positive_number(self.end, "end temperature", upper=100.0)

    def at(self, step: int, total: int) -> float:
        """Temperature multiplier at ``step`` of ``total`` (held at the end value afterwards)."""
        if self.kind == "constant":
            return self.start
        frac = min(1.0, step / max(1, total))
        if self.kind == "linear":
            return self.start + (self.end - self.start) * frac
        return self.end + (self.start - self.end) * 0.5 * (1 + math.cos(math.pi * frac))


def learning_rate(step: int, base_lr: float, warmup: int, total: int, schedule: str) -> float:
    """Linear warmup over ``warmup`` steps, then constant or cosine decay to 10 % of base_lr at ``total``."""
    if warmup and step < warmup:
        return base_lr * (step + 1) / warmup
    if schedule == "constant":
        return base_lr
    frac = min(1.0, (step - warmup) / max(1, total - warmup))
    return base_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def metric_key(kind: str, layer: int, head: int | None = None) -> str:
    """The name of a per-head metric in a trainer's history rows: ``entropy_l0_h1``, ``maxw_…``, ``prevtok_…``,
    ``induction_…``; per layer (``head`` None): ``headsim_l0``. The one place that spells it.

    >>> metric_key("entropy", 0, 1), metric_key("headsim", 2)
    ('entropy_l0_h1', 'headsim_l2')
    """
    return f"{kind}_l{layer}" if head is None else f"{kind}_l{layer}_h{head}"


def head_metrics(weights: list[torch.Tensor]) -> dict[str, float]:
    """Per layer l and head h: mean row entropy (nats) ``entropy_l{l}_h{h}``, mean max weight
    ``maxw_l{l}_h{h}``; per layer, the largest cosine similarity between two heads' maps ``headsim_l{l}``
    (1 = duplicates; NaN with one head). ``weights``: per layer, the (B, H, T, S) attention weights."""
    return head_metrics_steps([weights])[0]


def head_metrics_steps(steps: list[list[torch.Tensor]]) -> list[dict[str, float]]:
    """``head_metrics`` of several steps of one model and batch shape at once (one item per step), computed
    on the stacked weights with one host transfer per layer: the trainer records every step, and per-step
    small ops would cost a noticeable share of a step."""
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
    the trainer records them; the model is run in eval mode without gradients and left as it was."""
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
DIVERGE_FACTOR, DIVERGE_STEPS = 2.0, 20    # loss above twice its starting level for 20 steps in a row


def head_warnings(history: list[dict], n_layers: int, n_heads: int, ceiling: float = math.inf) -> list[tuple]:
    """Heads worth a warning, from the metrics rows so far:

    ``("collapsed", layer, head)`` when a head's entropy stayed below ``COLLAPSE_NATS`` for the last
    ``COLLAPSE_STEPS`` steps (it attends to one position), and ``("duplicate", layer, similarity)`` when
    two heads of a layer have near-identical maps in the latest step (cosine above ``DUPLICATE_SIM``)
    and every head of the layer has moved away from uniform (mean entropy below ``MOVED_FRACTION`` of
    ``ceiling``, the entropy of uniform rows): near-uniform maps are near-identical for any untrained
    model, so they do not count.
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


def diverged(history: list[dict]) -> bool:
    """True when the loss has stayed above ``DIVERGE_FACTOR`` times its starting level (the first step's
    loss, taken before any update) for the last ``DIVERGE_STEPS`` steps: the run is blowing up, even if
    every number is still finite."""
    if len(history) < 1 + DIVERGE_STEPS:
        return False
    return all(r["loss"] > DIVERGE_FACTOR * history[0]["loss"] for r in history[-DIVERGE_STEPS:])


class Trainer:
    """Trains a ``TinyTransformer`` on a task, one metrics row per step.

    AdamW with warmup + constant/cosine learning rate; the attention temperature multiplier follows
    ``temperature_schedule``. Seeded and deterministic on CPU. A non-finite loss or gradient stops
    training before the update (the weights stay at the last good step) and sets ``stopped``.
    """

    METRICS_BATCH_CELLS = 4_000_000     # attention weights held back for one batched head-metrics pass

    def __init__(self, config: ModelConfig, task: Task, lr: float = 3e-3, warmup: int = 20,
                 schedule: str = "cosine", temperature_schedule: TemperatureSchedule | None = None,
                 seed: int = 0, device: str | torch.device | None = None, batch_size: int = 32,
                 total_steps: int = 1000):
        one_of(schedule, SCHEDULES, "schedule")
        self.config, self.task, self.schedule = config, task, schedule
        self.lr = positive_number(lr, "lr", upper=1e4)
        self.warmup = integer_in(warmup, "warmup", 0, 100_000)
        self.total_steps = integer_in(total_steps, "total_steps", 1, 1_000_000)
        self.batch_size = integer_in(batch_size, "batch_size", 1, 4096)
        self.seed = integer_in(seed, "seed", 0, 2**31 - 1)
        self.temperature_schedule = temperature_schedule or TemperatureSchedule("constant", 1.0, 1.0)
        self.device = get_device() if device is None else torch.device(device)
        self.model = self.initial_model()
        self.data_gen = torch.Generator().manual_seed(self.seed + 1)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.01)
        self.step_count = 0
        self.history: list[dict] = []          # every metrics row so far, in order
        self.stopped: Message | None = None     # why training stopped (a sentence for the user), or None
        self.example = held_out_example(task).to(self.device)
        # Held while training or reading the model: a dashboard may run two script runs of one session at
        # once (a timed refresh still training when a rerun starts), and they must not interleave.
        self.lock = threading.RLock()
        self._memo: dict = {}

    @classmethod
    def for_task(cls, task: Task | str, seed: int = 0, device: str | torch.device | None = None,
                 **overrides) -> Trainer:
        """A trainer with the task's own defaults (``task.defaults``: model size, sequence length, lr,
        warmup); ``overrides`` may set any of ``n_layers``, ``n_heads``, ``d_model``, ``with_mlp``, ``position``,
        ``seq_len``, ``lr``, ``warmup`` and the other ``Trainer`` arguments."""
        if isinstance(task, str):
            task = make_task(task, overrides.pop("seq_len", None))
        else:
            overrides.pop("seq_len", None)
        model_keys = ("n_layers", "n_heads", "d_model", "with_mlp", "position")
        cfg = task.model_config(**{k: overrides.pop(k) for k in model_keys if k in overrides})
        d = task.defaults
        return cls(cfg, task, lr=overrides.pop("lr", d.lr), warmup=overrides.pop("warmup", d.warmup), seed=seed,
                   device=device, **overrides)

    def memo(self, name: str, compute: Callable[[], Any], *depends) -> Any:
        """``compute()``, once per value of ``depends`` (e.g. the step count): what a page reads of this model
        between reruns without recomputing it (the evaluation batch, the loss before training)."""
        with self.lock:
            held = self._memo.get(name)
            if held is None or held[0] != depends:
                held = self._memo[name] = (depends, compute())
            return held[1]

    def initial_model(self) -> TinyTransformer:
        """A new model with the weights this trainer started from (they follow from its config and seed)."""
        gen = torch.Generator().manual_seed(self.seed)
        return TinyTransformer(self.config).init_weights(gen).to(self.device)

    # -- settings that may change between steps (the weights are kept)
    def set_lr(self, lr: float, warmup: int | None = None, schedule: str | None = None) -> None:
        """Change the learning rate (and warmup/schedule). A new learning rate clears a stop caused by a
        non-finite loss: the weights are those of the last good step, so training can go on."""
        lr = positive_number(lr, "lr", upper=1e4)
        warmup = self.warmup if warmup is None else integer_in(warmup, "warmup", 0, 100_000)
        schedule = self.schedule if schedule is None else schedule
        one_of(schedule, SCHEDULES, "schedule")
        with self.lock:
            if lr != self.lr and self.stopped and self.stopped.key != "train.stopped_diverged":
                self.stopped = None        # the weights are the last good step's: training can go on
            self.lr, self.warmup, self.schedule = lr, warmup, schedule

    def set_temperature_schedule(self, schedule: TemperatureSchedule) -> None:
        with self.lock:
            self.temperature_schedule = schedule

    def step(self, n: int = 1) -> list[dict]:
        """Advance up to ``n`` steps; return one metrics row per step taken."""
        n = integer_in(n, "n", 1, 1_000_000)
        with self.lock:
            return self._advance(n)

    def _advance(self, n: int) -> list[dict]:
        rows: list[dict] = []
        pending: list[tuple[dict, list[torch.Tensor], Batch]] = []   # (row, weights, batch): head metrics due
        held = 0                                    # how many weights ``pending`` holds
        self.model.train()
        try:
            for _ in range(n):
                if self.stopped:
                    break
                s = self.step_count
                lr = learning_rate(s, self.lr, self.warmup, self.total_steps, self.schedule)
                temp = self.temperature_schedule.at(s, self.total_steps)
                for group in self.opt.param_groups:
                    group["lr"] = lr
                batch = self.task.batch(self.batch_size, self.data_gen).to(self.device)
                out, weights = self.model(batch.inputs, batch.attn_mask, temperature=temp)
                loss = self.task.loss(out, batch)
                if not torch.isfinite(loss):
                    self.stopped = Message("train.stopped_loss", step=s, value=loss.item(), lr=self.lr)
                    break
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                if not torch.isfinite(grad_norm):
                    self.stopped = Message("train.stopped_grad", step=s, lr=self.lr)
                    break
                self.opt.step()
                acc = self.task.accuracy(out.detach(), batch)
                row = {"step": s, "loss": float(loss.detach()), "accuracy": math.nan if acc is None else acc,
                       "lr": lr, "temperature": temp}
                pending.append((row, [w.detach() for w in weights], batch))
                rows.append(row)
                self.step_count += 1
                held += sum(w.numel() for w in weights)
                if held > self.METRICS_BATCH_CELLS:
                    self._add_head_metrics(pending)
                    held = 0
                if diverged(self.history + rows):
                    self.stopped = Message("train.stopped_diverged", step=s, value=row['loss'],
                                           start=(self.history + rows)[0]['loss'],
                                           lr=self.lr)
                    break
        finally:     # steps taken before an interruption (Ctrl-C in the CLI, an error) still land in history
            self._add_head_metrics(pending)
            self.history.extend(rows)
        return rows

    @staticmethod
    def _add_head_metrics(pending: list[tuple[dict, list[torch.Tensor], Batch]]) -> None:
        """Fill in the head metrics of each pending row from its step's weights, then empty ``pending``."""
        if pending:
            weights = [w for _, w, _ in pending]
            metrics = head_metrics_steps(weights)
            scores = head_scores_steps(weights, [b for _, _, b in pending])
            for (row, _, _), m, sc in zip(pending, metrics, scores, strict=True):
                row.update(m)
                row.update(sc)
            pending.clear()

    @property
    def temperature(self) -> float:
        """The attention temperature the schedule sets at the current step."""
        return self.temperature_schedule.at(self.step_count, self.total_steps)

    def schedules(self, every: int = 5) -> dict[str, list]:
        """The learning rate and the temperature multiplier at every ``every``-th step from 0 to
        ``total_steps`` (after which both hold their last value), for drawing."""
        steps = list(range(0, self.total_steps + 1, every))
        return {"step": steps,
                "lr": [learning_rate(k, self.lr, self.warmup, self.total_steps, self.schedule) for k in steps],
                "temperature": [self.temperature_schedule.at(k, self.total_steps) for k in steps]}

    @torch.inference_mode()
    def attention_maps(self) -> list[torch.Tensor]:
        """Per layer, the (H, T, T) weights on the fixed held-out example, at the current temperature."""
        with self.lock:
            self.model.eval()
            _, weights = self.model(self.example.inputs, self.example.attn_mask, temperature=self.temperature)
        return [w[0].cpu() for w in weights]

    @torch.inference_mode()
    def example_predictions(self) -> dict[str, torch.Tensor]:
        """Inputs, targets, loss mask and the model's output on the held-out example (batch of 1)."""
        with self.lock:
            self.model.eval()
            out, _ = self.model(self.example.inputs, self.example.attn_mask, temperature=self.temperature)
        pred = out[0, :, 0] if self.task.regression else out[0].argmax(-1)
        return {"inputs": self.example.inputs[0].cpu(), "targets": self.example.targets[0].cpu(),
                "loss_mask": self.example.loss_mask[0].cpu(), "prediction": pred.cpu()}
