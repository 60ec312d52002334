"""Where tensors live: CUDA when available, else CPU; ``EXPLORER_DEVICE`` overrides."""

from __future__ import annotations

import os

import torch

_ALLOWED = ("cpu", "cuda")


def get_device() -> torch.device:
    """The device new tensors are created on.

    ``EXPLORER_DEVICE=cpu`` or ``EXPLORER_DEVICE=cuda`` forces a choice; otherwise CUDA is used
    when torch can see a GPU.
    """
    wanted = os.environ.get("EXPLORER_DEVICE", "").strip().lower()
    if wanted:
        if wanted not in _ALLOWED:
            raise ValueError(f"EXPLORER_DEVICE must be 'cpu' or 'cuda', got {wanted!r}.")
        if wanted == "cuda" and not torch.cuda.is_available():
            raise ValueError("EXPLORER_DEVICE=cuda was asked for, but torch sees no CUDA GPU here.")
        return torch.device(wanted)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def describe_device(device: torch.device | None = None) -> str:
    """A short human-readable label, e.g. ``cpu`` or ``cuda (NVIDIA H200)``."""
    device = device or get_device()
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type
