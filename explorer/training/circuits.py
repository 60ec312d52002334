"""Testing what heads do: switch heads off, and read a head's circuits straight from the weights.

``ablate`` runs the model with chosen heads' outputs replaced (by 0, or by their mean over the batch) and
leaves the weights alone. The circuit readings follow Elhage et al. (2021), "A Mathematical Framework for
Transformer Circuits", for one-hot token inputs, ignoring LayerNorm scales, MLPs and position embeddings
(the page says so when a model has MLPs):

* QK circuit of head h: ``W_E W_Q^hᵀ W_K^h W_Eᵀ``, entry [i, j] = the logit a query token i gives a key token j.
* OV circuit: ``W_U W_O^h W_V^h W_Eᵀ`` (vocab × vocab), column j = the logits the head writes when it attends to
  token j; its copying score is Σλ / Σ|λ| over its eigenvalues (1 for a positive multiple of the identity,
  -1 for a negative one).
* K-composition of a layer-0 head a into a layer-1 head b: ``‖W_QK^b W_OV^a‖_F / (‖W_QK^b‖_F ‖W_OV^a‖_F)``,
  how much b's keys read what a wrote (0: not at all; 1 at most).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from .._checks import one_of
from .model import TinyTransformer

HOW = ("zero", "mean")


def ablate(model: TinyTransformer, inputs: torch.Tensor, heads: Iterable[tuple[int, int]], how: str = "zero",
           attn_mask: torch.Tensor | None = None, temperature: float = 1.0) -> torch.Tensor:
    """The model's output (as ``model(inputs)[0]``) with the listed heads switched off.

    Parameters
    ----------
    model : TinyTransformer
    inputs : torch.Tensor
        Token ids (B, T) or features (B, T, input_dim).
    heads : iterable of (layer, head)
        The heads to switch off; empty = the intact model.
    how : {"zero", "mean"}
        "zero": the head's output (its attention-weighted values, before the output projection) is 0;
        "mean": it is the head's mean output over the batch at each position.
    attn_mask, temperature
        As for the model's forward pass.

    Returns
    -------
    torch.Tensor
        (B, T, out_size), computed in eval mode without gradients; the weights and the train/eval mode are
        left as they were.

    Examples
    --------
    >>> from explorer.training import ModelConfig, TinyTransformer
    >>> m = TinyTransformer(ModelConfig(vocab=8, seq_len=6)).init_weights(torch.Generator().manual_seed(0))
    >>> x = torch.randint(0, 8, (2, 6), generator=torch.Generator().manual_seed(1))
    >>> bool(torch.equal(ablate(m, x, []), m(x)[0].detach()))
    True
    """
    one_of(how, HOW, "how")
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        if not (0 <= layer < model.cfg.n_layers and 0 <= head < model.cfg.n_heads):
            raise ValueError(f"head ({layer}, {head}) is not in a {model.cfg.n_layers}-layer, "
                             f"{model.cfg.n_heads}-head model.")
        by_layer.setdefault(layer, []).append(head)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            out, _ = model(inputs, attn_mask, temperature=temperature,
                           ablations={layer: (tuple(hs), how) for layer, hs in by_layer.items()})
    finally:
        model.train(was_training)
    return out


def _head_matrices(model: TinyTransformer, layer: int, head: int) -> tuple[torch.Tensor, ...]:
    """(W_Q, W_K, W_V, W_O) of one head as float64: the first three (D, C), W_O (C, D)."""
    C, H = model.cfg.d_model, model.cfg.n_heads
    D = C // H
    attn = model.blocks[layer].attn
    w = attn.qkv.weight.detach().double()                           # (3C, C): rows q, then k, then v
    rows = slice(head * D, (head + 1) * D)
    wq, wk, wv = w[:C][rows], w[C:2 * C][rows], w[2 * C:][rows]
    wo = attn.proj.weight.detach().double()[:, rows]                 # (C, D)
    return wq, wk, wv, wo


def _embedding(model: TinyTransformer) -> torch.Tensor:
    if model.cfg.input_dim:
        raise ValueError("circuits read token embeddings: this model takes feature inputs.")
    return model.embed.weight.detach().double()                     # (vocab, C)


def qk_circuit(model: TinyTransformer, layer: int, head: int) -> np.ndarray:
    """(vocab, vocab): the attention logit (before 1/√D) a query token i gives a key token j, ``W_E W_Qᵀ W_K W_Eᵀ``.

    Parameters
    ----------
    model : TinyTransformer
        With token inputs.
    layer, head : int

    Returns
    -------
    numpy.ndarray, shape (vocab, vocab)

    Examples
    --------
    >>> import torch
    >>> from explorer.training import ModelConfig, TinyTransformer
    >>> model = TinyTransformer(ModelConfig(n_layers=2, n_heads=2)).init_weights(torch.Generator().manual_seed(0))
    >>> qk_circuit(model, 1, 0).shape
    (16, 16)
    """
    wq, wk, _, _ = _head_matrices(model, layer, head)
    e = _embedding(model)
    return ((e @ wq.T) @ (wk @ e.T)).numpy()


def ov_circuit(model: TinyTransformer, layer: int, head: int) -> np.ndarray:
    """(vocab, vocab): column j = the output logits the head writes when it attends to token j,
    ``W_U W_O W_V W_Eᵀ``.

    Parameters
    ----------
    model : TinyTransformer
    layer, head : int

    Returns
    -------
    numpy.ndarray, shape (out_size, vocab)

    Examples
    --------
    >>> import torch
    >>> from explorer.training import ModelConfig, TinyTransformer
    >>> model = TinyTransformer(ModelConfig(n_layers=2, n_heads=2)).init_weights(torch.Generator().manual_seed(0))
    >>> ov_circuit(model, 0, 1).shape
    (16, 16)
    """
    _, _, wv, wo = _head_matrices(model, layer, head)
    e, wu = _embedding(model), model.head.weight.detach().double()  # W_U (out_size, C)
    return (wu @ wo @ wv @ e.T).numpy()


def copying_score(matrix: np.ndarray) -> float:
    """Σλ / Σ|λ| over the eigenvalues of a square matrix: 1 when it copies (a positive multiple of the identity),
    -1 for a negative multiple, near 0 for no preference.

    Parameters
    ----------
    matrix : array_like, shape (n, n)

    Returns
    -------
    float

    Examples
    --------
    >>> copying_score(3 * np.eye(4)), copying_score(-np.eye(4))
    (1.0, -1.0)
    """
    eig = np.linalg.eigvals(np.asarray(matrix, dtype=float))
    total = np.abs(eig).sum()
    return float(eig.sum().real / total) if total > 0 else 0.0


def k_composition(model: TinyTransformer, earlier: tuple[int, int], later: tuple[int, int]) -> float:
    """How much the keys of head ``later`` read what head ``earlier`` writes:
    ``‖W_QK W_OV‖_F / (‖W_QK‖_F ‖W_OV‖_F)`` with ``W_QK = W_Qᵀ W_K`` of the later head and ``W_OV = W_O W_V`` of
    the earlier one (both C × C), between 0 and 1.

    Parameters
    ----------
    model : TinyTransformer
    earlier, later : (int, int)
        (layer, head) pairs, ``earlier`` in a lower layer.

    Returns
    -------
    float

    Examples
    --------
    >>> import torch
    >>> from explorer.training import ModelConfig, TinyTransformer
    >>> model = TinyTransformer(ModelConfig(n_layers=2, n_heads=2)).init_weights(torch.Generator().manual_seed(0))
    >>> 0 <= k_composition(model, (0, 1), (1, 0)) <= 1
    True
    """
    if earlier[0] >= later[0]:
        raise ValueError("the earlier head must be in an earlier layer than the later one.")
    wq, wk, _, _ = _head_matrices(model, *later)
    _, _, wv, wo = _head_matrices(model, *earlier)
    w_qk, w_ov = wq.T @ wk, wo @ wv
    denominator = torch.linalg.norm(w_qk) * torch.linalg.norm(w_ov)
    return float(torch.linalg.norm(w_qk @ w_ov) / denominator) if denominator > 0 else 0.0


def head_importance(model: TinyTransformer, batch, loss_fn, how: str = "zero", temperature: float = 1.0) -> dict:
    """The loss on ``batch`` with each head switched off in turn, next to the intact loss:
    ``{"intact": loss, (layer, head): loss, ...}`` (``loss_fn(out, batch)``, e.g. a task's ``loss``).

    Parameters
    ----------
    model : TinyTransformer
    batch : Batch
    loss_fn : callable
        ``loss_fn(out, batch)`` -> a scalar tensor.
    how : {"zero", "mean"}
        As in ``ablate``.
    temperature : float

    Returns
    -------
    dict

    Examples
    --------
    >>> import torch
    >>> from explorer.training import Trainer
    >>> trainer = Trainer.for_task("induction", seed=0)
    >>> batch = trainer.task.batch(8, torch.Generator().manual_seed(0))
    >>> sorted(head_importance(trainer.model, batch, trainer.task.loss), key=str)[:3]
    [(0, 0), (0, 1), (1, 0)]
    """
    with torch.inference_mode():
        result = {"intact": float(loss_fn(ablate(model, batch.inputs, [], how, batch.attn_mask, temperature), batch))}
        for layer in range(model.cfg.n_layers):
            for head in range(model.cfg.n_heads):
                out = ablate(model, batch.inputs, [(layer, head)], how, batch.attn_mask, temperature)
                result[(layer, head)] = float(loss_fn(out, batch))
    return result
