"""What a lesson module is made of: its figures, each defined once as compute → data → draw.

``Figure`` pairs a pure ``compute`` (numbers in, a dict of numpy / pandas out: everything the figure draws and
everything the page's sentences quote about it) with a ``draw`` (that dict, a language and the figure's marks →
a plotly figure). A lesson's ``figures(values)`` says, for the settings ``values``, which inputs each of its
figures is computed from (a ``Spec``); the page draws those specs, the headless export writes them and the lesson
tests compute them, so all three see the same figure by construction::

    spec = scaling.figures(defaults(scaling.PARAMS))["logit_std"]
    fig = spec.figure("en")                  # compute, then draw, in English
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Figure:
    compute: Callable[..., dict]                 # inputs -> data (pure: the same inputs give the same data)
    draw: Callable[[dict, str], Any]             # ({**data, **marks}, language) -> plotly figure
    marks: tuple[str, ...] = ()                  # what only the drawing reads (a marker at the current value)
    cached: bool = True                          # False: computed from live state (a model being trained)
    exported: bool = True                        # False: not in the lecture set (a timing of this machine)

    def figure(self, lang: str = "en", **inputs) -> Any:
        """Compute, then draw, in one call (a notebook's way): ``inputs`` are the compute's, plus any marks."""
        marks = {k: inputs.pop(k) for k in self.marks if k in inputs}
        return self.draw({**self.compute(**inputs), **marks}, lang)


@dataclass(frozen=True)
class Spec:
    """One figure of a lesson at given settings: which figure, its compute's inputs and its marks."""
    lesson: str                                  # the lesson module's name (``kernel_regression``)
    name: str                                    # the figure's name: its key on the page and its export file
    figure_def: Figure
    inputs: Mapping[str, Any] = field(default_factory=dict)
    marks: Mapping[str, Any] = field(default_factory=dict)

    def data(self) -> dict:
        return self.figure_def.compute(**self.inputs)

    def draw(self, data: Mapping, lang: str = "en", **marks) -> Any:
        """The figure from its data; ``marks`` replace the spec's own."""
        return self.figure_def.draw({**data, **self.marks, **marks}, lang)

    def figure(self, lang: str = "en", **marks) -> Any:
        return self.draw(self.data(), lang, **marks)


def specs(lesson: str, table: Mapping[str, Figure], inputs: Mapping[str, tuple[Mapping, Mapping] | Mapping]) \
        -> dict[str, Spec]:
    """The ``Spec`` of each figure of ``table`` named in ``inputs`` (name → compute inputs, or (inputs, marks))."""
    out = {}
    for name, given in inputs.items():
        args, marks = given if isinstance(given, tuple) else (given, {})
        out[name] = Spec(lesson, name, table[name], dict(args), dict(marks))
    return out


def figure_table() -> tuple[dict[str, Figure], Callable]:
    """A lesson's table of figures and the decorator that fills it::

        FIGURES, figure = figure_table()

        @figure("logit_histogram", _samples)         # name, compute (and marks=, cached=, exported=)
        def _draw_samples(data, lang): ...
    """
    table: dict[str, Figure] = {}

    def register(name: str, compute: Callable[..., dict], marks: tuple[str, ...] = (), **options):
        def add(draw: Callable[[dict, str], Any]):
            table[name] = Figure(compute, draw, marks, **options)
            return draw
        return add
    return table, register
