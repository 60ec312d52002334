"""A trainer kept in one file and brought back: ``Trainer.save(path)`` and ``Trainer.load(path)``.

The file is safetensors (https://huggingface.co/docs/safetensors): tensors and a header of strings, read without
running any code from it (unlike a pickle), so a file from elsewhere cannot execute anything when it is loaded. It
holds everything training needs to go on as if it had never stopped:

- ``model.<name>``: the model's weights (its ``state_dict``);
- ``optim.<i>.<name>``: AdamW's moments and step count for the i-th parameter;
- ``data_generator``: the state of the generator the batches are drawn from;
- the header's ``explorer`` entry, JSON: the file format, the ``ModelConfig``, the task (name, length, vocabulary),
  the trainer's settings (learning rate, warmup, schedules, seed, batch size, total steps), the step count, why
  training stopped (if it did) and every metrics row so far.

A loaded trainer continues exactly where the saved one was: the same batches, the same updates (on the CPU, to the
last bit; tested). Loading checks the header against what a trainer may be (a ``ValueError`` with a sentence when it
is not), and the weights against the configuration's shapes.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import asdict, fields
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from ..i18n import Message
from .model import ModelConfig
from .schedule import TemperatureSchedule
from .tasks import make_task

FORMAT = "attention-explorer-trainer/1"
HEADER_KEY = "explorer"
MAX_HEADER_BYTES = 16 * 2**20           # the JSON header (its metrics rows): refused above this before it is parsed


def to_bytes(trainer) -> bytes:
    """The trainer as the bytes of a safetensors file (``save`` writes them)."""
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in trainer.model.state_dict().items()}
    for i, state in trainer.opt.state_dict()["state"].items():
        for name, value in state.items():
            tensors[f"optim.{i}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous()
    tensors["data_generator"] = trainer.data_gen.get_state()
    temperature = trainer.temperature_schedule
    header = {
        "format": FORMAT,
        "config": asdict(trainer.config),
        "task": {"name": trainer.task.name, "seq_len": trainer.task.seq_len, "vocab": trainer.task.vocab},
        "trainer": {"lr": trainer.lr, "warmup": trainer.warmup, "schedule": trainer.schedule,
                    "temperature_schedule": [temperature.kind, temperature.start, temperature.end],
                    "seed": trainer.seed, "batch_size": trainer.batch_size, "total_steps": trainer.total_steps},
        "step_count": trainer.step_count,
        "stopped": None if trainer.stopped is None else [trainer.stopped.key, trainer.stopped.values],
        "history": trainer.history,
    }
    return save_tensors(tensors, metadata={HEADER_KEY: json.dumps(header)})


def save(trainer, path: str | Path) -> Path:
    """Write ``trainer`` to ``path`` (a safetensors file; see the module docstring); returns the path."""
    path = Path(path)
    path.write_bytes(to_bytes(trainer))
    return path


def _header(data: bytes) -> dict:
    """The ``explorer`` entry of a safetensors file's header, checked to be one of ours."""
    if len(data) < 8:
        raise ValueError("this is not a saved trainer: the file is too short to be a safetensors file.")
    (size,) = struct.unpack("<Q", data[:8])
    if size > min(MAX_HEADER_BYTES, len(data) - 8):
        raise ValueError("this is not a saved trainer: its safetensors header is missing or too large.")
    try:
        metadata = json.loads(data[8:8 + size]).get("__metadata__") or {}
        header = json.loads(metadata[HEADER_KEY])
    except (ValueError, KeyError, AttributeError, TypeError):
        raise ValueError("this is not a saved trainer: a safetensors file, but without the trainer's settings "
                         "(Trainer.save writes them).") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"this file was saved in another format ({header.get('format')!r} where {FORMAT!r} is "
                         "read)." if isinstance(header, dict) else "this is not a saved trainer.")
    return header


