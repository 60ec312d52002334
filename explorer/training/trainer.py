"""Training loop with per-head attention metrics, schedules, and a stop on non-finite loss."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from .._adam import adamw
from .._checks import integer_in, one_of, positive_number
from ..device import resolve_device
from ..i18n import Message
from .heads import head_metrics_steps, head_scores_steps
from .model import ModelConfig, TinyTransformer
from .saved import load as load_trainer
from .saved import save as save_trainer
from .schedule import SCHEDULES, TEMPERATURE_SCHEDULES, TemperatureSchedule, diverged, learning_rate
from .tasks import Batch, Task, held_out_example, make_task

__all__ = ["SCHEDULES", "TEMPERATURE_SCHEDULES", "TemperatureSchedule", "Trainer", "diverged", "learning_rate"]


class Trainer:
    """Trains a ``TinyTransformer`` on a task, one metrics row per step.

    AdamW with warmup + constant/cosine learning rate; the attention temperature multiplier follows
    ``temperature_schedule``. Seeded and deterministic on CPU. A non-finite loss or gradient stops
    training before the update (the weights stay at the last good step) and sets ``stopped``.

    ``trainer.model`` is the ``TinyTransformer`` being trained, ``trainer.history`` every metrics row so far (a
    list of dicts: ``step``, ``loss``, ``accuracy``, ``lr``, ``temperature`` and the per-head metrics of
    ``metric_key``), ``trainer.attention_maps()`` each layer's (H, T, T) weights on a fixed held-out example.
    ``Trainer.for_task(name, seed, **overrides)`` builds one with a task's own defaults.

    Parameters
    ----------
    config : ModelConfig
    task : Task
    lr : float
        Peak learning rate, > 0 and at most 1e4 (a rate that makes the loss non-finite stops training).
    warmup : int
        Steps of linear warmup.
    schedule : {"constant", "cosine"}
    temperature_schedule : TemperatureSchedule, optional
    seed : int
        Seeds the weights and the data.
    device : str or torch.device, optional
        By default ``explorer.device.get_device()``; one that is not available here raises ``ValueError`` naming the
        devices there are.
    batch_size : int
    total_steps : int
        The length of the cosine schedule.

    Examples
    --------
    >>> trainer = Trainer.for_task("reverse", seed=0)
    >>> rows = trainer.step(3)
    >>> [row["step"] for row in rows], sorted(rows[0])[:3]
    ([0, 1, 2], ['accuracy', 'entropy_l0_h0', 'entropy_l0_h1'])
    >>> len(trainer.history), trainer.stopped is None
    (3, True)
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
        self.device = resolve_device(device)
        self.model = self.initial_model()
        self.data_gen = torch.Generator().manual_seed(self.seed + 1)
        self.opt = adamw(self.model.parameters(), lr=self.lr, weight_decay=0.01)
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
        """A trainer with the task's own defaults (``task.defaults``: model size, sequence length, lr, warmup).

        Parameters
        ----------
        task : Task or str
            A task, or its name: "reverse", "induction", "sort", "sine_icl".
        seed : int
            Seeds the weights and the data.
        device : str or torch.device, optional
            As in ``Trainer``.
        **overrides
            Any of ``n_layers``, ``n_heads``, ``d_model``, ``with_mlp``, ``position`` (the model), ``seq_len`` (the
            task, when given by name) and ``lr``, ``warmup``, ``schedule``, ``temperature_schedule``,
            ``batch_size``, ``total_steps`` (the trainer).

        Returns
        -------
        Trainer

        Examples
        --------
        >>> trainer = Trainer.for_task("induction", seed=1, n_heads=4, position="alibi")
        >>> trainer.config.n_layers, trainer.config.n_heads, trainer.config.position, trainer.lr
        (2, 4, 'alibi', 0.001)
        """
        if isinstance(task, str):
            task = make_task(task, overrides.pop("seq_len", None))
        else:
            overrides.pop("seq_len", None)
        model_keys = ("n_layers", "n_heads", "d_model", "with_mlp", "position")
        cfg = task.model_config(**{k: overrides.pop(k) for k in model_keys if k in overrides})
        d = task.defaults
        return cls(cfg, task, lr=overrides.pop("lr", d.lr), warmup=overrides.pop("warmup", d.warmup), seed=seed,
                   device=device, **overrides)

    def save(self, path) -> Path:
        """Write this trainer to ``path``: its weights, optimiser state, data generator, settings and metrics history,
        in one safetensors file (``explorer.training.saved``); ``Trainer.load`` brings it back.

        Parameters
        ----------
        path : str or pathlib.Path

        Returns
        -------
        pathlib.Path
            The file written.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> trainer = Trainer.for_task("reverse", seed=0)
        >>> _ = trainer.step(2)
        >>> path = trainer.save(pathlib.Path(tempfile.mkdtemp()) / "reverse.safetensors")
        >>> again = Trainer.load(path)
        >>> again.step_count, again.config == trainer.config, len(again.history)
        (2, True, 2)
        """
        with self.lock:
            return save_trainer(self, path)

    @classmethod
    def load(cls, path, device: str | torch.device | None = None) -> Trainer:
        """The trainer ``Trainer.save`` wrote to ``path``, ready to train on from the step it was saved at (the
        same batches and updates as if it had never stopped). The file is read with safetensors: it holds tensors
        and text only, and loading it runs no code from it. A file that is not a saved trainer, or whose weights do
        not fit its settings, raises ``ValueError`` with a sentence.

        Parameters
        ----------
        path : str or pathlib.Path
        device : str or torch.device, optional
            Where to put the model; by default ``explorer.device.get_device()``.

        Returns
        -------
        Trainer

        Examples
        --------
        >>> import tempfile, pathlib
        >>> path = Trainer.for_task("sort", seed=1).save(pathlib.Path(tempfile.mkdtemp()) / "sort.safetensors")
        >>> Trainer.load(path).task.name
        'sort'
        """
        return load_trainer(cls, path, device=device)

    def memo(self, name: str, compute: Callable[[], Any], *depends) -> Any:
        """``compute()``, once per value of ``depends`` (e.g. the step count): what a page reads of this model
        between reruns without recomputing it (the evaluation batch, the loss before training).

        Parameters
        ----------
        name : str
            What is kept; one value per name.
        compute : callable
            Called with no arguments when ``depends`` changed since the last call under ``name``.
        *depends
            The values the result depends on.

        Returns
        -------
        object
            What ``compute`` returned, now or earlier.

        Examples
        --------
        >>> trainer = Trainer.for_task("reverse")
        >>> calls = []
        >>> [trainer.memo("n", lambda: calls.append(1) or len(calls), trainer.step_count) for _ in range(3)]
        [1, 1, 1]
        """
        with self.lock:
            held = self._memo.get(name)
            if held is None or held[0] != depends:
                held = self._memo[name] = (depends, compute())
            return held[1]

    def initial_model(self) -> TinyTransformer:
        """A new model with the weights this trainer started from (they follow from its config and seed).

        Returns
        -------
        TinyTransformer

        Examples
        --------
        >>> trainer = Trainer.for_task("reverse", seed=4)
        >>> first = trainer.initial_model().head.weight.clone()
        >>> _ = trainer.step(5)
        >>> torch.equal(trainer.initial_model().head.weight, first), torch.equal(trainer.model.head.weight, first)
        (True, False)
        """
        gen = torch.Generator().manual_seed(self.seed)
        return TinyTransformer(self.config).init_weights(gen).to(self.device)

    # -- settings that may change between steps (the weights are kept)
    def set_lr(self, lr: float, warmup: int | None = None, schedule: str | None = None) -> None:
        """Change the learning rate (and warmup/schedule). A new learning rate clears a stop caused by a
        non-finite loss: the weights are those of the last good step, so training can go on.

        Parameters
        ----------
        lr : float
            > 0 and at most 1e4.
        warmup : int, optional
            Keeps the current one when None.
        schedule : {"constant", "cosine"}, optional
            Keeps the current one when None.

        Examples
        --------
        >>> trainer = Trainer.for_task("reverse")
        >>> trainer.set_lr(1e-3, schedule="constant"); trainer.lr, trainer.schedule
        (0.001, 'constant')
        """
        lr = positive_number(lr, "lr", upper=1e4)
        warmup = self.warmup if warmup is None else integer_in(warmup, "warmup", 0, 100_000)
        schedule = self.schedule if schedule is None else schedule
        one_of(schedule, SCHEDULES, "schedule")
        with self.lock:
            if lr != self.lr and self.stopped and self.stopped.key != "train.stopped_diverged":
                self.stopped = None        # the weights are the last good step's: training can go on
            self.lr, self.warmup, self.schedule = lr, warmup, schedule

    def set_temperature_schedule(self, schedule: TemperatureSchedule) -> None:
        """Follow ``schedule`` from now on (the weights are kept).

        Parameters
        ----------
        schedule : TemperatureSchedule

        Examples
        --------
        >>> trainer = Trainer.for_task("reverse")
        >>> trainer.set_temperature_schedule(TemperatureSchedule("constant", 2.0, 2.0)); trainer.temperature
        2.0
        """
        with self.lock:
            self.temperature_schedule = schedule

    def step(self, n: int = 1) -> list[dict]:
        """Train up to ``n`` steps (fewer when training stops: a non-finite loss or gradient, or a divergence, sets
        ``stopped`` and leaves the weights at the last good step).

        Parameters
        ----------
        n : int
            1 to 1,000,000.

        Returns
        -------
        list of dict
            One metrics row per step taken, also appended to ``history``: ``step``, ``loss``, ``accuracy`` (NaN
            for a regression), ``lr``, ``temperature`` and, per head, ``entropy_l{l}_h{h}``, ``maxw_l{l}_h{h}``,
            ``prevtok_l{l}_h{h}`` and ``induction_l{l}_h{h}`` (token tasks), and ``headsim_l{l}`` per layer.

        Examples
        --------
        >>> trainer = Trainer.for_task("sort", seed=0)
        >>> rows = trainer.step(4)
        >>> len(rows), rows[-1]["step"], trainer.step_count, "entropy_l1_h0" in rows[0]
        (4, 3, 4, True)
        """
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
        """The attention temperature the schedule sets at the current step.

        Returns
        -------
        float

        Examples
        --------
        >>> Trainer.for_task("reverse").temperature
        1.0
        """
        return self.temperature_schedule.at(self.step_count, self.total_steps)

    def schedules(self, every: int = 5) -> dict[str, list]:
        """The learning rate and the temperature multiplier at every ``every``-th step from 0 to
        ``total_steps`` (after which both hold their last value), for drawing.

        Parameters
        ----------
        every : int

        Returns
        -------
        dict
            ``step``, ``lr`` and ``temperature``: lists of one length.

        Examples
        --------
        >>> s = Trainer.for_task("reverse", total_steps=100, warmup=10).schedules(every=50)
        >>> s["step"], [round(v, 5) for v in s["lr"]]
        ([0, 50, 100], [0.0003, 0.00188, 0.0003])
        """
        steps = list(range(0, self.total_steps + 1, every))
        return {"step": steps,
                "lr": [learning_rate(k, self.lr, self.warmup, self.total_steps, self.schedule) for k in steps],
                "temperature": [self.temperature_schedule.at(k, self.total_steps) for k in steps]}

    @torch.inference_mode()
    def attention_maps(self) -> list[torch.Tensor]:
        """Per layer, the attention weights on the fixed held-out example, at the current temperature.

        Returns
        -------
        list of torch.Tensor
            One (H, T, T) tensor per layer, on the CPU.

        Examples
        --------
        >>> [tuple(w.shape) for w in Trainer.for_task("induction").attention_maps()]
        [(2, 32, 32), (2, 32, 32)]
        """
        with self.lock:
            self.model.eval()
            _, weights = self.model(self.example.inputs, self.example.attn_mask, temperature=self.temperature)
        return [w[0].cpu() for w in weights]

    @torch.inference_mode()
    def example_predictions(self) -> dict[str, torch.Tensor]:
        """Inputs, targets, loss mask and the model's output on the held-out example (batch of 1).

        Returns
        -------
        dict
            ``inputs``, ``targets``, ``loss_mask`` and ``prediction`` (the most likely token, or the regression's
            value), each a tensor of the example's length, on the CPU.

        Examples
        --------
        >>> out = Trainer.for_task("reverse").example_predictions()
        >>> sorted(out), tuple(out["prediction"].shape)
        (['inputs', 'loss_mask', 'prediction', 'targets'], (12,))
        """
        with self.lock:
            self.model.eval()
            out, _ = self.model(self.example.inputs, self.example.attn_mask, temperature=self.temperature)
        pred = out[0, :, 0] if self.task.regression else out[0].argmax(-1)
        return {"inputs": self.example.inputs[0].cpu(), "targets": self.example.targets[0].cpu(),
                "loss_mask": self.example.loss_mask[0].cpu(), "prediction": pred.cpu()}
