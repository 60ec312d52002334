"""The lessons, in order, each one headless module: ``explorer.lessons.<name>``.

A lesson module holds everything the lesson knows, and no streamlit:

- ``PARAMS``: its settings (``params.Param``), in the order a link lists them; ``FILE_NAME``: the settings an
  exported figure's file name carries, as (param, format) pairs;
- ``FIGURES``: its figures (``base.Figure``: compute → data → draw), ``MAIN``: the one the landing page shows;
- ``figures(values, …)``: for the settings ``values``, the inputs of every figure (``base.Spec``), the one place
  where derived settings (a temperature from d, a valid length from the mask) are worked out;
- the functions that compute the numbers its sentences quote, tested in ``tests/lessons/``.

``pages/<name>.py`` draws it (``explorer.ui.page.lesson_page``), ``explorer-export`` writes its figures and the
lesson tests check its claims, all from the same module. Adding a lesson: its module, its page script, its catalog
(``explorer/text/<name>.toml``), its lesson test, and one line below.

This file imports no lesson module: the router and the landing page read the list before torch is loaded.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Lesson:
    """One lesson of ``LESSONS``; ``module`` imports the lesson's module, ``script`` is its page.

    Parameters
    ----------
    name : str
        Names its module (explorer/lessons/<name>.py), page (pages/<name>.py), text catalog
        (explorer/text/<name>.toml) and its title in the UI text (``page.<name>``).
    group : str
        Its section of the navigation (UI text ``nav.<group>``).
    icon : str
        Its icon in the navigation, a Material Symbols name (``:material/...:``).

    Examples
    --------
    >>> first = LESSONS[0]
    >>> first.name, first.script
    ('kernel_regression', 'pages/kernel_regression.py')
    >>> sorted(first.module.FIGURES)[:2]
    ['fit', 'kernel_shapes']
    """

    name: str          # explorer/lessons/<name>.py, pages/<name>.py, explorer/text/<name>.toml, UI text page.<name>
    group: str         # its section of the navigation (UI text nav.<group>)
    icon: str

    @property
    def module(self) -> ModuleType:
        """The lesson's module (imported on first use: it brings torch with it).

        Returns
        -------
        types.ModuleType

        Examples
        --------
        >>> lesson("masking").module.__name__
        'explorer.lessons.masking'
        """
        return importlib.import_module(f"{__name__}.{self.name}")

    @property
    def script(self) -> str:
        """The lesson's page, relative to the repository (the dashboard's ``st.navigation`` runs it).

        Returns
        -------
        str

        Examples
        --------
        >>> lesson("scaling").script
        'pages/scaling.py'
        """
        return f"pages/{self.name}.py"


LESSONS = (
    Lesson("kernel_regression", "kernels", ":material/show_chart:"),
    Lesson("attention_heatmap", "kernels", ":material/grid_on:"),
    Lesson("softmax_kernel", "attention", ":material/functions:"),
    Lesson("icl_bandwidth", "attention", ":material/tune:"),
    Lesson("masking", "attention", ":material/visibility_off:"),
    Lesson("scaling", "attention", ":material/straighten:"),
    Lesson("positional", "attention", ":material/pin_drop:"),
    Lesson("efficient_attention", "attention", ":material/speed:"),
    Lesson("live_training", "transformers", ":material/model_training:"),
)


def lesson(name: str) -> Lesson:
    """The lesson called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    Lesson

    Examples
    --------
    >>> lesson("scaling").module.MAIN
    'logit_std'
    """
    for item in LESSONS:
        if item.name == name:
            return item
    raise KeyError(f"no lesson {name!r}")


def find_figure(name: str):
    """The figure ``name`` (``base.Figure``) of whichever lesson draws it (names are unique across lessons).

    Parameters
    ----------
    name : str

    Returns
    -------
    explorer.lessons.base.Figure

    Examples
    --------
    >>> figure = find_figure("logit_std")
    >>> callable(figure.compute) and callable(figure.draw)
    True
    """
    for item in LESSONS:
        table = item.module.FIGURES
        if name in table:
            return table[name]
    raise KeyError(f"no lesson figure {name!r}")