def from_bytes(trainer_class, data: bytes, device=None):
    """A trainer (an instance of ``trainer_class``, ``Trainer``) from the bytes of a file ``save`` wrote (``load``
    reads them); ``ValueError`` with a sentence for anything else."""
    header = _header(data)
    try:
        tensors = load_tensors(data)
    except SafetensorError as err:
        raise ValueError(f"this saved trainer's tensors cannot be read: {err}.") from None
    try:
        names = {f.name for f in fields(ModelConfig)}
        config = ModelConfig(**{k: v for k, v in header["config"].items() if k in names})
        shape = (header["task"]["seq_len"], header["task"]["vocab"])
        if shape != (config.seq_len, config.vocab):       # (checked before a task of that size is made)
            raise ValueError("this saved trainer's model does not fit its task (vocabulary, length or mask differ).")
        task = make_task(header["task"]["name"], *shape)
        settings = dict(header["trainer"])
        settings["temperature_schedule"] = TemperatureSchedule(*settings["temperature_schedule"])
        trainer = trainer_class(config, task, device=device, **settings)
        step_count, history, stopped = int(header["step_count"]), list(header["history"]), header["stopped"]
    except (KeyError, TypeError) as err:
        raise ValueError(f"this saved trainer's settings are incomplete or of the wrong kind ({err}).") from None
    if (task.vocab, task.seq_len, task.causal) != (config.vocab, config.seq_len, config.causal):
        raise ValueError("this saved trainer's model does not fit its task (vocabulary, length or mask differ).")
    _load_tensors(trainer, tensors)
    trainer.history = _checked_history(trainer_class, config, task, settings, history, step_count)
    trainer.step_count = step_count
    trainer.stopped = None if stopped is None else _checked_stop(stopped)
    return trainer


def _load_tensors(trainer, tensors: dict) -> None:
    """Put a file's weights, optimiser state and data generator state into ``trainer`` (made for its settings)."""
    weights = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
    try:
        trainer.model.load_state_dict(weights, strict=True)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[-1].strip()
        raise ValueError(f"this saved trainer's weights do not fit its configuration: {first}") from None
    state = trainer.opt.state_dict()
    moments: dict[int, dict] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, i, name = key.split(".", 2)
            moments.setdefault(int(i), {})[name] = value
    if moments:
        state["state"] = moments
        try:
            trainer.opt.load_state_dict(state)
        except (ValueError, KeyError, RuntimeError) as err:
            raise ValueError(f"this saved trainer's optimiser state does not fit its model ({err}).") from None
    if "data_generator" in tensors:
        try:
            trainer.data_gen.set_state(tensors["data_generator"])
        except (RuntimeError, TypeError):
            raise ValueError("this saved trainer's data generator state cannot be read.") from None


def restore(trainer, data: bytes) -> None:
    """Bring ``trainer`` in place to the state in ``data``, bytes ``to_bytes`` wrote of a trainer with the same settings
    (a worker process handing back the model it trained): weights, optimiser, data generator, step count, stop and
    history. Only for bytes this server made: nothing is checked beyond the weights' shapes."""
    header = _header(data)
    _load_tensors(trainer, load_tensors(data))
    stopped = header["stopped"]
    trainer.history = [{k: math.nan if v is None else v for k, v in row.items()} for row in header["history"]]
    trainer.step_count = int(header["step_count"])
    trainer.stopped = None if stopped is None else Message(stopped[0], **stopped[1])


STOPS = ("train.stopped_loss", "train.stopped_grad", "train.stopped_diverged")   # why a Trainer stops


def _checked_stop(stopped) -> Message:
    """The reason training stopped, as the trainer said it: one of ``STOPS`` with numbers (a file from elsewhere may
    hold anything; the page shows this sentence)."""
    try:
        key, values = stopped
        ok = key in STOPS and isinstance(values, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values())
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError("this saved trainer's reason for stopping is not one training gives.")
    return Message(key, **values)


def _checked_history(trainer_class, config, task, settings, history, step_count: int) -> list[dict]:
    """The metrics rows, checked to be what this trainer records: one per step, each with a trainer's columns for
    this model (found by one step of a fresh trainer of the same settings) and numbers in them."""
    if step_count < 0 or len(history) != step_count:
        raise ValueError(f"this saved trainer's history has {len(history)} rows for {step_count} steps.")
    if not history:
        return []
    columns = set(trainer_class(config, task, device="cpu", **settings).step(1)[0])
    rows = []
    for row in history:
        if not isinstance(row, dict) or set(row) != columns or not all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in row.values()):
            raise ValueError("this saved trainer's history does not hold the rows training records.")
        rows.append({k: math.nan if v is None else v for k, v in row.items()})
    return rows


def load(trainer_class, path: str | Path, device=None):
    """The trainer saved at ``path`` (see ``from_bytes``)."""
    return from_bytes(trainer_class, Path(path).read_bytes(), device=device)
