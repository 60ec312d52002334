"""Toy tasks for the tiny transformer. Each is seeded, makes batches, and scores itself.

A batch holds ``inputs`` (token ids (B, T), or features (B, T, F) for ``sine_icl``), ``targets``,
a boolean ``loss_mask`` (B, T) of the positions that count, and an optional attention mask (T, T).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .._checks import one_of
from ..data import DATASETS
from .model import ModelConfig


@dataclass
class Batch:
    """One batch of a task. ``batch.to(device)`` moves every tensor.

    Parameters
    ----------
    inputs : torch.Tensor
        Token ids (B, T), or features (B, T, F) for ``sine_icl``.
    targets : torch.Tensor
        What each position should output: token ids (B, T) or real values (B, T).
    loss_mask : torch.Tensor
        Bool (B, T): the positions the loss and accuracy count.
    attn_mask : torch.Tensor, optional
        Bool (T, T), True = may attend, which the model applies on top of its causal mask; None: no extra mask.
    prev_rows, ind_rows : torch.Tensor, optional
        Bool (B, T), induction: the queries the previous-token score (weight on t - 1) and the induction score
        average.

    Examples
    --------
    >>> import torch
    >>> batch = make_task("reverse").batch(4, torch.Generator().manual_seed(0))
    >>> tuple(batch.inputs.shape), tuple(batch.targets.shape), batch.loss_mask.dtype
    ((4, 12), (4, 12), torch.bool)
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    loss_mask: torch.Tensor
    attn_mask: torch.Tensor | None = None
    prev_rows: torch.Tensor | None = None   # (B, T) bool: queries whose weight on t - 1 the prevtok score averages
    ind_rows: torch.Tensor | None = None    # (B, T) bool: queries the induction score averages

    def to(self, device) -> Batch:
        """This batch with every tensor on ``device``.

        Parameters
        ----------
        device : str or torch.device

        Returns
        -------
        Batch (a new one: this one stays where it is)

        Examples
        --------
        >>> batch = make_task("sort").batch(2, torch.Generator().manual_seed(0)).to("cpu")
        >>> batch.inputs.device.type, batch.attn_mask is None
        ('cpu', True)
        """
        moved = {k: None if v is None else v.to(device) for k, v in vars(self).items()}
        return Batch(**moved)


@dataclass(frozen=True)
class TaskDefaults:
    """The settings a task trains well with: what the page loads when the task is picked and what
    ``explorer-train --task NAME`` uses.

    Parameters
    ----------
    n_layers, n_heads, d_model, seq_len : int
        The model's shape (``ModelConfig``) and the sequence length.
    with_mlp : bool
        Whether the blocks have MLPs.
    lr, warmup : float, int
        Peak learning rate and steps of linear warmup.

    Examples
    --------
    >>> d = make_task("induction").defaults
    >>> d.n_layers, d.seq_len
    (2, 32)
    """
    n_layers: int = 1
    n_heads: int = 2
    d_model: int = 64
    seq_len: int = 12
    with_mlp: bool = False
    lr: float = 3e-3
    warmup: int = 20


