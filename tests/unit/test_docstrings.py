"""The public functions of the compute core carry numpydoc docstrings (Parameters, Returns, Examples);
the examples themselves run as doctests (``--doctest-modules`` in pyproject.toml)."""

import importlib
import inspect

import pytest

MODULES = ["explorer.regression", "explorer.bandwidth", "explorer.kernels", "explorer.attention", "explorer.fastsum",
           "explorer.data"]
SECTIONS = ("Parameters\n----------", "Returns\n-------", "Examples\n--------\n>>>")


def missing_sections(f) -> list[str]:
    doc = inspect.getdoc(f) or ""
    return [s.split()[0] for s in SECTIONS if s not in doc]


def public_functions(name):
    module = importlib.import_module(name)
    return [(n, f) for n, f in vars(module).items()
            if inspect.isfunction(f) and not n.startswith("_") and f.__module__ == name]


@pytest.mark.parametrize("module", MODULES)
def test_public_functions_have_numpydoc_sections_with_an_example(module):
    functions = public_functions(module)
    assert functions
    missing = {n: missing_sections(f) for n, f in functions}
    assert {n: m for n, m in missing.items() if m} == {}


def test_the_section_check_can_fail():
    def documented():
        """One line.

        Parameters
        ----------
        x : int

        Returns
        -------
        int

        Examples
        --------
        >>> 1
        1
        """

    def bare():
        """One line only."""

    assert missing_sections(documented) == []
    assert missing_sections(bare) == ["Parameters", "Returns", "Examples"]
