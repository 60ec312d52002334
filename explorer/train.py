"""``python -m explorer.train`` is kept as another name for ``explorer-train`` (``explorer.training.cli``)."""

from .training.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
