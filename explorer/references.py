"""Dotted names of the package written in its documentation (``explorer.attention.masked_weights``), checked to
name something that exists: the docs site's build warns about each one that does not (``docs/hooks.py``, which makes
``mkdocs build --strict`` fail), and a test checks every docstring and page, so a rename cannot leave one behind."""

from __future__ import annotations

import importlib
import re

# ``explorer.a.b`` (and ``explorer.a.b(...)``): a name of the package, as written in code spans and docstrings
DOTTED = re.compile(r"(?<![\w.])explorer(?:\.[A-Za-z_]\w*)+")

__all__ = ["DOTTED", "broken", "resolves"]


def resolves(name: str) -> bool:
    """Whether the dotted ``name`` is a module of the package or an attribute reached from one.

    Parameters
    ----------
    name : str
        Such as ``explorer.regression.nadaraya_watson``.

    Returns
    -------
    bool

    Examples
    --------
    >>> resolves("explorer.regression.nadaraya_watson"), resolves("explorer.attention.attention")
    (True, False)
    """
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def broken(text: str) -> list[str]:
    """The package's dotted names in ``text`` that name nothing, each once, in order.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str

    Examples
    --------
    >>> broken("see ``explorer.attention.masked_weights`` and ``explorer.attention.attention``")
    ['explorer.attention.attention']
    """
    seen = dict.fromkeys(m.group(0).rstrip(".") for m in DOTTED.finditer(text))
    return [name for name in seen if not resolves(name)]
