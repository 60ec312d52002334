"""What a lesson module is made of: its figures, each defined once as compute → data → draw, and its sentences.

``Figure`` pairs a pure ``compute`` (numbers in, a dict of numpy / pandas out: everything the figure draws and
everything the page's sentences quote about it) with a ``draw`` (that dict, a language and the figure's marks →
a plotly figure). A lesson's ``figures(values)`` says, for the settings ``values``, which inputs each of its
figures is computed from (a ``Spec``); the page draws those specs, the headless export writes them and the lesson
tests compute them, so all three see the same figure by construction::

    spec = scaling.figures(defaults(scaling.PARAMS))["logit_std"]
    fig = spec.figure("en")                  # compute, then draw, in English

A lesson also says its sentences: every decision about what its page says (which text, quoting which numbers, under
which condition) is a function of the lesson module marked ``@says(<keys>)``, returning ``Say``s (a UI-text key and
the values it quotes, in any language). The page only places them. The keys a ``@says`` function may return are the
lesson's claims: ``tests/lessons/test_coverage.py`` reads them from these marks and asks for a test of each function
over the lesson's settings (``tests/lessons/sweep.py``), or the reason in ``fixed`` why no setting can change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..i18n import LANGUAGES, Message, in_lang, text_width

TONES = ("text", "caption", "info", "success", "warning", "error")


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
    """A lesson's table of figures and the decorator that fills it, the one way a lesson declares a figure::

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


# --------------------------------------------------------------------------- sentences
class Say(Message):
    """One sentence of a page: a UI-text key, the values it quotes (numbers, or other texts: a ``Message``, a
    ``Joined`` list, said in the same language) and how it is shown (``tone``: a paragraph, a caption, or an info,
    success, warning or error box). As a str it reads as the English; ``in_lang`` says it in another language.

    >>> Say("kr.snap", tone="caption", pct=0.03).in_lang("en")
    "Buttons snap to the slider's grid (40 steps per decade, within 3.0% of the exact value)."
    """

    def __new__(cls, key: str, tone: str = "text", **values):
        if tone not in TONES:
            raise ValueError(f"tone must be one of {TONES}, not {tone!r}.")
        obj = super().__new__(cls, key, **values)
        obj.tone = tone
        return obj

    def __reduce__(self):
        return _say, (self.key, self.tone, self.values)


def _say(key: str, tone: str, values: dict) -> Say:
    return Say(key, tone, **values)


@dataclass(frozen=True)
class Question:
    """A page's predict-then-reveal question, computed from the data its figure shows (so the answer stays right
    when the settings change): ``key`` names it (its state and its class poll), ``asked`` and ``choices`` are what
    the viewer reads, ``answer`` the index of the right choice, ``why`` the sentence that explains it;
    ``also_right``: choices too close to the answer to call wrong."""
    key: str
    asked: Say
    choices: tuple[Say, ...]
    answer: int
    why: Say
    also_right: tuple[int, ...] = ()

    def mark(self) -> Say:
        """The answer's label on the figure once revealed: "answer: like √d" when the answer is short in every
        language (at most ``MARK_UNITS`` wide), else the word "answer" (the verdict over the figure says the rest),
        so that a label covers little of its plot."""
        choice = self.choices[self.answer]
        if all(text_width(in_lang(choice, code)) <= MARK_UNITS for code in LANGUAGES):
            return Say("fig.answer_is", answer=choice)
        return Say("fig.answer")


MARK_UNITS = 12       # Latin-letter units (a CJK character counts two): the longest answer named in its figure's label


def says(*keys: str, fixed: str | None = None) -> Callable:
    """Mark a lesson function that decides what its page says: ``keys`` are the UI texts it may return (its claims).
    ``fixed``: why no setting or data can make them false (a formula, the software), when that is so; otherwise a
    test sweeps the function over the lesson's settings (``tests/lessons/sweep.py``)."""
    def mark(fn: Callable) -> Callable:
        fn.says, fn.fixed = keys, fixed
        return fn
    return mark


def sayers(module: ModuleType) -> dict[str, Callable]:
    """The ``@says`` functions of a lesson module (defined there, not imported), by name."""
    return {name: fn for name, fn in vars(module).items()
            if callable(fn) and hasattr(fn, "says") and getattr(fn, "__module__", None) == module.__name__}


def flatten(said: Say | Iterable | None) -> list[Say]:
    """A function's sentences as a flat list (a function may return one ``Say``, a list, or None)."""
    if said is None:
        return []
    if isinstance(said, Say):
        return [said]
    return [s for item in said for s in flatten(item)]
