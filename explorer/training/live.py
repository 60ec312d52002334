"""A model trained live for one viewer: its lifecycle, below the page that draws it.

``LiveRun`` holds one browser session's trainer, built from the Live training settings and rebuilt when the
architecture changes; whether it runs; and its place in the server's training line (``slots.SLOTS``: at most K
sessions train at once). The model trains in a worker process (``worker.POOL``), never in the page's script run:
at each tick the page applies what the worker has published to its own copy of the trainer, which every figure and
head test reads. Pause, a stop and Step's last step bring the whole trainer back from the worker. The page
(``explorer/ui/live.py``) draws the buttons and the charts and calls these methods; nothing here imports streamlit.

    run = LiveRun("session-id")
    run.sync(task="reverse", n_layers=1, n_heads=2, d_model=64, seq_len=16, with_mlp=False, seed=0,
             lr=3e-3, warmup=20, temperature=TemperatureSchedule("constant", 1.0, 1.0))
    run.start(); run.tick()                 # hands the model to a worker when this session holds a slot
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..device import get_device
from ..i18n import Message
from .slots import SLOTS, Slots
from .tasks import make_task
from .trainer import TemperatureSchedule, Trainer
from .worker import POOL, Job, Pool, apply, restore

TICK = 1.0                      # seconds between redraws while training (measured on 2 cores, Chromium on the same
                                # box: at 0.5 s the browser took 0.7-0.8 of a core drawing and the trainer process
                                # 0.75; at 1 s with HEADS_TICK 5 s, 0.3-0.4 and 0.9)
GIVE_BACK_SECONDS = 10.0        # Pause waits at most this long for the worker to hand the model back
STEP_SECONDS = 10.0             # Step waits at most this long for its steps (then they show as they come)
HEADS_TICK = 5.0                # seconds between redraws of the heads' tests while training (each one evaluates
                                # the model once per head: training induction with the live view at 1 s, the
                                # server used 0.20 of a core and Chromium 0.55 with these every 2 s, 0.11 and 0.41
                                # every 5 s)


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
    pool: Pool = field(default=POOL, repr=False)
    trainer: Trainer | None = None
    architecture: tuple | None = None
    running: bool = False
    until: int | None = None                      # Step: train up to this step count, then pause
    job: Job | None = None                        # the model on a worker, while it trains there
    lost: Message | None = None                   # the worker died with the model: said, until Reset
    asked_anew: bool = False                      # Reset: the next model is new by request, not by a change

    def sync(self, task: str, n_layers: int, n_heads: int, d_model: int, seq_len: int, with_mlp: bool, seed: int,
             lr: float, warmup: int, temperature: TemperatureSchedule) -> bool:
        """Bring the model in line with the settings: a new model when the architecture (task, layers, heads,
        width, length, MLP, seed) changed, else the learning rate and temperature schedule applied to the one there
        is (and sent to its worker). True when an existing model was replaced. A setting the trainer refuses raises
        ``ValueError`` (a sentence for the viewer) and leaves the previous model as it was."""
        architecture = (task, n_layers, n_heads, d_model, seq_len, with_mlp, seed)       # (ARCHITECTURE)
        rebuilt = False
        if architecture != self.architecture:
            made = make_task(task, seq_len)
            config = made.model_config(n_layers=n_layers, n_heads=n_heads, d_model=d_model, with_mlp=with_mlp)
            trainer = Trainer(config, made, lr=lr, warmup=warmup, seed=seed, device=get_device())
            rebuilt = self.trainer is not None and not self.asked_anew
            self._drop()
            self.trainer, self.architecture, self.asked_anew, self.lost = trainer, architecture, False, None
        before = (self.trainer.lr, self.trainer.warmup, self.trainer.temperature_schedule)
        self.trainer.set_lr(lr, warmup)
        self.trainer.set_temperature_schedule(temperature)
        if self.job is not None and before != (lr, warmup, temperature):
            self.job.send("set", lr, warmup, (temperature.kind, temperature.start, temperature.end))
        return rebuilt

    def adopt(self, trainer: Trainer) -> dict:
        """Take ``trainer`` (a model loaded from a file, ``Trainer.load``) as this run's model, paused, and return
        the settings it was trained with (``trained_with``): once the page's controls show them, ``sync`` keeps
        this model instead of building a new one."""
        settings = trained_with(trainer)
        self._drop()
        self.trainer, self.asked_anew, self.lost = trainer, False, None
        self.architecture = tuple(settings[k] for k in ARCHITECTURE)
        return settings

    def reset(self) -> None:
        """A new model with the same settings (the next ``sync`` builds it, and does not call it a change)."""
        self._drop()
        self.architecture, self.asked_anew, self.lost = None, True, None

    def start(self) -> None:
        if not self.lost:
            self.running, self.until = True, None

    def pause(self) -> None:
        """Stop training and bring the trainer back from its worker (waiting at most ``GIVE_BACK_SECONDS``)."""
        self.running, self.until = False, None
        self.slots.release(self.session)
        job = self.job
        if job is not None:
            job.give_back()
            job.returned.wait(GIVE_BACK_SECONDS)
            self.collect()

    def step(self, n: int = 10) -> None:
        """The Step button: train ``n`` more steps (in a worker, like Start), then pause; waits for them up to
        ``STEP_SECONDS`` (a busy line or a slow start shows them as they come instead)."""
        if self.lost or self.trainer.stopped:
            return
        self.running, self.until = True, self.trainer.step_count + n
        deadline = time.monotonic() + STEP_SECONDS
        while self.running and time.monotonic() < deadline:
            if self.tick():
                return                          # waiting in line: the live view goes on ticking
            time.sleep(0.02)

    def tick(self) -> int:
        """One tick of the live view: apply what the worker published; while running, hand the model to a worker
        when this session holds a training slot (or tell it the page still looks). 0 when it trains (or is not
        running), else its place in the line. Training that stops (a non-finite loss, a divergence, Step's count
        reached, a dead worker) pauses the run."""
        self.collect()
        if not self.running:
            return 0
        trainer = self.trainer
        if self.lost or trainer.stopped or (self.until is not None and trainer.step_count >= self.until):
            self.pause()
            return 0
        place = self.slots.claim(self.session)
        if place:
            if self.job is not None:            # (a slot expired while the page was away)
                self.pause()
                self.running = True
            return place
        if self.job is None:
            self.job = self.pool.hand_over(trainer, self.session, self.until, keep=self.slots.holding())
            if self.job is None:                # every worker busy with a slot holder's model: wait a tick
                return 0
        else:
            self.job.beat()
        return 0

    def collect(self) -> None:
        """Apply the worker's updates to this run's trainer; when the job has ended, take the trainer back (or, if
        the worker died, say so)."""
        job = self.job
        if job is None:
            return
        for update in job.take():
            apply(self.trainer, update)
        if not job.returned.is_set():
            return
        self.job = None
        if job.state is not None:
            with self.trainer.lock:
                restore(self.trainer, job.state)
        elif job.lost:
            code = job.worker.exitcode
            self.lost = Message("train.worker_lost", step=self.trainer.step_count,
                                code=-1 if code is None else code)
            self.running, self.until = False, None
            self.slots.release(self.session)

    def _drop(self) -> None:
        """The model is being replaced: its worker forgets it, and this run stops."""
        self.running, self.until = False, None
        self.slots.release(self.session)
        if self.job is not None:
            self.job.drop()
            self.job = None
