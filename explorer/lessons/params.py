"""A lesson's settings as data: one ``Param`` per control.

A ``Param`` says everything about one setting and nothing about how it is drawn: its key (in the session's state
and in a shared link), the kind of widget that shows it, its default, its range or options, and the UI-text keys
of its label and help. From it the UI draws the widget (``explorer.ui.control.draw``), a link is read and written
(``parse``, ``dump``), a value is checked (``check``) and the help's "from … to …" is filled (``help_text``), so a
range is stated once::

    D = Param("sk.d", "slider", 16, "sk.d", "sk.d_help", lo=1, hi=256)     # help: "… ({lo} to {hi})."

Nothing here imports streamlit: the headless export and the tests read the same specs as the pages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._checks import one_of
from ..i18n import t

KINDS = ("slider", "select_slider", "select", "multiselect", "toggle", "number")
# how a link may say on and off: the one vocabulary of the app (settings, switches and lecture / predict alike)
SWITCH = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


@dataclass(frozen=True, eq=False)         # compared and hashed by identity: one object per setting
class Param:
    key: str                                   # session-state key, also the name in a link
    kind: str                                  # one of KINDS: the widget that shows it
    default: Any                               # a value, or a function of the other values (a Mapping) giving one
    label: str                                 # UI-text key of the label
    help: str | None = None                    # UI-text key of the help; {lo} and {hi} are filled from the range
    options: tuple | None = None               # the choices of select, select_slider and multiselect
    lo: float | None = None                    # bounds of slider and number
    hi: float | None = None
    step: float | None = None
    names: str | None = None                   # options read as UI text "<names><option>" (e.g. "kernel.")
    fmt: str | None = None                     # or as format(option, fmt), e.g. "g"
    text: Callable[[Any, str], str] | None = None   # or as text(option, lang)
    max_selections: int | None = None          # multiselect only
    not_in_links: Mapping[str, str] | None = None   # value -> text key of why a link cannot carry it

    def __post_init__(self):
        one_of(self.kind, KINDS, "kind")

    # ------------------------------------------------------------------ values
    def default_value(self, values: Mapping[str, Any] | None = None) -> Any:
        """The default; a default that depends on other settings reads them from ``values``."""
        return self.default(values or {}) if callable(self.default) else self.default

    def check(self, value: Any) -> Any:
        """``value`` as this setting holds it; ``ValueError`` when the setting cannot take it."""
        if self.kind == "toggle":
            if not isinstance(value, bool):
                raise ValueError(value)
            return value
        if self.kind == "multiselect":
            chosen = [self._option(v) for v in value]
            if self.max_selections and len(chosen) > self.max_selections:
                raise ValueError(value)
            return list(dict.fromkeys(chosen))
        if self.options is not None:
            return self._option(value)
        number = float(value)
        if not math.isfinite(number) or not self.lo <= number <= self.hi:
            raise ValueError(value)
        if self.whole:
            if not number.is_integer():
                raise ValueError(value)
            return int(number)
        return number

    @property
    def whole(self) -> bool:
        """Whether a slider or number holds whole numbers (its bounds and step are ints)."""
        return all(isinstance(v, int) for v in (self.lo, self.hi, self.step or 1))

    def _option(self, value: Any) -> Any:
        for option in self.options:
            same = option == value if isinstance(option, str) or isinstance(value, str) \
                else math.isclose(float(option), float(value))
            if same:
                return option
        raise ValueError(value)

    # ------------------------------------------------------------------ links
    def parse(self, raw: str) -> Any:
        """The value a link's text stands for (``ValueError`` when it names none)."""
        if self.kind == "toggle":
            if raw.lower() not in SWITCH:
                raise ValueError(raw)
            return SWITCH[raw.lower()]
        if self.kind == "multiselect":
            return self.check([self._from_text(v) for v in raw.split(",") if v.strip()])
        return self.check(self._from_text(raw))

    def _from_text(self, raw: str) -> Any:
        sample = self.options[0] if self.options else self.lo
        return raw if isinstance(sample, str) else float(raw)

    def dump(self, value: Any) -> str:
        """How a value reads in a link (and in an exported file's name)."""
        if self.kind == "toggle":
            return "1" if value else "0"
        if self.kind == "multiselect":
            return ",".join(_text(v) for v in value)
        return _text(value)

    # ------------------------------------------------------------------ text
    def option_text(self, option: Any, lang: str = "en") -> str:
        """How an option (or a slider value) reads on screen."""
        if self.text:
            return self.text(option, lang)
        if self.names:
            return t(f"{self.names}{option}", lang)
        if self.fmt:
            return format(option, self.fmt)
        return f"{option:g}" if isinstance(option, float) else str(option)

    def range(self, lo: float | None = None, hi: float | None = None) -> tuple[Any, Any]:
        """The first and last value the setting takes (``lo``/``hi`` narrow a slider for one run)."""
        if self.options is not None:
            return self.options[0], self.options[-1]
        kind = int if self.whole else float
        return kind(self.lo if lo is None else lo), kind(self.hi if hi is None else hi)

    def help_text(self, lang: str = "en", lo: float | None = None, hi: float | None = None, **values) -> str | None:
        """The help, with ``{lo}`` and ``{hi}`` from the range the widget shows and ``values`` for the rest."""
        if not self.help:
            return None
        if self.options is None and self.lo is None:            # a switch: no range to state
            return t(self.help, lang, **values)
        first, last = self.range(lo, hi)
        return t(self.help, lang, lo=self.option_text(first, lang), hi=self.option_text(last, lang), **values)


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def seed_param(key: str) -> Param:
    """A lesson's own random seed (0 to 9999)."""
    return Param(key, "number", 0, "ui.seed", "ui.seed_help", lo=0, hi=9999)


def defaults(params: Sequence[Param], seed: int | None = None) -> dict[str, Any]:
    """Every setting at its default, in order (a default may read the ones before it); ``seed`` replaces every
    seed's default (the lecture export's ``--seed``)."""
    values: dict[str, Any] = {}
    for p in params:
        values[p.key] = seed if seed is not None and p.key.endswith("seed") else p.default_value(values)
    return values
