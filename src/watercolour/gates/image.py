"""Measures of a render that tell paint from no paint, computed from the PNG with numpy.

``paint_fraction`` (the renderer's) is the share of pixels that differ from the most common
colour, taken to be the bare paper. It has two blind spots, covered by the other two measures:

- **A flood fill moves the "paper".** When one wash covers the canvas, the most common colour is
  the flood's own. A flat flood then reads as blank (0.0) — rejected, rightly, as
  ``blank_canvas`` — but a textured p5.brush flood, or a dark slick, reads as heavily painted
  (0.7–0.9) though it shows nothing. :func:`shape_edges` asks whether the canvas has any outline
  a viewer would see as the border of a shape: the image is averaged into 8-px cells (hiding
  grain) and a cell is an edge cell when the cell 24 px away differs from it by more than
  :data:`EDGE_STEP` in some channel. A flood's texture changes slowly; a shape's edge does not.
  The gate asks this only of canvases that paint covers in large part
  (``Floors.flood_coverage``): a small faint wash on bare paper is a shape, however soft its
  edges. Limit: a flood so pale that nearly all of it matches one colour reads as a few faint
  marks (paint ~0.03) and is admitted; what the judge then sees is a near-blank canvas.
- **A noise storm** (hundreds of tiny marks) reads as painted, yet has no shapes.
  :func:`speck_fraction` is the share of the paint in connected marks that fit in a
  :data:`SPECK_SIZE` px box. A line is long, so it is not a speck; a wash is large.

The thresholds were calibrated on measured renders: ``benchmarks/gate_calibration.py`` writes
``benchmarks/results/gate-calibration.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from PIL import Image

from watercolour.render.paint import PAPER_TOLERANCE, decode_rgb, paint_fraction, paper_colour

EDGE_CELL = 8
"""Cell size (px) for :func:`shape_edges`."""
EDGE_OFFSET = 3
"""Cells are compared with the cell this many cells away (3 x 8 = 24 px)."""
EDGE_STEP = 32
"""A difference above this (0-255, any channel) between the two cells is an edge."""
SPECK_SIZE = 12
"""Marks that fit in a box this many px wide and high are specks."""


@dataclass(frozen=True)
class Floors:
    """The image thresholds of the gate (defaults calibrated; see the module docstring)."""

    paint_floor: float = 0.005
    """Minimum paint fraction; below it the canvas is ``blank_canvas``."""
    speck_ceiling: float = 0.5
    """Maximum share of the paint in specks; above it the paint is a ``noise_storm``."""
    flood_coverage: float = 0.25
    """Paint fraction from which a canvas counts as covered, and must show a shape edge. (A
    pale flood reads as 0.4-0.5: half of it matches its own most common colour.)"""
    edge_floor: float = 0.01
    """Minimum :func:`shape_edges` of a covered canvas; below it the paint is ``shapeless``."""


@dataclass(frozen=True)
class ImageMeasures:
    """What the gate measures in a render."""

    width: int
    height: int
    paint_fraction: float
    paper: tuple[int, int, int]
    """The most common colour (the bare paper, or the flood that covered it)."""
    shape_edges: float
    speck_fraction: float
    mean_luma: float

    def to_dict(self) -> dict:
        return asdict(self)


def image_measures(png: bytes) -> ImageMeasures:
    """All the gate's measures of one PNG."""
    return measure_rgb(decode_rgb(png))


def measure_rgb(rgb: np.ndarray) -> ImageMeasures:
    """All measures of an RGB ``uint8`` array of shape (height, width, 3)."""
    height, width = rgb.shape[:2]
    return ImageMeasures(
        width=width,
        height=height,
        paint_fraction=round(paint_fraction(rgb), 6),
        paper=paper_colour(rgb) if rgb.size else (255, 255, 255),
        shape_edges=round(shape_edges(rgb), 6),
        speck_fraction=round(speck_fraction(rgb), 6),
        mean_luma=round(mean_luma(rgb), 3),
    )


