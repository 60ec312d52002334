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
    """Turn a tensor, numpy array, pandas Series, list or scalar into a finite floating tensor.

    The dtype follows the input, as numpy's would: a floating tensor keeps its dtype and device; a floating numpy
    array or Series keeps its precision (float16, float32 or float64); a list or scalar of Python floats becomes
    float64. ``dtype`` overrides that for input that is not already a floating array (a second argument that
    follows the first, e.g. queries in the training data's dtype); integers become ``dtype``, by default torch's
    default dtype (float32). ``device`` places non-tensor input. With ``ndim=1``, a column of shape (n, 1) is
    read as its n values (one feature), and a scalar as one value.

    >>> import numpy as np
    >>> as_tensor([0.5, 1.5], "x").dtype, as_tensor(np.float32([1.0]), "x").dtype
    (torch.float64, torch.float32)
    >>> tuple(as_tensor(np.ones((3, 1)), "x", ndim=1).shape)
    (3,)
    """
    import torch  # here, not at the top: the router and the landing page use this module without torch

    if isinstance(value, torch.Tensor):
        t = value if value.is_floating_point() else value.to(torch.get_default_dtype())
    else:
        source = np.asarray(value)           # a Series or a list as numpy reads it (no copy of an array)
        try:
            arr = np.array(source, dtype=np.float64 if source.dtype.kind not in "f" else source.dtype)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers (a list, numpy array or tensor).") from None
        if source.dtype.kind == "f" and (hasattr(value, "dtype") or dtype is None):
            target = torch.from_numpy(np.empty(0, dtype=arr.dtype)).dtype
        else:
            target = dtype or torch.get_default_dtype()
        t = torch.as_tensor(arr, dtype=target, device=device)
    if ndim is not None:
        if ndim == 1 and t.ndim == 0:
            t = t.reshape(1)
        if ndim == 1 and t.ndim == 2 and t.shape[1] == 1:
            t = t.reshape(-1)
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
    """A finite number > 0 (and <= upper when given), as a Python float. Text is refused, even text that reads as a
    number: ``"0.2"`` is more often a mistake (a value read from a file and never converted) than a choice."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a number > 0, got the text {value!r}: pass a number (e.g. 0.5), not text.")
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


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to, as ``torch.broadcast_shapes`` gives it (the same rule: numpy's), without
    torch's first call importing its symbolic-shape machinery and sympy (1.7 s, once per process: a page's first
    attention figure, a command-line export); a RuntimeError where they do not broadcast, as torch raises.

    >>> broadcast_shapes((2, 1, 4), (3, 1))
    (2, 3, 4)
    """
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError as err:
        raise RuntimeError(str(err)) from None
