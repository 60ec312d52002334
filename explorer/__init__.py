"""Attention Explorer's compute package.

Plain Python + torch: everything here can be imported, tested and exported without a
Streamlit server. Only ``explorer.ui`` imports streamlit.

The public submodules load on first use (PEP 562), so ``import explorer`` is cheap (the landing page paints before
torch loads) and ``explorer.regression.nadaraya_watson`` works without importing ``explorer.regression`` first.
"""

import importlib

__all__ = ["attention", "bandwidth", "data", "device", "efficient", "estimator", "export", "fastsum", "figures",
           "incontext", "incontext_direction", "kernels", "learned", "lessons", "masking", "online", "plot",
           "positional", "regression", "scaling", "training"]


def __getattr__(name: str):
    if name in __all__ or name == "ui":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
