"""A model trained live for one viewer: its lifecycle, below the page that draws it.

``LiveRun`` holds one browser session's trainer, built from the Live training settings and rebuilt when the
architecture changes; whether it runs; how many steps a tick trains (sized so a tick takes about ``TICK_BUDGET``
seconds); and its place in the server's training line (``slots.SLOTS``: at most K sessions train at once). The page
(``explorer/ui/live.py``) draws the buttons and the charts and calls these methods; nothing here imports streamlit.

    run = LiveRun("session-id")
    run.sync(task="reverse", n_layers=1, n_heads=2, d_model=64, seq_len=16, with_mlp=False, seed=0,
             lr=3e-3, warmup=20, temperature=TemperatureSchedule("constant", 1.0, 1.0))
    run.start(); run.tick()                 # one chunk of steps, when this session holds a slot
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..device import get_device, torch_threads, trainer_threads
from .slots import SLOTS, Slots
from .tasks import make_task
from .trainer import TemperatureSchedule, Trainer

TICK = 0.5                      # seconds between redraws while training
TICK_BUDGET = 0.3               # seconds of training per tick (shorter than the tick)
HEADS_TICK = 2.0                # seconds between redraws of the heads' tests while training (each one evaluates
                                # the model once per head: at the live view's pace it halved the steps trained)


ARCHITECTURE = ("task", "n_layers", "n_heads", "d_model", "seq_len", "with_mlp", "seed")   # a change: a new model


def trained_with(trainer: Trainer) -> dict:
    """The settings ``trainer`` was built with, in ``LiveRun.sync``'s terms (its keyword arguments)."""
    cfg = trainer.config
    return {"task": trainer.task.name, "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_model": cfg.d_model,
            "seq_len": trainer.task.seq_len, "with_mlp": cfg.with_mlp, "seed": trainer.seed, "lr": trainer.lr,
            "warmup": trainer.warmup, "temperature": trainer.temperature_schedule}


@dataclass
class LiveRun:
    """One viewer's model being trained live (see the module's docstring)."""
    session: str                                  # this viewer's name in the server's training line
    slots: Slots = field(default=SLOTS, repr=False)
    trainer: Trainer | None = None
    architecture: tuple | None = None
    running: bool = False
    chunk: int = 5                                # steps per tick, adjusted to ``TICK_BUDGET``
    asked_anew: bool = False                      # Reset: the next model is new by request, not by a change

    def sync(self, task: str, n_layers: int, n_heads: int, d_model: int, seq_len: int, with_mlp: bool, seed: int,
             lr: float, warmup: int, temperature: TemperatureSchedule) -> bool:
        """Bring the model in line with the settings: a new model when the architecture (task, layers, heads,
        width, length, MLP, seed) changed, else the learning rate and temperature schedule applied to the one there
        is. True when an existing model was replaced. A setting the trainer refuses raises ``ValueError`` (a
        sentence for the viewer) and leaves the previous model as it was."""
        architecture = (task, n_layers, n_heads, d_model, seq_len, with_mlp, seed)       # (ARCHITECTURE)
        rebuilt = False
        if architecture != self.architecture:
            made = make_task(task, seq_len)
            config = made.model_config(n_layers=n_layers, n_heads=n_heads, d_model=d_model, with_mlp=with_mlp)
            trainer = Trainer(config, made, lr=lr, warmup=warmup, seed=seed, device=get_device())
            rebuilt = self.trainer is not None and not self.asked_anew
            self.trainer, self.architecture, self.asked_anew = trainer, architecture, False
            self.pause()
        self.trainer.set_lr(lr, warmup)
        self.trainer.set_temperature_schedule(temperature)
        return rebuilt

    def adopt(self, trainer: Trainer) -> dict:
        """Take ``trainer`` (a model loaded from a file, ``Trainer.load``) as this run's model, paused, and return
        the settings it was trained with (``trained_with``): once the page's controls show them, ``sync`` keeps
        this model instead of building a new one."""
        settings = trained_with(trainer)
        self.pause()
        self.trainer, self.asked_anew = trainer, False
        self.architecture = tuple(settings[k] for k in ARCHITECTURE)
        return settings

    def reset(self) -> None:
        """A new model with the same settings (the next ``sync`` builds it, and does not call it a change)."""
        self.architecture, self.asked_anew = None, True
        self.pause()

    def start(self) -> None:
        self.running = True

    def pause(self) -> None:
        self.running = False
        self.slots.release(self.session)

    def step(self, n: int = 10) -> None:
        """Pause, then train ``n`` steps now (the Step button)."""
        self.pause()
        self.trainer.step(n)

    def tick(self) -> int:
        """One tick of the live view: while running, train a chunk sized to take about ``TICK_BUDGET`` seconds when
        this session holds a training slot; 0 when it trained (or is not running), else its place in the line.
        Training that stops (a loss that is not finite, a divergence) pauses the run."""
        trainer = self.trainer
        if not self.running or trainer.stopped:
            if trainer.stopped:
                self.pause()
            return 0
        place = self.slots.claim(self.session)
        if place:
            return place
        t0 = time.perf_counter()
        with torch_threads(trainer_threads()):          # leave the other cores to the other sessions
            rows = trainer.step(self.chunk)
        per_step = (time.perf_counter() - t0) / max(1, len(rows))
        self.chunk = int(np.clip(TICK_BUDGET / max(per_step, 1e-4), 1, 200))
        if trainer.stopped:
            self.pause()
        return 0
