"""Experiments of the Masking page: what each masking mode does to weights, outputs and gradients.

Every function works on one example: q, k, v of shape (L, d) / (L, dv) and a boolean (L, L) mask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from . import attention as A
from ._checks import integer_in, one_of

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)

MASK_TYPES = ("causal", "padding", "causal + padding")


def make_mask(kind: str, length: int, valid_length: int | None = None) -> torch.Tensor:
    """An (L, L) boolean mask, True where a query may attend to a key.

    Parameters
    ----------
    kind : {"causal", "padding", "causal + padding"}
    length : int
        L, from 1 to 4096.
    valid_length : int, optional
        Keys at positions >= ``valid_length`` are padding (default: none are).

    Returns
    -------
    torch.Tensor, shape (L, L), bool

    Examples
    --------
    >>> make_mask("causal + padding", 4, valid_length=3).int().tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]
    """
    one_of(kind, MASK_TYPES, "mask type")
    length = integer_in(length, "sequence length", 1, 4096)
    valid = length if valid_length is None else integer_in(valid_length, "valid length", 0, length)
    causal = A.causal_mask(length)
    padding = A.padding_mask([valid], length)[0][None, :].expand(length, length)
    return {"causal": causal, "padding": padding, "causal + padding": causal & padding}[kind]


def example(length: int = 8, d: int = 16, seed: int = 0, dv: int = 4):
    """Seeded q, k, v with iid N(0, 1) entries, float64.

    Parameters
    ----------
    length : int
        L, the number of positions.
    d : int
        The dimension of q and k.
    seed : int
    dv : int
        The dimension of v.

    Returns
    -------
    (q, k, v) : tuple of torch.Tensor, shapes (L, d), (L, d), (L, dv)

    Examples
    --------
    >>> q, k, v = example(6, d=8, seed=0)
    >>> tuple(q.shape), tuple(v.shape), q.dtype
    ((6, 8), (6, 4), torch.float64)
    """
    length = integer_in(length, "sequence length", 1, 4096)
    d = integer_in(d, "d", 1, 4096)
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    return tuple(torch.randn(length, n, generator=gen, dtype=torch.float64) for n in (d, d, dv))


def _logits(q, k):
    return q @ k.T / q.shape[-1] ** 0.5


def all_modes(q, k, v, mask) -> dict[str, dict[str, torch.Tensor]]:
    """Weights, outputs, row sums and output norms of every masking mode (``explorer.attention.MASK_MODES``).

    Parameters
    ----------
    q, k, v : torch.Tensor
        (L, d), (L, d), (L, dv).
    mask : torch.Tensor, shape (L, L), bool

    Returns
    -------
    dict
        mode -> {"weights", "output", "row_sum", "output_norm"}.

    Examples
    --------
    >>> q, k, v = example(6, seed=0)
    >>> modes = all_modes(q, k, v, make_mask("causal", 6))
    >>> bool(modes["pre"]["row_sum"].sub(1).abs().max() < 1e-12)       # masked before the softmax: rows sum to 1
    True
    >>> bool((modes["post"]["row_sum"] < 1 - 1e-3).any())              # zeroed after it: mass is lost
    True
    """
    out = {}
    for mode in A.MASK_MODES:
        o, w = A.masked_attention(q, k, v, mask, mode)
        out[mode] = {"weights": w, "output": o, "row_sum": w.sum(-1), "output_norm": o.norm(dim=-1)}
    return out


LEAK_CHANNELS = ("both", "key", "value")


def leakage(q, k, v, mask, position: int | None = None, size: float = 5.0, channel: str = "both") -> pd.Series:
    """Largest change in the outputs of queries that may NOT see key ``position`` when that position's
    key, value or both (``channel``) are perturbed by ``size`` (default: the last position). Zero means
    no leak through that channel.

    Parameters
    ----------
    q, k, v : torch.Tensor
        (L, d), (L, d), (L, dv).
    mask : torch.Tensor, shape (L, L), bool
    position : int, optional
        The key to perturb (default: the last).
    size : float
        How much is added to its key and/or value.
    channel : {"both", "key", "value"}

    Returns
    -------
    pandas.Series
        mode -> the largest output change among the queries that may not see ``position``.

    Examples
    --------
    >>> q, k, v = example(6, seed=0)
    >>> leaks = leakage(q, k, v, make_mask("causal", 6), channel="key")
    >>> float(leaks["pre"]), bool(leaks["post"] > 0.01)      # zeroing after the softmax leaks through the normaliser
    (0.0, True)
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    one_of(channel, LEAK_CHANNELS, "channel")
    return pd.Series(_leaks(q, k, v, mask, (channel,), position, size)[channel], name="max_output_change")


