"""Ink: a colour as numbers, its luma, and the WCAG contrast of two colours, with the shade of a colour that text
drawn in it needs to be read on a background. Shared by the figures' style and their dark version.
"""

from __future__ import annotations

_NAMED_DARK = {"black": (0, 0, 0), "dimgray": (105, 105, 105), "dimgrey": (105, 105, 105), "gray": (128, 128, 128),
               "grey": (128, 128, 128)}


def rgba(colour) -> tuple[float, float, float, float] | None:
    """(r, g, b, alpha) in [0, 1] of a ``#rgb``, ``#rrggbb``, ``rgb(...)``, ``rgba(...)`` or dark named colour;
    None for anything else (a colour scale's numbers, a palette colour name, no colour)."""
    if not isinstance(colour, str):
        return None
    c = colour.strip().lower()
    if c in _NAMED_DARK:
        return (*(v / 255 for v in _NAMED_DARK[c]), 1.0)
    if c.startswith("#") and len(c) in (4, 7):
        digits = c[1:] if len(c) == 7 else "".join(ch * 2 for ch in c[1:])
        try:
            return (*(int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)), 1.0)
        except ValueError:
            return None
    if c.startswith(("rgb(", "rgba(")) and c.endswith(")"):
        try:
            parts = [float(v) for v in c[c.index("(") + 1:-1].split(",")]
        except ValueError:
            return None
        if len(parts) in (3, 4):
            return (parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3] if len(parts) == 4 else 1.0)
    return None

def luma(colour: str) -> float:
    """Relative luma in [0, 1] (Rec. 709 weights) of a colour ``_rgba`` reads.

    >>> luma("#ffffff"), luma("rgb(0, 0, 0)")
    (1.0, 0.0)
    """
    r, g, b, _ = rgba(colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b

TEXT_CONTRAST = 4.5       # WCAG AA for text: what a label drawn in a line's colour is brought to


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1 to 21).

    >>> round(contrast("#000000", "#ffffff"), 1), round(contrast("#D55E00", "#ffffff"), 2)
    (21.0, 3.87)
    """
    lum = [0.2126 * _linear(r) + 0.7152 * _linear(g) + 0.0722 * _linear(bl)
           for r, g, bl, _ in (rgba(a), rgba(b))]
    hi, lo = max(lum), min(lum)
    return (hi + 0.05) / (lo + 0.05)


def readable(colour, background: str = "#ffffff"):
    """``colour`` for text on ``background``: itself when it reaches ``TEXT_CONTRAST``, else mixed towards black (a
    light background) or white (a dark one) in steps of 5 % until it does, keeping its hue. Anything that is not
    one colour is returned as it is.

    >>> readable("#D55E00"), readable("#262730")
    ('#c05500', '#262730')
    """
    parts = rgba(colour)
    if parts is None or contrast(colour, background) >= TEXT_CONTRAST:
        return colour
    target = 0.0 if luma(background) > 0.5 else 1.0
    r, g, b, _ = parts
    for step in range(1, 21):
        w = step / 20
        mixed = "#" + "".join(f"{round(255 * (c * (1 - w) + target * w)):02x}" for c in (r, g, b))
        if contrast(mixed, background) >= TEXT_CONTRAST:
            return mixed
    return "#000000" if target == 0.0 else "#ffffff"