class Task:
    """A toy task; its description for people is UI text (``task.<name>`` and ``watch.<name>`` in
    explorer/text/live_training.toml).

    ``batch(size, generator)`` draws a seeded ``Batch``; ``loss(out, batch)`` and ``accuracy(out, batch)`` score a
    model's output on it; ``model_config(**overrides)`` is a ``ModelConfig`` for the task; ``defaults`` holds the
    settings it trains well with, and ``entropy_ceiling()`` the entropy of uniform attention under its mask.

    Examples
    --------
    >>> import torch
    >>> task = make_task("induction")
    >>> task.causal, task.model_config().n_layers
    (True, 2)
    >>> batch = task.batch(8, torch.Generator().manual_seed(0))
    >>> out = torch.zeros(8, task.seq_len, task.vocab)       # uniform logits: the loss is log(vocab)
    >>> task.vocab, round(float(task.loss(out, batch)), 4)
    (64, 4.1589)
    """

    name = ""
    causal = False
    regression = False           # True: MSE on real targets; False: cross-entropy on token ids
    defaults = TaskDefaults()
    sharp_heads_expected = True  # False: the task needs heads that average, so a one-position head is a problem

    def __init__(self, seq_len: int | None = None, vocab: int = 16):
        self.seq_len, self.vocab = seq_len or self.defaults.seq_len, vocab

    def model_config(self, **overrides) -> ModelConfig:
        """A ``ModelConfig`` for this task: its vocabulary, length and mask, the shape of its ``defaults``, and
        ``overrides`` on top.

        Parameters
        ----------
        **overrides
            Any ``ModelConfig`` field (n_layers, n_heads, d_model, with_mlp, position, ...).

        Returns
        -------
        ModelConfig

        Examples
        --------
        >>> cfg = make_task("induction").model_config(n_heads=4)
        >>> cfg.vocab, cfg.seq_len, cfg.causal, cfg.n_heads
        (64, 32, True, 4)
        """
        d = self.defaults
        base = dict(vocab=self.vocab, seq_len=self.seq_len, causal=self.causal, n_layers=d.n_layers,
                    n_heads=d.n_heads, d_model=d.d_model, with_mlp=d.with_mlp)
        base.update(overrides)
        return ModelConfig(**base)

    def attention_mask(self) -> torch.Tensor:
        """Which keys each query may attend to, as the model applies it.

        Returns
        -------
        torch.Tensor
            Bool (T, T), True = may attend.

        Examples
        --------
        >>> make_task("induction", seq_len=12).attention_mask()[:3, :3].int().tolist()   # causal
        [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
        """
        allowed = torch.ones(self.seq_len, self.seq_len, dtype=torch.bool)
        return allowed.tril() if self.causal else allowed

    def entropy_ceiling(self) -> float:
        """Mean row entropy of uniform attention under ``attention_mask``: the most a head's entropy
        can be (log T bidirectional; log(T!)/T causal).

        Returns
        -------
        float (nats)

        Examples
        --------
        >>> import math; round(make_task("reverse").entropy_ceiling(), 4) == round(math.log(12), 4)
        True
        """
        counts = self.attention_mask().sum(-1).double()
        return float(counts[counts > 0].log().mean())

    def loss_floor(self) -> float | None:
        """The lowest loss any model can reach on average (the noise variance), or None when it is 0.

        Returns
        -------
        float or None

        Examples
        --------
        >>> make_task("sine_icl").loss_floor(), make_task("reverse").loss_floor()
        (0.09, None)
        """
        return None

    def map_block(self, example: Batch) -> tuple[int, int, int, int] | None:
        """A block of the attention maps worth outlining on the held-out example, as (first query, last query,
        first key, last key) positions, or None.

        Parameters
        ----------
        example : Batch
            A batch of one (``held_out_example``).

        Returns
        -------
        tuple of int, or None

        Examples
        --------
        >>> make_task("reverse").map_block(held_out_example(make_task("reverse"))) is None
        True
        """
        return None

    def batch(self, size: int, gen: torch.Generator) -> Batch:
        """A fresh batch of ``size`` examples drawn from ``gen`` (each task defines it).

        Parameters
        ----------
        size : int
        gen : torch.Generator
            The same generator state gives the same batch.

        Returns
        -------
        Batch

        Examples
        --------
        >>> b = make_task("reverse").batch(3, torch.Generator().manual_seed(0)); tuple(b.inputs.shape)
        (3, 12)
        >>> bool((b.targets == b.inputs.flip(1)).all())
        True
        """
        raise NotImplementedError

    def loss(self, out: torch.Tensor, b: Batch) -> torch.Tensor:
        """The training loss of a model's output on ``b``, over the positions of ``b.loss_mask``: cross-entropy
        (nats) for token tasks, mean squared error for a regression.

        Parameters
        ----------
        out : torch.Tensor
            The model's output, (B, T, vocab) or (B, T, 1).
        b : Batch

        Returns
        -------
        torch.Tensor (a scalar)

        Examples
        --------
        >>> task = make_task("reverse"); b = task.batch(4, torch.Generator().manual_seed(0))
        >>> perfect = torch.nn.functional.one_hot(b.targets, task.vocab).float() * 50
        >>> float(task.loss(perfect, b)) < 1e-6
        True
        """
        if self.regression:
            return F.mse_loss(out[..., 0][b.loss_mask], b.targets[b.loss_mask])
        return F.cross_entropy(out[b.loss_mask], b.targets[b.loss_mask])

    def accuracy(self, out: torch.Tensor, b: Batch) -> float | None:
        """The share of scored positions (``b.loss_mask``) whose most likely token is the target; None for a
        regression.

        Parameters
        ----------
        out : torch.Tensor
            (B, T, vocab) logits.
        b : Batch

        Returns
        -------
        float or None
            From 0 to 1.

        Examples
        --------
        >>> task = make_task("sort"); b = task.batch(4, torch.Generator().manual_seed(0))
        >>> task.accuracy(torch.nn.functional.one_hot(b.targets, task.vocab).float(), b)
        1.0
        """
        if self.regression:
            return None
        return float((out.argmax(-1) == b.targets)[b.loss_mask].float().mean())


