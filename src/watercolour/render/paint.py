"""Paint coverage: how much of a render differs from the bare paper."""

from __future__ import annotations

import functools
import io

import numpy as np
from PIL import Image

PAPER_TOLERANCE = 4
"""A pixel counts as paint when a channel differs from the paper colour by more than this."""


DECODED_KEPT = 8
"""How many recent decodes :func:`decode_rgb` keeps: a rollout's render is read by the gate,
the judge, the scorer, the pigment term and the copy check, each from the same bytes."""


def decode_rgb(png: bytes) -> np.ndarray:
    """PNG bytes -> ``uint8`` array of shape (height, width, 3), composited over white. The
    array is read-only and may be shared with other callers of the same bytes (the last
    :data:`DECODED_KEPT` PNGs decoded are kept)."""
    return _decode(bytes(png))


@functools.lru_cache(maxsize=DECODED_KEPT)
def _decode(png: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(png))
    if image.mode != "RGBA":
        image = image.convert("RGBA")
    background = Image.new("RGBA", image.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(background, image).convert("RGB"))
    rgb.setflags(write=False)
    return rgb


def paper_colour(rgb: np.ndarray) -> tuple[int, int, int]:
    """The bare paper: the most common exact colour in the image (a background fill is flat)."""
    flat = rgb.reshape(-1, 3).astype(np.uint32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    top = int(values[np.argmax(counts)])
    return (top >> 16) & 255, (top >> 8) & 255, top & 255


def paint_fraction(rgb: np.ndarray, tolerance: int = PAPER_TOLERANCE) -> float:
    """Share of pixels that differ from the paper colour by more than ``tolerance``."""
    if rgb.size == 0:
        return 0.0
    paper = np.array(paper_colour(rgb), dtype=np.int16)
    diff = np.abs(rgb.astype(np.int16) - paper).max(axis=2)
    return float((diff > tolerance).mean())


def thumbnail(png: bytes, size: int = 320) -> bytes:
    """``png`` shrunk to fit a ``size`` x ``size`` box (aspect kept; never enlarged), as PNG."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.thumbnail((size, size))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
