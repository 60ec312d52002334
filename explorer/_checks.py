"""Input conversion and validation shared by the compute entry points.

Every public function converts its inputs here, so that a bad value fails early with a
``ValueError`` whose sentence names the argument and what is allowed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .i18n import Message

if TYPE_CHECKING:
    import torch


class UserError(ValueError):
    """A ``ValueError`` whose sentence is UI text (``message``, a ``Message``): English when printed, and
    shown in the page's language by the dashboard. Used where a user's own input (a file, a training
    run) went wrong, rather than a programmer's argument."""

    def __init__(self, key: str, **values):
        self.message = Message(key, **values)
        super().__init__(self.message)


def as_tensor(value: Any, name: str, *, device: torch.device | None = None, ndim: int | None = None,
              dtype: torch.dtype | None = None) -> torch.Tensor:
    """Turn a tensor, numpy array, list or scalar into a finite floating tensor.

    A floating tensor keeps its dtype and device; a float64 numpy array becomes float64; anything
    else (lists, integer arrays) becomes ``dtype``, by default torch's default dtype (float32).
    ``device`` places non-tensor input.
    """
    import torch  # here, not at the top: the router and the landing page use this module without torch

    if isinstance(value, torch.Tensor):
        t = value if value.is_floating_point() else value.to(torch.get_default_dtype())
    else:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers (a list, numpy array or tensor).") from None
        if isinstance(value, np.ndarray) and value.dtype in (np.float64, np.float32, np.float16):
            target = torch.from_numpy(np.empty(0, dtype=value.dtype)).dtype
        else:
            target = dtype or torch.get_default_dtype()
        t = torch.as_tensor(arr, dtype=target, device=device)
    if ndim is not None:
        if ndim == 1 and t.ndim == 0:
            t = t.reshape(1)
        if t.ndim != ndim:
            raise ValueError(f"{name} must be {ndim}-dimensional, got shape {tuple(t.shape)}.")
    if t.numel() == 0:
        raise ValueError(f"{name} is empty: give at least one value.")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values: remove or replace them.")
    return t


def common(*tensors: torch.Tensor) -> list[torch.Tensor]:
    """Cast tensors to their promoted floating dtype, on the first tensor's device."""
    import torch  # torch: not at the top, as above

    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return [t.to(device=tensors[0].device, dtype=dtype) for t in tensors]


def positive_number(value: Any, name: str, *, upper: float | None = None) -> float:
    """A finite number > 0 (and <= upper when given), as a Python float."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}.") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    if upper is not None and v > upper:
        raise ValueError(f"{name} must be at most {upper:g}, got {v:g}.")
    return v


def integer_in(value: Any, name: str, low: int, high: int) -> int:
    """An integer within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r}.")
    if not low <= int(value) <= high:
        raise ValueError(f"{name} must be from {low} to {high}, got {value}.")
    return int(value)


def one_of(value: Any, choices, name: str):
    """``value`` if it is one of ``choices`` (a mapping's keys or a sequence), else a ``ValueError`` listing them.

    >>> one_of("pre", ("pre", "post"), "mode")
    'pre'
    >>> one_of("nope", ("pre", "post"), "mode")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of pre, post; got 'nope'.
    """
    try:
        if value in choices:
            return value
    except TypeError:                       # an unhashable value looked up in a mapping
        pass
    raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}.")
