"""Live training's worker processes: a model trained in one is the model the headless Trainer trains; settings
reach it while it trains; a closed tab, a killed process and Reset each free it, and the page's run says what
happened. The file's tests share one pool of one process (a new one costs seconds of imports); each test leaves
it free, and one that kills it shows that the next test gets a new one."""

import pytest
import torch

from explorer.device import torch_threads
from explorer.i18n import t
from explorer.lessons import live_training as lt_lesson
from explorer.lessons.params import defaults
from explorer.training import Trainer
from explorer.training.live import LiveRun
from explorer.training.schedule import TemperatureSchedule, learning_rate
from explorer.training.slots import Slots
from explorer.training.worker import Pool
from tests.conftest import until

SETTINGS = lt_lesson.run_settings(defaults(lt_lesson.PARAMS))       # reverse, the page's defaults


@pytest.fixture(scope="module")
def processes():
    made = Pool(k=1, stale=1.0)              # one process; a page that stops beating is let go after 1 s
    yield made
    made.stop()


@pytest.fixture
def pool(processes):
    yield processes
    for worker in processes.workers:         # whatever a failed test left on the worker goes
        if worker.current is not None:
            worker.current.drop()


def fresh(run: LiveRun) -> Trainer:
    """A headless trainer with the run's settings, trained in this process (the reference)."""
    return Trainer(run.trainer.config, run.trainer.task, lr=run.trainer.lr, warmup=run.trainer.warmup,
                   seed=run.trainer.seed, temperature_schedule=run.trainer.temperature_schedule)


def same_weights(a: Trainer, b: Trainer) -> bool:
    one, two = a.model.state_dict(), b.model.state_dict()
    return one.keys() == two.keys() and all(torch.equal(one[k], two[k]) for k in one)


def step(run: LiveRun, n: int) -> None:
    """The Step button: ``n`` steps in a worker. Step waits up to ``STEP_SECONDS`` for them; a process still
    starting on a busy machine brings them at the next ticks instead (as the page's live view does)."""
    run.step(n)
    assert until(lambda: run.tick() == 0 and not run.running, 60), run.trainer.step_count


def train_a_while(run: LiveRun, steps: int) -> None:
    run.start()
    assert until(lambda: run.tick() == 0 and run.trainer.step_count >= steps, 60), run.trainer.step_count


def test_a_model_trained_in_a_worker_is_the_headless_trainers_to_the_last_bit(pool):
    """Step, Start, ticks and Pause move the model between the page and a worker; the weights and every metrics
    row equal those of the same Trainer stepped here (same batches, same updates, on one thread, as the worker
    computes)."""
    with torch_threads(1):
        run = LiveRun("a", Slots(1), pool)
        run.sync(**SETTINGS)
        reference = fresh(run)
        step(run, 10)                                             # Step's ten steps, in a worker
        assert run.trainer.step_count == 10 and not run.running and run.job is None
        reference.step(10)
        assert same_weights(run.trainer, reference) and run.trainer.history == reference.history
        train_a_while(run, 60)
        run.pause()                                               # the steps since the last tick come back too
        assert run.job is None and pool.workers[0].free
        reference.step(run.trainer.step_count - 10)
        assert same_weights(run.trainer, reference) and run.trainer.history == reference.history
        # the optimiser and the data came back as well: ten more steps match again
        step(run, 10)
        reference.step(10)
        assert same_weights(run.trainer, reference) and run.trainer.history == reference.history


def test_a_learning_rate_and_a_temperature_reach_the_model_while_it_trains(pool):
    run = LiveRun("a", Slots(1), pool)
    run.sync(**SETTINGS)
    train_a_while(run, 20)
    schedule = TemperatureSchedule("constant", 0.5, 0.5)
    run.sync(**{**SETTINGS, "lr": 1e-3, "temperature": schedule})
    changed = run.trainer.step_count
    assert until(lambda: run.tick() == 0 and run.trainer.step_count > changed + 40, 60)
    run.pause()
    last = run.trainer.history[-1]
    trainer = run.trainer
    assert last["lr"] == pytest.approx(learning_rate(last["step"], 1e-3, trainer.warmup, trainer.total_steps,
                                                     trainer.schedule))
    assert last["temperature"] == 0.5 and trainer.lr == 1e-3


def test_a_closed_tab_frees_its_worker_and_keeps_its_model(pool):
    """A page that stops ticking (a closed tab sends nothing) no longer holds the worker within seconds: the worker
    gives the model back by itself and takes the next session's; the first session, if it comes back, has every
    step its model took."""
    slots = Slots(1)
    gone, next_one = LiveRun("gone", slots, pool), LiveRun("next", slots, pool)
    gone.sync(**SETTINGS)
    next_one.sync(**{**SETTINGS, "seed": 1})
    train_a_while(gone, 20)
    job = gone.job
    assert until(lambda: job.returned.is_set(), 30)           # no beat for 1 s: given back
    assert pool.workers[0].free and job.state is not None
    slots.release("gone")                                     # (its slot would expire the same way, after 5 s)
    train_a_while(next_one, 10)
    assert next_one.job.worker is job.worker                  # the same process, now training the next model
    next_one.pause()
    before = gone.trainer.step_count
    gone.collect()                                            # the first tab comes back: nothing was lost
    assert gone.job is None and gone.trainer.step_count == len(gone.trainer.history) >= max(before, 20)


