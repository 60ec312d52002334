"""Training in a process of its own: the Live training page's models train in worker processes, never in a page's
script run.

A server keeps a small pool of trainer processes (``Pool``; at most K, the training line's slots: ``slots.capacity``).
A session holding a slot hands its model to a worker as the bytes of a saved trainer (``saved.to_bytes``: weights,
optimiser, data generator, history); the worker trains it with the same ``Trainer`` as everywhere else, in chunks
of about ``CHUNK_SECONDS``, and every ``PUBLISH_SECONDS`` sends what the page draws: the new metrics rows, the weights
and the step count (``Job.take``). The page applies that to its own copy of the trainer at its tick (``publish`` /
``apply``), so every figure and head test reads a plain ``Trainer`` and never waits on training. Pause, a stop, or
another session needing the worker brings the whole trainer back (``Job.give_back``), so it can go on later in any
worker from the same step, batch for batch.

A worker whose page stops beating (``Job.beat``, every tick; a closed tab sends none) for ``STALE_SECONDS`` gives its
model back and waits for the next one. A worker that dies (killed, out of memory) is noticed by the thread that reads
its pipe: its job ends without a model (``Job.lost``), and the pool starts a new process for the next session.

Messages, parent to worker: ("load", job, bytes, until), ("set", job, lr, warmup, temperature), ("beat", job),
("give", job), ("drop", job). Worker to parent: ("progress", job, update), ("state", job, bytes or None).
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

import torch

from ..device import trainer_threads
from ..i18n import Message
from .saved import from_bytes, restore, to_bytes
from .slots import STALE_SECONDS, capacity
from .trainer import TemperatureSchedule, Trainer

CHUNK_SECONDS = 0.1        # a worker looks at its messages at least this often while training
PUBLISH_SECONDS = 0.5      # ... and sends the page what it draws this often (the page redraws every 1 s)


# ----------------------------------------------------------------------------------------- the worker process
def publish(trainer, since: int) -> dict:
    """What the page draws of ``trainer``: the metrics rows from ``since`` on, the weights, the step count and why
    training stopped (as the page's ``apply`` takes it)."""
    stopped = trainer.stopped
    return {"rows": trainer.history[since:], "step_count": trainer.step_count,
            "weights": {k: v.detach().cpu().numpy().copy() for k, v in trainer.model.state_dict().items()},
            "stopped": None if stopped is None else (stopped.key, stopped.values)}


def serve(conn, threads: int, stale: float = STALE_SECONDS) -> None:
    """The worker's loop: one model at a time, trained while its page beats (given back after ``stale`` seconds
    without a beat)."""
    torch.set_num_threads(threads)
    job = trainer = until = None
    sent = chunk = 0
    beat = published = time.monotonic()

    def send_progress() -> None:
        nonlocal sent, published
        conn.send(("progress", job, publish(trainer, sent)))
        sent, published = len(trainer.history), time.monotonic()

    def hand_back(keep: bool) -> None:
        nonlocal job, trainer
        conn.send(("state", job, to_bytes(trainer) if keep else None))
        job = trainer = None

    while True:
        busy = trainer is not None and not trainer.stopped and (until is None or trainer.step_count < until)
        if not busy and trainer is not None and len(trainer.history) > sent:
            send_progress()                         # the last steps (a stop, or Step's count reached)
        try:
            while conn.poll(0 if busy else 1.0):
                kind, about, *rest = conn.recv()
                if kind == "load":
                    job, trainer, until = about, from_bytes(Trainer, rest[0]), rest[1]
                    sent, beat, chunk = len(trainer.history), time.monotonic(), 1
                elif about != job:
                    continue                        # about a model this worker already gave back
                elif kind == "beat":
                    beat = time.monotonic()
                elif kind == "set":
                    lr, warmup, (t_kind, t_start, t_end) = rest
                    trainer.set_lr(lr, warmup)
                    trainer.set_temperature_schedule(TemperatureSchedule(t_kind, t_start, t_end))
                elif kind in ("give", "drop"):
                    if len(trainer.history) > sent:
                        send_progress()
                    hand_back(keep=kind == "give")
                busy = trainer is not None and not trainer.stopped and (until is None or trainer.step_count < until)
        except (EOFError, OSError):                 # the server has gone
            return
        if trainer is not None and time.monotonic() - beat > stale:
            if len(trainer.history) > sent:         # nobody looks any more: give the model back, free the worker
                send_progress()
            hand_back(keep=True)
            continue
        if not busy:
            continue
        n = chunk if until is None else min(chunk, until - trainer.step_count)
        t0 = time.perf_counter()
        rows = trainer.step(n)
        per_step = (time.perf_counter() - t0) / max(1, len(rows))
        chunk = int(min(max(CHUNK_SECONDS / max(per_step, 1e-5), 1), 500))
        if time.monotonic() - published >= PUBLISH_SECONDS or trainer.stopped:
            send_progress()


# ---------------------------------------------------------------------------------------------- the parent side
def apply(trainer, update: dict) -> None:
    """Bring the page's copy of a trainer to what its worker published (``publish``): weights, rows, step count."""
    weights = {k: torch.from_numpy(v) for k, v in update["weights"].items()}
    with trainer.lock:
        trainer.model.load_state_dict(weights)
        trainer.history.extend(update["rows"])
        trainer.step_count = update["step_count"]
        stopped = update["stopped"]
        trainer.stopped = None if stopped is None else Message(stopped[0], **stopped[1])


class Job:
    """One session's model on one worker, from its hand-over to its return."""

    def __init__(self, worker: Worker, number: int, owner: str):
        self.worker, self.number, self.owner = worker, number, owner
        self.lock = threading.Lock()
        self.pending: dict | None = None         # the updates not taken yet, merged
        self.state: bytes | None = None          # the trainer, given back
        self.returned = threading.Event()        # given back, dropped, or the worker died
        self.lost = False                        # the worker died with this job's model

    def take(self) -> list[dict]:
        """The update published since the last call (one: those that came in between are merged), or none."""
        with self.lock:
            out, self.pending = ([self.pending] if self.pending else []), None
        return out

    def put(self, update: dict) -> None:
        """An update from the worker, merged into the one the page has not taken yet: its rows added, the rest (the
        weights) replaced, so a page that does not tick for a while holds one copy of the weights, not one per
        update."""
        with self.lock:
            if self.pending is None:
                self.pending = update
            else:
                self.pending = {**update, "rows": self.pending["rows"] + update["rows"]}

    def send(self, *message) -> None:
        self.worker.send(message[0], self.number, *message[1:])

    def beat(self) -> None:
        self.send("beat")

    def give_back(self) -> None:
        """Ask for the trainer back (it arrives in ``state``; ``returned`` is set); the worker is free at once."""
        self.worker.release(self)
        self.send("give")

    def drop(self) -> None:
        """The model is no longer wanted (a new one replaces it): the worker forgets it."""
        self.worker.release(self)
        self.send("drop")


class Worker:
    """A trainer process and the thread that reads what it sends.

    The process is a fresh interpreter running this module (``python -m explorer.training.worker FD THREADS
    STALE``): not a fork of the server (CUDA cannot be used in a forked child), and not multiprocessing's spawn,
    which would first run the server's own main script again in the child. The two talk over a socket pair, with
    ``multiprocessing.connection``'s framing."""

    def __init__(self, threads: int, stale: float = STALE_SECONDS):
        ours, theirs = socket.socketpair()
        root = str(Path(__file__).resolve().parents[2])          # (the package's folder, installed or not)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "explorer.training.worker", str(theirs.fileno()), str(threads), str(stale)]
        self.process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        self.conn = Connection(ours.detach())
        self.lock = threading.Lock()
        self.jobs: dict[int, Job] = {}
        self.current: Job | None = None
        self.dead = False
        threading.Thread(target=self._read, daemon=True, name="explorer-trainer-reader").start()

    def send(self, *message) -> None:
        try:
            with self.lock:
                self.conn.send(message)
        except (OSError, ValueError):             # (a dead process's pipe: the reader says so)
            self._died()

    def take(self, job: Job) -> None:
        with self.lock:
            self.jobs[job.number] = self.current = job

    def release(self, job: Job) -> None:
        with self.lock:
            if self.current is job:
                self.current = None

    @property
    def free(self) -> bool:
        return not self.dead and self.current is None

    def _read(self) -> None:
        while True:
            try:
                kind, number, payload = self.conn.recv()
            except Exception:                     # (EOF: the process ended; anything else: it cannot be read)
                # The socket closes while the process exits, a moment before its status can be read: wait for it,
                # so that whoever learns of the death (``_died``) can say the status (a process still running after
                # an unreadable message is ended here).
                try:
                    self.process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
                self._died()
                return
            job = self.jobs.get(number)
            if job is None:
                continue
            if kind == "progress":
                job.put(payload)
            else:                                 # "state": the model came back (or was dropped)
                job.state = payload
                with self.lock:
                    self.jobs.pop(number, None)
                    if self.current is job:       # it gave the model back by itself: free
                        self.current = None
                job.returned.set()

    def _died(self) -> None:
        with self.lock:
            if self.dead:
                return
            self.dead, jobs, self.jobs = True, list(self.jobs.values()), {}
        for job in jobs:
            job.lost = True
            job.returned.set()

    @property
    def exitcode(self) -> int | None:
        """The process's exit status once it has ended (negative: the signal that ended it), else None."""
        return self.process.poll()

    def stop(self, timeout: float = 5.0) -> None:
        """End the process (a test, or the server shutting down)."""
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
        try:
            self.conn.close()
        except OSError:
            pass


class Pool:
    """The server's trainer processes: at most ``k`` (by default the training line's capacity), started when first
    needed and kept for the next session (a new process needs seconds to import torch)."""

    def __init__(self, k: int | None = None, stale: float = STALE_SECONDS):
        self.k, self.stale = k, stale
        self.lock = threading.Lock()
        self.workers: list[Worker] = []
        self.numbers = itertools.count(1)

    def size(self) -> int:
        return self.k or capacity()

    def warm(self) -> None:
        """Start one process ahead of the first Start, when none is there (the page calls this on its first run)."""
        with self.lock:
            self._forget_dead()
            if not self.workers:
                self.workers.append(self._start())

    def hand_over(self, trainer, owner: str, until: int | None = None, keep=()) -> Job | None:
        """Give ``owner``'s ``trainer`` to a free worker to train (up to step ``until``, or until given back). None
        when all ``size()`` workers are busy with models of sessions in ``keep`` (those that hold a training slot); a
        worker busy with any other session's model is asked to give that one back first."""
        with self.lock:
            self._forget_dead()
            worker = next((w for w in self.workers if w.free), None)
            if worker is None and len(self.workers) < self.size():
                worker = self._start()
                self.workers.append(worker)
            if worker is None:
                worker = next((w for w in self.workers if w.current and w.current.owner not in keep),
                              None)
                if worker is None:
                    return None
                worker.current.give_back()
            job = Job(worker, next(self.numbers), owner)
            worker.take(job)
        with trainer.lock:
            data = to_bytes(trainer)
        job.send("load", data, until)
        return job

    def _start(self) -> Worker:
        return Worker(trainer_threads(), self.stale)

    def _forget_dead(self) -> None:
        self.workers = [w for w in self.workers if not w.dead]

    def stop(self) -> None:
        with self.lock:
            workers, self.workers = self.workers, []
        for w in workers:
            w.stop()


POOL = Pool()


def main(argv: list[str]) -> None:
    """The worker process's entry: ``python -m explorer.training.worker FD THREADS STALE`` (``Worker`` starts it)."""
    serve(Connection(int(argv[0])), int(argv[1]), float(argv[2]))


__all__ = ["CHUNK_SECONDS", "POOL", "PUBLISH_SECONDS", "Job", "Pool", "Worker", "apply", "publish", "restore",
           "serve"]


if __name__ == "__main__":
    main(sys.argv[1:])
