"""What the headless tools (``explorer-train``, ``explorer-export``) share: an argument parser that reports a
bad argument in one line, and a progress bar on stderr."""

from __future__ import annotations

import argparse
import sys


class Parser(argparse.ArgumentParser):
    """``argparse`` that prints ``error: …`` in one line (no usage dump) and exits with status 2."""

    def error(self, message):
        fail(message)


def fail(message: str) -> None:
    """Print ``error: message`` on stderr and exit with status 2 (a bad argument)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def progress(done: int, total: int, text: str = "") -> None:
    """Redraw a 30-character progress bar with ``done/total`` and ``text`` on stderr (no newline)."""
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {text}")
    sys.stderr.flush()