def _leaks(q, k, v, mask, channels, position: int | None = None, size: float = 5.0) -> dict[str, dict[str, float]]:
    """``leakage`` of each channel, per mode: the unperturbed inputs and each channel's perturbed ones go through
    attention as one batch, once per mode (so an unchanged output is the same to the last bit)."""
    pos = k.shape[0] - 1 if position is None else position
    blind = ~mask[:, pos]
    n = len(channels) + 1
    keys, values = k.repeat(n, 1, 1), v.repeat(n, 1, 1)        # [unperturbed, one per channel]
    for i, channel in enumerate(channels, start=1):
        if channel in ("both", "key"):
            keys[i, pos] += size
        if channel in ("both", "value"):
            values[i, pos] += size
    changes: dict[str, dict[str, float]] = {c: {} for c in channels}
    for mode in A.MASK_MODES:
        out, _ = A.masked_attention(q.expand(n, *q.shape), keys, values, mask, mode)
        diff = (out[1:] - out[0]).abs().amax(-1)[:, blind]       # (channel, blind query)
        for i, channel in enumerate(channels):
            changes[channel][mode] = float(diff[i].max()) if diff.shape[1] else 0.0
    return changes


def gradients(q, k, v, mask, seed: int = 1) -> dict[str, torch.Tensor]:
    """d(loss)/d(logits) per mode for the fixed loss sum(output * G), G ~ N(0, 1) seeded.

    Parameters
    ----------
    q, k, v : torch.Tensor
        (L, d), (L, d), (L, dv).
    mask : torch.Tensor, shape (L, L), bool
    seed : int
        Seeds G.

    Returns
    -------
    dict
        mode -> (L, L) gradient with respect to the logits.

    Examples
    --------
    >>> q, k, v = example(6, seed=0)
    >>> mask = make_mask("causal", 6)
    >>> grads = gradients(q, k, v, mask)
    >>> float(grads["pre"][~mask].abs().max()), bool(grads["post"][~mask].abs().max() > 0)
    (0.0, True)
    """
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(q.shape[0], v.shape[1], generator=gen, dtype=q.dtype)
    grads = {}
    for mode in A.MASK_MODES:
        logits = _logits(q, k).detach().requires_grad_(True)
        out = A.masked_weights(logits, mask, mode) @ v
        (out * g).sum().backward()
        grads[mode] = logits.grad.detach()
    return grads


def report(q, k, v, mask, results: dict | None = None, grads: dict | None = None) -> pd.DataFrame:
    """One row per mode: the numbers behind each verdict on the Masking page.

    Parameters
    ----------
    q, k, v : torch.Tensor
        (L, d), (L, d), (L, dv).
    mask : torch.Tensor, shape (L, L), bool
    results, grads : dict, optional
        This example's ``all_modes`` / ``gradients``, when computed already (the page draws them too).

    Returns
    -------
    pandas.DataFrame
        Columns ``mode``, ``max_diff_vs_sdpa`` (against torch's SDPA), row sums, ``mass_on_masked``, the leaks
        through key, value and both, ``grad_on_masked`` and ``grad_diff_vs_pre``.

    Examples
    --------
    >>> q, k, v = example(6, seed=0)
    >>> table = report(q, k, v, make_mask("causal", 6)).set_index("mode")
    >>> bool(table.loc["pre", "max_diff_vs_sdpa"] < 1e-12), float(table.loc["pre", "leak"])
    (True, 0.0)
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    results = all_modes(q, k, v, mask) if results is None else results
    ref = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]
    leaks = _leaks(q, k, v, mask, LEAK_CHANNELS)
    grads = gradients(q, k, v, mask) if grads is None else grads
    correct = results["pre"]["row_sum"]          # 1 where a row may attend to some key, 0 where it may not
    rows = []
    for mode, r in results.items():
        g = grads[mode]
        rows.append({
            "mode": mode,
            "max_diff_vs_sdpa": float((r["output"] - ref).abs().max()),
            "mean_row_sum": float(r["row_sum"].mean()),
            "min_row_sum": float(r["row_sum"].min()),
            "correct_row_sum": float(correct.mean()),
            "row_sum_error": float((r["row_sum"] - correct).abs().max()),
            "mass_on_masked": float(r["weights"][~mask].sum()),
            "leak": float(leaks["both"][mode]),
            "leak_key": float(leaks["key"][mode]),
            "leak_value": float(leaks["value"][mode]),
            "grad_on_masked": float(g[~mask].abs().max()) if bool((~mask).any()) else 0.0,
            "grad_diff_vs_pre": float((g - grads["pre"]).abs().max()),
        })
    return pd.DataFrame(rows)


def renorm_underflow(length: int = 8, gap: float = 120.0, dtype=torch.float32) -> dict[str, float]:
    """Why "post_renorm" is fragile: when the masked logits exceed the allowed ones by ``gap``, the
    allowed softmax values underflow to 0 before renormalising.

    Parameters
    ----------
    length : int
    gap : float
        How far the masked logits lie above the allowed ones.
    dtype : torch.dtype

    Returns
    -------
    dict
        The first row's sum under ``pre`` and ``post_renorm``.

    Examples
    --------
    >>> renorm_underflow(gap=120.0)                 # exp(-120) underflows in float32: nothing left to renormalise
    {'pre': 1.0, 'post_renorm': 0.0}
    """
    logits = torch.zeros(length, length, dtype=dtype)
    mask = A.causal_mask(length)
    logits[~mask] = gap
    return {mode: float(A.masked_weights(logits, mask, mode).sum(-1)[0]) for mode in ("pre", "post_renorm")}
