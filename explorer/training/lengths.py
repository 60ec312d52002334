"""A trained model at other sequence lengths than it was trained at: the question of which position scheme keeps
working past its training length (``ModelConfig.position``: learned, sinusoidal, RoPE, ALiBi or none). The Position is
a kernel page asks it of the ``lookback`` task (``explorer.training.extrapolation``)."""

from __future__ import annotations

import torch

from .._checks import integer_in
from .tasks import make_task
from .trainer import Trainer

MAX_LENGTH = 1024       # the longest sequence evaluate_lengths builds a batch at


def length_cap(task: str) -> int:
    """The longest length at which ``task`` keeps the vocabulary it is trained with (induction draws distinct tokens,
    so its vocabulary bounds its length): a model knows no token past its vocabulary, so no longer length can be
    asked of it.

    Parameters
    ----------
    task : str
        A task's name (``TASKS``).

    Returns
    -------
    int
        From 2 to ``MAX_LENGTH`` (1024).

    Examples
    --------
    >>> length_cap("reverse"), length_cap("induction")
    (1024, 64)
    """
    vocab = make_task(task).vocab
    low, high = 2, MAX_LENGTH
    if make_task(task, high).vocab == vocab:
        return high
    while high - low > 1:                     # the vocabulary grows with the length from some length on
        mid = (low + high) // 2
        low, high = (mid, high) if make_task(task, mid).vocab == vocab else (low, mid)
    return low


def check_lengths(task: str, lengths) -> list[int]:
    """``lengths`` as whole numbers from 2 to the task's ``length_cap``; ``ValueError`` with a sentence otherwise."""
    lengths = [integer_in(n, "length", 2, MAX_LENGTH) for n in lengths]
    if not lengths:
        raise ValueError("Give at least one length to evaluate at.")
    cap = length_cap(task)
    longer = [n for n in lengths if n > cap]
    if longer:
        raise ValueError(f"{task} needs more distinct tokens than the model knows at length {longer[0]}: pick "
                         f"lengths up to {cap}.")
    return lengths


def evaluate_lengths(trainer: Trainer, lengths, size: int = 256, eval_seed: int = 2024) -> list[dict]:
    """The trained model on fresh batches of its task at each length, in evaluation mode (nothing is trained).

    Parameters
    ----------
    trainer : Trainer
        A trained (or untrained) model and its task.
    lengths : sequence of int
        Sequence lengths from 2 up to the task's cap (``length_cap``: 1024, or the longest length the task's
        vocabulary allows, 64 for induction); a length past it raises ``ValueError`` saying the cap.
    size : int
        Sequences per batch (1 to 4096); the same batch for every model at a given seed and length.
    eval_seed : int
        Seeds the batches.

    Returns
    -------
    list of dict
        One row per length: ``position``, ``train_length``, ``eval_length``, ``loss`` (the task's loss), ``accuracy``
        (token tasks; "" for regression) and ``note``. Learned positions have a table only up to the length they
        were built for: past it the row has no numbers, and the note says so.

    Examples
    --------
    >>> trainer = Trainer.for_task("reverse", seed=0, position="alibi")
    >>> rows = evaluate_lengths(trainer, [12, 48], size=8)
    >>> [(r["train_length"], r["eval_length"]) for r in rows]
    [(12, 12), (12, 48)]
    >>> evaluate_lengths(Trainer.for_task("reverse", seed=0), [48], size=8)[0]["note"]
    'learned positions end at 12'
    """
    size = integer_in(size, "size", 1, 4096)
    lengths = check_lengths(trainer.task.name, lengths)
    cfg, rows = trainer.config, []
    for n in lengths:
        row = {"position": cfg.position, "train_length": trainer.task.seq_len, "eval_length": n,
               "loss": "", "accuracy": "", "note": ""}
        if cfg.position == "learned" and n > cfg.seq_len:
            row["note"] = f"learned positions end at {cfg.seq_len}"
        else:
            task = make_task(trainer.task.name, n)
            batch = task.batch(size, torch.Generator().manual_seed(eval_seed)).to(trainer.device)
            with trainer.lock, torch.inference_mode():
                was_training = trainer.model.training
                trainer.model.eval()
                out, _ = trainer.model(batch.inputs, batch.attn_mask, temperature=trainer.temperature)
                trainer.model.train(was_training)
            row["loss"] = float(task.loss(out, batch))
            accuracy = task.accuracy(out, batch)
            row["accuracy"] = "" if accuracy is None else accuracy
        rows.append(row)
    return rows
