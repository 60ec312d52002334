"""Toy tasks for the tiny transformer. Each is seeded, makes batches, and scores itself.

A batch holds ``inputs`` (token ids (B, T), or features (B, T, F) for ``sine_icl``), ``targets``,
a boolean ``loss_mask`` (B, T) of the positions that count, and an optional attention mask (T, T).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..data import DATASETS
from .model import ModelConfig


@dataclass
class Batch:
    inputs: torch.Tensor
    targets: torch.Tensor
    loss_mask: torch.Tensor
    attn_mask: torch.Tensor | None = None

    def to(self, device) -> Batch:
        return Batch(self.inputs.to(device), self.targets.to(device), self.loss_mask.to(device),
                     None if self.attn_mask is None else self.attn_mask.to(device))


class Task:
    """A toy task; its description for people is UI text (``task.<name>`` and ``watch.<name>`` in
    explorer/i18n.py)."""

    name = ""
    causal = False
    regression = False           # True: MSE on real targets; False: cross-entropy on token ids
    default_layers = 1

    def __init__(self, seq_len: int = 12, vocab: int = 16):
        self.seq_len, self.vocab = seq_len, vocab

    def model_config(self, **overrides) -> ModelConfig:
        base = dict(vocab=self.vocab, seq_len=self.seq_len, causal=self.causal,
                    n_layers=self.default_layers)
        base.update(overrides)
        return ModelConfig(**base)

    def batch(self, size: int, gen: torch.Generator) -> Batch:
        raise NotImplementedError

    def loss(self, out: torch.Tensor, b: Batch) -> torch.Tensor:
        if self.regression:
            return F.mse_loss(out[..., 0][b.loss_mask], b.targets[b.loss_mask])
        return F.cross_entropy(out[b.loss_mask], b.targets[b.loss_mask])

    def accuracy(self, out: torch.Tensor, b: Batch) -> float | None:
        if self.regression:
            return None
        return float((out.argmax(-1) == b.targets)[b.loss_mask].float().mean())


class Reverse(Task):
    """Output the input backwards (bidirectional); one layer learns an anti-diagonal map."""

    name = "reverse"

    def batch(self, size, gen):
        x = torch.randint(0, self.vocab, (size, self.seq_len), generator=gen)
        return Batch(x, x.flip(1), torch.ones_like(x, dtype=torch.bool))


class Sort(Task):
    """Output the input tokens in ascending order (bidirectional)."""

    name = "sort"
    default_layers = 2

    def batch(self, size, gen):
        x = torch.randint(0, self.vocab, (size, self.seq_len), generator=gen)
        return Batch(x, x.sort(dim=1).values, torch.ones_like(x, dtype=torch.bool))


class Induction(Task):
    """Next-token prediction on random tokens with one block repeated at a random offset (causal):
    only the repeat is predictable, by induction heads."""

    name = "induction"
    causal = True
    default_layers = 2

    def __init__(self, seq_len: int = 24, vocab: int = 16):
        super().__init__(max(seq_len, 8), vocab)
        self.block = max(3, self.seq_len // 4)

    def batch(self, size, gen):
        T, m = self.seq_len, self.block
        x = torch.randint(0, self.vocab, (size, T), generator=gen)
        targets = torch.roll(x, -1, dims=1)
        loss_mask = torch.zeros(size, T, dtype=torch.bool)
        for b in range(size):
            first = int(torch.randint(0, T - 2 * m + 1, (1,), generator=gen))
            second = int(torch.randint(first + m, T - m + 1, (1,), generator=gen))
            x[b, second:second + m] = x[b, first:first + m]
            targets[b] = torch.roll(x[b], -1)
            loss_mask[b, second:second + m - 1] = True   # predict tokens 2..m of the repeat
        return Batch(x, targets, loss_mask)


class SineICL(Task):
    """In-context kernel regression: (x_i, y_i) pairs of the noisy sine, then queries with y hidden."""

    name = "sine_icl"
    regression = True

    def __init__(self, seq_len: int = 24, vocab: int = 16):
        super().__init__(max(seq_len, 6), vocab)
        self.n_query = max(2, self.seq_len // 4)
        self.n_ctx = self.seq_len - self.n_query
        self.spec = DATASETS["sine_mix"]

    def model_config(self, **overrides):
        return super().model_config(input_dim=3, n_outputs=1, **overrides)

    def batch(self, size, gen):
        lo, hi = self.spec.x_range
        x = torch.rand(size, self.seq_len, generator=gen, dtype=torch.float64) * (hi - lo) + lo
        y_true = torch.as_tensor(self.spec.true_fn(x.numpy()))
        y = y_true + 0.3 * torch.randn(size, self.seq_len, generator=gen, dtype=torch.float64)
        is_query = torch.zeros(size, self.seq_len, dtype=torch.bool)
        is_query[:, self.n_ctx:] = True
        feats = torch.stack([x / 3, torch.where(is_query, 0.0, y), is_query.double()], dim=-1).float()
        # every position may attend to the context pairs only (and a query also to itself)
        attn = torch.zeros(self.seq_len, self.seq_len, dtype=torch.bool)
        attn[:, : self.n_ctx] = True
        attn |= torch.eye(self.seq_len, dtype=torch.bool)
        return Batch(feats, y.float(), is_query, attn)


TASKS: dict[str, type[Task]] = {t.name: t for t in (Reverse, Induction, Sort, SineICL)}


def make_task(name: str, seq_len: int | None = None, vocab: int = 16) -> Task:
    if name not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {name!r}.")
    cls = TASKS[name]
    return cls(seq_len, vocab) if seq_len is not None else cls(vocab=vocab)


def held_out_example(task: Task, seed: int = 12345) -> Batch:
    """A fixed held-out example (batch of 1) for drawing attention maps."""
    return task.batch(1, torch.Generator().manual_seed(seed))


__all__ = ["TASKS", "Batch", "Task", "held_out_example", "make_task"]
