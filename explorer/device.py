"""Where tensors live: CUDA when available, else CPU; ``EXPLORER_DEVICE`` overrides. How many CPU threads a
training chunk on a server uses: ``EXPLORER_TRAINER_THREADS``, else 1."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

_ALLOWED = ("cpu", "cuda")


def get_device() -> torch.device:
    """The device new tensors are created on.

    ``EXPLORER_DEVICE=cpu`` or ``EXPLORER_DEVICE=cuda`` forces a choice; otherwise CUDA is used
    when torch can see a GPU.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> get_device().type in ("cpu", "cuda")
    True
    """
    wanted = os.environ.get("EXPLORER_DEVICE", "").strip().lower()
    if wanted:
        if wanted not in _ALLOWED:
            raise ValueError(f"EXPLORER_DEVICE must be 'cpu' or 'cuda', got {wanted!r}.")
        if wanted == "cuda" and not torch.cuda.is_available():
            raise ValueError("EXPLORER_DEVICE=cuda was asked for, but torch sees no CUDA GPU here.")
        return torch.device(wanted)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def available_devices() -> list[str]:
    """The devices torch can compute on here: ``cpu``, then ``cuda:0``, ``cuda:1``, ... for each GPU it sees.

    Returns
    -------
    list of str

    Examples
    --------
    >>> available_devices()[0]
    'cpu'
    """
    return ["cpu", *(f"cuda:{i}" for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0))]


def resolve_device(device: str | torch.device | None, name: str = "device") -> torch.device:
    """``device`` as a ``torch.device`` that exists here (``None``: ``get_device()``); a device that is not
    available raises a ``ValueError`` naming the one asked for and the ones there are, instead of torch's error on the
    first tensor moved there.

    Parameters
    ----------
    device : str, torch.device or None
    name : str
        The argument's name in the message.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("tpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: device must be a device torch knows (such as 'cpu' or 'cuda'), got 'tpu'; the devices here are: cpu...
    """
    if device is None:
        return get_device()
    here = available_devices()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"{name} must be a device torch knows (such as 'cpu' or 'cuda'), got {device!r}; the "
                         f"devices here are: {', '.join(here)}.") from None
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda" and torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count():
        return dev
    raise ValueError(f"{name} {str(dev)!r} is not available here: the devices here are: {', '.join(here)}.")


def describe_device(device: torch.device | None = None) -> str:
    """A short human-readable label, e.g. ``cpu`` or ``cuda (NVIDIA H200)``.

    Parameters
    ----------
    device : torch.device, optional
        By default ``get_device()``.

    Returns
    -------
    str

    Examples
    --------
    >>> describe_device(torch.device("cpu"))
    'cpu'
    """
    device = device or get_device()
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


def trainer_threads() -> int:
    """CPU threads for one session's training on a shared server: ``EXPLORER_TRAINER_THREADS`` when it is a whole
    number >= 1, else 1. Measured on 2 cores with another session browsing, the induction model trained at
    77 steps/s on one thread and 60 on two (alone: 120 and 147): two threads fight the other session for the
    cores, and both get slower.

    Returns
    -------
    int

    Examples
    --------
    >>> import os
    >>> os.environ["EXPLORER_TRAINER_THREADS"] = "3"; trainer_threads()
    3
    >>> os.environ["EXPLORER_TRAINER_THREADS"] = "many"; trainer_threads()      # not a whole number: 1
    1
    >>> del os.environ["EXPLORER_TRAINER_THREADS"]
    """
    return _threads("EXPLORER_TRAINER_THREADS")


def page_threads() -> int:
    """CPU threads for one page's computations on a shared server: ``EXPLORER_PAGE_THREADS`` when it is a whole
    number >= 1, else 1. Measured on 2 cores with another process busy on one of them, Kernel regression's
    leave-one-out curve of a 5,000-point upload took 0.50 s (0.68 s of CPU) on two threads and 0.14 s on one:
    two threads wait for each other at every step while the other core is taken. A class's sessions use the
    cores side by side instead.

    Returns
    -------
    int

    Examples
    --------
    >>> page_threads()
    1
    """
    return _threads("EXPLORER_PAGE_THREADS")


def _threads(variable: str) -> int:
    raw = os.environ.get(variable, "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= 1 else 1


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` intra-op threads on the calling thread (torch's OpenMP setting is per thread),
    then put the previous count back.

    Parameters
    ----------
    n : int

    Returns
    -------
    contextlib.AbstractContextManager

    Examples
    --------
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    """
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
