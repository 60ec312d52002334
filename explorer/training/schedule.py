"""The schedules training follows: the learning rate (warmup, then constant or cosine), the attention temperature
(``TemperatureSchedule``), and the test that stops a run that is blowing up (``diverged``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._checks import one_of, positive_number

SCHEDULES = ("constant", "cosine")
TEMPERATURE_SCHEDULES = ("constant", "linear", "cosine")
MAX_LR = 10.0


@dataclass(frozen=True)
class TemperatureSchedule:
    """How the attention temperature multiplier moves over training; ``at(step, total)`` gives its value.

    Parameters
    ----------
    kind : {"constant", "linear", "cosine"}
        "constant" holds ``start``; the others move from ``start`` to ``end`` over the training's total steps.
    start, end : float
        Multipliers of the attention logits' divisor, > 0 and at most 100 (1 = plain attention).

    Examples
    --------
    >>> schedule = TemperatureSchedule("linear", 2.0, 1.0)
    >>> [schedule.at(step, 100) for step in (0, 50, 100, 200)]
    [2.0, 1.5, 1.0, 1.0]
    """

    kind: str = "constant"
    start: float = 1.0
    end: float = 1.0

    def __post_init__(self):
        one_of(self.kind, TEMPERATURE_SCHEDULES, "temperature schedule")
        positive_number(self.start, "start temperature", upper=100.0)
        positive_number(self.end, "end temperature", upper=100.0)

    def at(self, step: int, total: int) -> float:
        """The temperature multiplier at ``step`` of ``total`` (held at the end value afterwards).

        Parameters
        ----------
        step : int
        total : int
            The length of the schedule (the trainer's ``total_steps``).

        Returns
        -------
        float

        Examples
        --------
        >>> TemperatureSchedule("cosine", 4.0, 1.0).at(50, 100)
        2.5
        """
        if self.kind == "constant":
            return self.start
        frac = min(1.0, step / max(1, total))
        if self.kind == "linear":
            return self.start + (self.end - self.start) * frac
        return self.end + (self.start - self.end) * 0.5 * (1 + math.cos(math.pi * frac))


def learning_rate(step: int, base_lr: float, warmup: int, total: int, schedule: str) -> float:
    """Linear warmup over ``warmup`` steps, then constant or cosine decay to 10 % of base_lr at ``total``.

    Parameters
    ----------
    step : int
    base_lr : float
    warmup : int
    total : int
    schedule : {"constant", "cosine"}

    Returns
    -------
    float

    Examples
    --------
    >>> [round(learning_rate(s, 1.0, 10, 110, "cosine"), 3) for s in (0, 9, 10, 60, 110)]
    [0.1, 1.0, 1.0, 0.55, 0.1]
    """
    if warmup and step < warmup:
        return base_lr * (step + 1) / warmup
    if schedule == "constant":
        return base_lr
    frac = min(1.0, (step - warmup) / max(1, total - warmup))
    return base_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


DIVERGE_FACTOR, DIVERGE_STEPS = 2.0, 20    # loss above twice its starting level for 20 steps in a row


def diverged(history: list[dict]) -> bool:
    """True when the loss has stayed above ``DIVERGE_FACTOR`` times its starting level (the first step's
    loss, taken before any update) for the last ``DIVERGE_STEPS`` steps: the run is blowing up, even if
    every number is still finite.

    Parameters
    ----------
    history : list of dict
        A trainer's metrics rows.

    Returns
    -------
    bool

    Examples
    --------
    >>> diverged([{"loss": 1.0}] + [{"loss": 3.0}] * DIVERGE_STEPS), diverged([{"loss": 1.0}] * 30)
    (True, False)
    """
    if len(history) < 1 + DIVERGE_STEPS:
        return False
    return all(r["loss"] > DIVERGE_FACTOR * history[0]["loss"] for r in history[-DIVERGE_STEPS:])