class Reverse(Task):
    """Output the input backwards (bidirectional); one layer learns an anti-diagonal map."""

    name = "reverse"
    defaults = TaskDefaults(n_layers=1, seq_len=12)

    def batch(self, size, gen):
        x = torch.randint(0, self.vocab, (size, self.seq_len), generator=gen)
        return Batch(x, x.flip(1), torch.ones_like(x, dtype=torch.bool))


class Sort(Task):
    """Output the input tokens in ascending order (bidirectional)."""

    name = "sort"
    defaults = TaskDefaults(n_layers=2, seq_len=12)

    def batch(self, size, gen):
        x = torch.randint(0, self.vocab, (size, self.seq_len), generator=gen)
        return Batch(x, x.sort(dim=1).values, torch.ones_like(x, dtype=torch.bool))


class Induction(Task):
    """Next-token prediction on sequences that repeat a random prefix once (causal).

    Each sequence starts with p distinct random tokens (p drawn from 6 to T/2, so the repeat's offset
    varies and position alone cannot predict), then the same p tokens again, then random filler. Only
    the repeat is predictable, and only by looking up what followed the current token the first time:
    a previous-token head (layer 0) feeding an induction head (layer 1).

    Scores: ``prev_rows`` are the positions 1..p-1 of the first copy (where an induction head reads
    the previous token); ``ind_rows`` the positions of the repeat that are scored.
    """

    name = "induction"
    causal = True
    defaults = TaskDefaults(n_layers=2, n_heads=2, d_model=64, seq_len=32, lr=1e-3, warmup=50)
    MIN_PERIOD = 6

    def __init__(self, seq_len: int | None = None, vocab: int = 64):
        super().__init__(max(seq_len or self.defaults.seq_len, 2 * self.MIN_PERIOD), vocab)
        self.vocab = max(vocab, self.seq_len)          # the prefix's tokens are distinct

    def batch(self, size, gen):
        T = self.seq_len
        x = torch.randint(0, self.vocab, (size, T), generator=gen)
        loss_mask = torch.zeros(size, T, dtype=torch.bool)
        prev_rows = torch.zeros(size, T, dtype=torch.bool)
        periods = torch.randint(self.MIN_PERIOD, T // 2 + 1, (size,), generator=gen)
        for b, p in enumerate(periods.tolist()):
            x[b, :p] = torch.randperm(self.vocab, generator=gen)[:p]
            x[b, p:2 * p] = x[b, :p]
            loss_mask[b, p:2 * p - 1] = True             # predict tokens 2..p of the repeat
            prev_rows[b, 1:p] = True
        return Batch(x, torch.roll(x, -1, dims=1), loss_mask, prev_rows=prev_rows, ind_rows=loss_mask.clone())

    def map_block(self, example: Batch) -> tuple[int, int, int, int]:
        """The repeat's queries (p .. 2p-1) over the first copy's keys (0 .. p-1): an induction head's stripe,
        one key right of the diagonal of this block (query p+i reads key i+1), lies inside it."""
        p = int(example.prev_rows[0].sum()) + 1
        return p, 2 * p - 1, 0, p - 1


class SineICL(Task):
    """In-context kernel regression: (x_i, y_i) pairs of the noisy sine, then queries with y hidden."""

    name = "sine_icl"
    regression = True
    defaults = TaskDefaults(n_layers=1, seq_len=24)
    sharp_heads_expected = False     # a query should average the context points near its x
    NOISE = 0.3                      # sd of the noise on y: the best possible MSE is NOISE²

    def __init__(self, seq_len: int | None = None, vocab: int = 16):
        super().__init__(max(seq_len or self.defaults.seq_len, 6), vocab)
        self.n_query = max(2, self.seq_len // 4)
        self.n_ctx = self.seq_len - self.n_query
        self.spec = DATASETS["sine_mix"]

    def model_config(self, **overrides):
        return super().model_config(input_dim=3, n_outputs=1, **overrides)

    def loss_floor(self) -> float:
        return self.NOISE ** 2

    def batch(self, size, gen):
        lo, hi = self.spec.x_range
        x = torch.rand(size, self.seq_len, generator=gen, dtype=torch.float64) * (hi - lo) + lo
        y_true = torch.as_tensor(self.spec.true_fn(x.numpy()))
        y = y_true + self.NOISE * torch.randn(size, self.seq_len, generator=gen, dtype=torch.float64)
        is_query = torch.zeros(size, self.seq_len, dtype=torch.bool)
        is_query[:, self.n_ctx:] = True
        feats = torch.stack([x / 3, torch.where(is_query, 0.0, y), is_query.double()], dim=-1).float()
        return Batch(feats, y.float(), is_query, self.attention_mask())

    def attention_mask(self) -> torch.Tensor:
        # every position may attend to the context pairs only (and a query also to itself)
        attn = torch.zeros(self.seq_len, self.seq_len, dtype=torch.bool)
        attn[:, : self.n_ctx] = True
        return attn | torch.eye(self.seq_len, dtype=torch.bool)


class Lookback(Task):
    """At each position, the token ``BACK`` (2) places before it (causal): a task that needs relative position only.
    Tokens are drawn with replacement, so any length can be asked (``explorer.training.extrapolation``)."""

    name = "lookback"
    causal = True
    defaults = TaskDefaults(n_layers=1, n_heads=2, d_model=32, seq_len=16)
    BACK = 2

    def __init__(self, seq_len: int | None = None, vocab: int = 16):
        super().__init__(max(seq_len or self.defaults.seq_len, self.BACK + 1), vocab)

    def batch(self, size, gen):
        x = torch.randint(0, self.vocab, (size, self.seq_len), generator=gen)
        scored = torch.zeros_like(x, dtype=torch.bool)
        scored[:, self.BACK:] = True               # (the first BACK positions have nothing that far back)
        return Batch(x, torch.roll(x, self.BACK, dims=1), scored)


# The tasks Live training offers; ALL_TASKS adds those made for one experiment (make_task knows them all).
TASKS: dict[str, type[Task]] = {t.name: t for t in (Reverse, Induction, Sort, SineICL)}
ALL_TASKS: dict[str, type[Task]] = {**TASKS, Lookback.name: Lookback}


def make_task(name: str, seq_len: int | None = None, vocab: int | None = None) -> Task:
    """The task ``name`` at ``seq_len`` (default: the task's own) and ``vocab`` (default: the task's own).

    Parameters
    ----------
    name : str
        One of ``ALL_TASKS``: reverse, induction, sort, sine_icl (``TASKS``, Live training's) or lookback.
    seq_len : int, optional
    vocab : int, optional

    Returns
    -------
    Task

    Examples
    --------
    >>> task = make_task("sort", seq_len=8)
    >>> task.name, task.seq_len, task.causal
    ('sort', 8, False)
    """
    one_of(name, ALL_TASKS, "task")
    cls = ALL_TASKS[name]
    return cls(seq_len) if vocab is None else cls(seq_len, vocab)


def held_out_example(task: Task, seed: int = 12345) -> Batch:
    """A fixed held-out example (batch of 1) for drawing attention maps."""
    return task.batch(1, torch.Generator().manual_seed(seed))


__all__ = ["ALL_TASKS", "TASKS", "Batch", "Task", "TaskDefaults", "held_out_example", "make_task"]