def test_a_second_session_takes_a_worker_from_a_session_that_lost_its_slot(pool):
    """With one process: a session whose slot expired (its tab froze) is asked for its model back when the next
    session needs the worker, and keeps every step."""
    now = [0.0]
    slots = Slots(1, clock=lambda: now[0])
    frozen, waiting = LiveRun("frozen", slots, pool), LiveRun("waiting", slots, pool)
    frozen.sync(**SETTINGS)
    waiting.sync(**{**SETTINGS, "seed": 2})
    train_a_while(frozen, 10)
    now[0] += 10                                              # the frozen tab's slot expires
    train_a_while(waiting, 10)
    assert until(lambda: frozen.job.returned.is_set(), 30)
    frozen.collect()
    assert frozen.job is None and frozen.trainer.step_count == len(frozen.trainer.history) >= 10
    waiting.pause()


def test_a_killed_worker_is_said_and_reset_trains_a_new_model_in_a_new_process(pool):
    run = LiveRun("a", Slots(1), pool)
    run.sync(**SETTINGS)
    train_a_while(run, 10)
    dead = run.job.worker
    dead.process.kill()
    assert until(lambda: run.tick() == 0 and run.lost is not None, 30)
    assert not run.running and run.job is None and dead.dead
    assert run.lost.key == "train.worker_lost" and run.lost.values["code"] == -9
    assert "-9" in t("train.worker_lost", "en", **run.lost.values)
    run.start()                                               # nothing to go on from: Start does nothing
    assert not run.running
    run.pause()                                               # the server never waits on a dead process
    run.reset()
    run.sync(**SETTINGS)
    assert run.lost is None and run.trainer.step_count == 0
    step(run, 5)
    assert run.trainer.step_count == 5 and dead not in pool.workers and len(pool.workers) == 1


def test_reset_while_training_drops_the_model_and_frees_the_worker(pool):
    run = LiveRun("a", Slots(1), pool)
    run.sync(**SETTINGS)
    train_a_while(run, 10)
    worker = run.job.worker
    run.reset()
    assert run.job is None and not run.running and worker.free
    run.sync(**SETTINGS)
    assert run.trainer.step_count == 0 and not run.trainer.history
    assert until(lambda: not worker.jobs, 30)                 # the worker forgot the old model
    step(run, 3)
    assert run.trainer.step_count == 3 and run.job is None


def test_a_stop_in_the_worker_pauses_the_run_with_the_trainers_sentence(pool):
    run = LiveRun("a", Slots(1), pool)
    run.sync(**{**SETTINGS, "lr": 1000.0, "warmup": 0})
    run.start()
    assert until(lambda: run.tick() == 0 and not run.running, 60)
    assert run.trainer.stopped is not None and run.trainer.stopped.key.startswith("train.stopped_")
    assert run.job is None and pool.workers[0].free


def test_updates_the_page_has_not_taken_are_merged_into_one():
    """A page that does not tick for a while (a long rerun) holds one copy of the weights, not one per update: the
    rows add up, the weights and step count are the latest."""
    from explorer.training.worker import Job

    job = Job(None, 1, "a")
    assert job.take() == []
    job.put({"rows": [{"step": 0}], "step_count": 1, "weights": "w1", "stopped": None})
    job.put({"rows": [{"step": 1}, {"step": 2}], "step_count": 3, "weights": "w3", "stopped": None})
    assert job.take() == [{"rows": [{"step": 0}, {"step": 1}, {"step": 2}], "step_count": 3, "weights": "w3",
                           "stopped": None}]
    assert job.take() == []


def test_a_death_is_told_with_the_exit_status_already_known():
    """The socket of a dying process closes a moment before its exit status can be read; the reader waits for the
    status before it tells anyone (the page said "exit status -1" once, having asked too early). A stand-in process
    closes its end of the socket, then lives 0.3 s more and ends by SIGKILL."""
    import signal
    import socket
    import subprocess
    import sys
    import threading
    from multiprocessing.connection import Connection

    from explorer.training.worker import Job, Worker

    told = []

    class Watched(Worker):
        def _died(self):                    # the status as the runs waiting on the worker learn of its death
            told.append(self.exitcode)
            super()._died()

    ours, theirs = socket.socketpair()
    script = ("import os, signal, sys, time; os.close(int(sys.argv[1])); time.sleep(0.3); "
              "os.kill(os.getpid(), signal.SIGKILL)")
    worker = Watched.__new__(Watched)       # (its own process, not a trainer)
    worker.process = subprocess.Popen([sys.executable, "-c", script, str(theirs.fileno())],
                                      pass_fds=(theirs.fileno(),))
    theirs.close()
    worker.conn, worker.lock, worker.dead = Connection(ours.detach()), threading.Lock(), False
    job = Job(worker, 1, "a")
    worker.jobs, worker.current = {1: job}, job
    worker._read()
    worker.conn.close()
    assert job.returned.is_set() and job.lost and worker.dead
    assert told == [-signal.SIGKILL]