def mean_luma(rgb: np.ndarray) -> float:
    """Mean brightness (Rec. 601 luma, 0-255)."""
    if rgb.size == 0:
        return 0.0
    return float((rgb.astype(np.float32) @ np.float32([0.299, 0.587, 0.114])).mean())


def shape_edges(rgb: np.ndarray, cell: int = EDGE_CELL, offset: int = EDGE_OFFSET,
                step: float = EDGE_STEP) -> float:
    """Share of ``cell``-px cells that differ by more than ``step`` (any channel) from the cell
    ``offset`` cells away, horizontally or vertically."""
    height, width = rgb.shape[:2]
    cols, rows = width // cell, height // cell
    if rows <= offset and cols <= offset:
        return 0.0
    grid = np.asarray(Image.fromarray(rgb).resize((max(cols, 1), max(rows, 1)), Image.BOX),
                      dtype=np.float32)
    edge = np.zeros(grid.shape[:2], dtype=bool)
    k = offset
    if cols > k:
        dx = np.abs(grid[:, k:] - grid[:, :-k]).max(axis=2) > step
        edge[:, k:] |= dx
        edge[:, :-k] |= dx
    if rows > k:
        dy = np.abs(grid[k:, :] - grid[:-k, :]).max(axis=2) > step
        edge[k:, :] |= dy
        edge[:-k, :] |= dy
    return float(edge.mean())


def paint_mask(rgb: np.ndarray, tolerance: int = PAPER_TOLERANCE) -> np.ndarray:
    """Pixels that differ from the paper colour (the same rule as ``paint_fraction``)."""
    paper = np.array(paper_colour(rgb), dtype=np.int16)
    return np.abs(rgb.astype(np.int16) - paper).max(axis=2) > tolerance


def speck_fraction(rgb: np.ndarray, size: int = SPECK_SIZE) -> float:
    """Share of the painted pixels in connected marks (8-connected) whose bounding box is at
    most ``size`` x ``size`` px. 0.0 when nothing is painted."""
    if rgb.size == 0:
        return 0.0
    mask = paint_mask(rgb)
    if not mask.any():
        return 0.0
    area, heights, widths = components(mask)
    small = (heights <= size) & (widths <= size)
    return float(area[small].sum() / area.sum())


def components(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Connected components (8-connectivity) of a boolean image, labelled on its row runs
    with a union-find: per component its area, height and width (bounding box), in px."""
    height, width = mask.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    change = np.diff(padded, axis=1)
    rows, starts = np.nonzero(change == 1)
    _, ends = np.nonzero(change == -1)  # exclusive; same order as starts (row-major)
    n = len(starts)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    first = np.searchsorted(rows, np.arange(height + 1)).tolist()
    s, e = starts.tolist(), ends.tolist()
    for y in range(1, height):
        i, i_end, j, j_end = first[y - 1], first[y], first[y], first[y + 1]
        while i < i_end and j < j_end:
            if s[i] <= e[j] and s[j] <= e[i]:  # touching, diagonals included
                a, b = find(i), find(j)
                if a != b:
                    parent[b] = a
            if e[i] < e[j]:
                i += 1
            else:
                j += 1
    roots = np.fromiter((find(k) for k in range(n)), dtype=np.int64, count=n)
    _, label = np.unique(roots, return_inverse=True)
    count = int(label.max()) + 1
    area = np.bincount(label, weights=ends - starts, minlength=count).astype(np.int64)
    x0 = np.full(count, width, dtype=np.int64)
    x1 = np.zeros(count, dtype=np.int64)
    y0 = np.full(count, height, dtype=np.int64)
    y1 = np.zeros(count, dtype=np.int64)
    np.minimum.at(x0, label, starts)
    np.maximum.at(x1, label, ends)
    np.minimum.at(y0, label, rows)
    np.maximum.at(y1, label, rows + 1)
    return area, y1 - y0, x1 - x0
