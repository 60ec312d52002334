"""Boxes over sorted points on a line: what the fast kernel sums (``explorer.fastsum``, ``explorer.fastgauss``) cut
the training data into, so that each query touches a few boxes instead of every point."""

from __future__ import annotations

import torch


def _boxes(xs: torch.Tensor, width: float):
    """Boxes of the given width over the sorted points: (ids of the non-empty boxes, box of each point,
    box centres, first index of each box in xs, count per box)."""
    origin = float(xs[0])
    key = torch.floor((xs - origin) / width).to(torch.int64)
    ids, inverse, counts = torch.unique_consecutive(key, return_inverse=True, return_counts=True)
    starts = torch.cumsum(counts, 0) - counts
    centres = origin + (ids.to(xs.dtype) + 0.5) * width
    return origin, ids, inverse, centres, starts, counts


def _box_rows(ids: torch.Tensor, wanted: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For box ids ``wanted`` (any shape), the row of that box among the non-empty ``ids`` and whether
    it exists."""
    row = torch.searchsorted(ids, wanted).clamp(max=max(ids.shape[0] - 1, 0))
    return row, ids[row] == wanted


def _nearest_distance(xq, xs):
    n = xs.shape[0]
    idx = torch.searchsorted(xs, xq)
    left = (xq - xs[(idx - 1).clamp(0, n - 1)]).abs()
    right = (xs[idx.clamp(0, n - 1)] - xq).abs()
    return torch.minimum(left, right)
