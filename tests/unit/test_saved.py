"""A trained model kept and brought back (``Trainer.save`` / ``Trainer.load``, ``explorer-train --save``), and the
training API's errors that name what the caller passed."""

import csv
import json
import math
import pickle
import struct

import pytest
import torch

from explorer.training import Trainer
from explorer.training.saved import HEADER_KEY, to_bytes
from tests.unit.test_training import run_cli


def weights_equal(a: Trainer, b: Trainer) -> bool:
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def same_rows(a: list[dict], b: list[dict]) -> bool:
    """Metrics rows equal, NaN equal to NaN (the accuracy of a regression task)."""
    def same(x, y):
        return (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)) or x == y
    return len(a) == len(b) and all(r.keys() == s.keys() and all(same(r[k], s[k]) for k in r)
                                    for r, s in zip(a, b, strict=True))


@pytest.mark.parametrize("task, overrides", [("reverse", {}), ("induction", {"n_heads": 4, "position": "rope"}),
                                             ("sine_icl", {"with_mlp": True})])
def test_a_loaded_trainer_goes_on_exactly_as_if_it_had_never_stopped(tmp_path, task, overrides):
    """The reference is the same run without the stop: 20 + 10 steps through a file equal 30 steps in one go, to the
    last bit on the CPU (weights, optimiser moments, the batches drawn, the learning-rate schedule, every row)."""
    straight = Trainer.for_task(task, seed=3, total_steps=40, **overrides)
    straight.step(30)
    first = Trainer.for_task(task, seed=3, total_steps=40, **overrides)
    first.step(20)
    path = first.save(tmp_path / "run.safetensors")
    again = Trainer.load(path)
    assert again.step_count == 20 and same_rows(again.history, first.history)
    assert again.config == first.config and again.task.seq_len == first.task.seq_len
    again.step(10)
    assert weights_equal(again, straight)
    assert same_rows(again.history, straight.history)


def test_settings_come_back_with_the_model(tmp_path):
    from explorer.training import TemperatureSchedule

    trainer = Trainer.for_task("sort", seed=5, lr=2e-3, warmup=7, schedule="constant", batch_size=16,
                               total_steps=300, temperature_schedule=TemperatureSchedule("linear", 2.0, 0.5))
    trainer.step(2)
    back = Trainer.load(trainer.save(tmp_path / "sort.safetensors"))
    for name in ("lr", "warmup", "schedule", "batch_size", "total_steps", "seed", "temperature_schedule"):
        assert getattr(back, name) == getattr(trainer, name), name
    assert back.task.name == "sort" and back.temperature == trainer.temperature


def test_a_stopped_run_is_saved_with_the_reason_it_stopped(tmp_path):
    trainer = Trainer.for_task("reverse", seed=0, lr=1e4, warmup=0)
    trainer.step(200)
    assert trainer.stopped is not None
    back = Trainer.load(trainer.save(tmp_path / "stopped.safetensors"))
    assert back.stopped == trainer.stopped and back.stopped.key == trainer.stopped.key


def test_the_cli_saves_what_it_trained_and_python_loads_it(tmp_path):
    out, saved = tmp_path / "run.csv", tmp_path / "model.safetensors"
    res = run_cli("--task", "reverse", "--steps", "25", "--seed", "2", "--out", str(out), "--save", str(saved))
    assert res.returncode == 0, res.stderr
    back = Trainer.load(saved)
    rows = list(csv.DictReader(out.open()))
    assert back.step_count == 25 == len(rows)
    assert [float(r["loss"]) for r in rows] == [r["loss"] for r in back.history]
    reference = Trainer.for_task("reverse", seed=2, total_steps=25)       # the CLI's run, retrained here
    reference.step(25)
    assert weights_equal(back, reference)


def test_the_cli_refuses_a_save_path_in_a_missing_folder_before_training(tmp_path):
    res = run_cli("--task", "reverse", "--steps", "5", "--out", str(tmp_path / "x.csv"),
                  "--save", str(tmp_path / "nowhere" / "m.safetensors"))
    assert res.returncode == 2 and "does not exist" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "x.csv").exists()


def _with_header(data: bytes, change) -> bytes:
    """The same safetensors file with its ``explorer`` header entry changed by ``change(dict)``."""
    size = struct.unpack("<Q", data[:8])[0]
    table = json.loads(data[8:8 + size])
    header = json.loads(table["__metadata__"][HEADER_KEY])
    change(header)
    table["__metadata__"][HEADER_KEY] = json.dumps(header)
    raw = json.dumps(table).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data[8 + size:]


@pytest.fixture(scope="module")
def saved_bytes():
    trainer = Trainer.for_task("reverse", seed=0)
    trainer.step(1)
    return to_bytes(trainer)


@pytest.mark.parametrize("name, make, fragment", [
    ("empty", lambda good: b"", "too short"),
    ("text", lambda good: b"step,loss\n0,1.0\n" * 10, "header is missing or too large"),
    ("truncated", lambda good: good[: len(good) // 2], "cannot be read"),
    ("another format", lambda good: _with_header(good, lambda h: h.update(format="other/9")), "another format"),
    ("no settings", lambda good: _with_header(good, lambda h: h.pop("config")), "incomplete"),
    ("wrong width", lambda good: _with_header(good, lambda h: h["config"].update(d_model=32)), "do not fit"),
    ("bad setting", lambda good: _with_header(good, lambda h: h["config"].update(n_layers=9)), "n_layers"),
    ("a task too long", lambda good: _with_header(good, lambda h: h["task"].update(seq_len=10 ** 8)), "does not fit"),
    ("unknown stop", lambda good: _with_header(good, lambda h: h.update(stopped=["nope.key", {}])),
     "reason for stopping"),
    ("stop with text", lambda good: _with_header(good, lambda h: h.update(stopped=["train.stopped_grad",
                                                                                    {"step": "<b>1</b>"}])),
     "reason for stopping"),
    ("short history", lambda good: _with_header(good, lambda h: h.update(history=[])), "0 rows for 1 steps"),
    ("text in history", lambda good: _with_header(good, lambda h: h["history"][0].update(loss="low")),
     "does not hold the rows"),
    ("odd column", lambda good: _with_header(good, lambda h: h["history"][0].update(extra=1.0)),
     "does not hold the rows"),
])
def test_anything_but_a_saved_trainer_is_refused_with_a_sentence(tmp_path, saved_bytes, name, make, fragment):
    path = tmp_path / "file.safetensors"
    path.write_bytes(make(saved_bytes))
    with pytest.raises(ValueError, match=fragment):
        Trainer.load(path)


class _Trap:
    """Unpickling this writes a file: what loading a pickled "model" from elsewhere could do."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_a_pickle_is_refused_and_runs_nothing(tmp_path):
    trap = tmp_path / "written-by-the-file"
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(pickle.dumps(_Trap(str(trap))))
    with pytest.raises(ValueError, match="not a saved trainer"):
        Trainer.load(bad)
    assert not trap.exists()
    pickle.loads(bad.read_bytes()).close()          # the trap is real: unpickled, it writes the file
    assert trap.exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine with a CUDA GPU has the device")
def test_a_device_that_is_not_there_is_named_with_the_ones_that_are():
    with pytest.raises(ValueError, match=r"'cuda' is not available here: the devices here are: cpu\."):
        Trainer.for_task("induction", device="cuda")
    with pytest.raises(ValueError, match="device must be a device torch knows"):
        Trainer.for_task("reverse", device="gpu0")
