"""Small colour helpers for the procedural painter: hex strings in, hex strings out."""

from __future__ import annotations

import colorsys

MUD = "#6e5d4b"
"""What colours turn into when they are over-mixed: a warm grey-brown."""


def to_rgb(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` -> ``(r, g, b)``."""
    text = colour.lstrip("#")
    if len(text) != 6:
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def to_hex(rgb: tuple[float, float, float]) -> str:
    r, g, b = (max(0, min(255, round(c))) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def mix(a: str, b: str, t: float) -> str:
    """``a`` moved a fraction ``t`` of the way towards ``b``."""
    ra, rb = to_rgb(a), to_rgb(b)
    return to_hex(tuple(x + (y - x) * t for x, y in zip(ra, rb)))


def darken(colour: str, amount: float) -> str:
    """Towards black by ``amount`` (0 leaves it, 1 is black)."""
    return mix(colour, "#000000", amount)


def lighten(colour: str, amount: float) -> str:
    return mix(colour, "#ffffff", amount)


def grey(colour: str) -> str:
    """The colour's luminance as a neutral grey."""
    r, g, b = to_rgb(colour)
    y = 0.299 * r + 0.587 * g + 0.114 * b
    return to_hex((y, y, y))


def saturation(colour: str) -> float:
    r, g, b = (c / 255 for c in to_rgb(colour))
    return colorsys.rgb_to_hsv(r, g, b)[1]
