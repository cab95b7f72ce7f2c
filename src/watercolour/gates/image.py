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
- **A flood with a frame** (a wash stopped short of the canvas edge, or two bands of wash)
  has edges, but only along its outline and along one straight seam: nothing inside it.
  :func:`interior_edges` looks inside the painted area (the bounding box of the rows and
  columns that are at least :data:`EXTENT_SHARE` painted, less a sixth of its size on each
  side) and takes the smaller of its horizontal and vertical edge shares: a painting has
  outlines both ways inside (petals, leaves, a centre), a flood has none, a band's seam only
  one way, and few of them (:func:`interior_seams`; many parallel seams are stripes, a
  pattern the gate leaves to the judge). The gate asks this of canvases whose paint spans
  most of the canvas (``Floors.extent_coverage``), or whose paint is a large solid mass
  (``Floors.interior_coverage``, ``Floors.solid_share``); a loose cluster of soft washes
  is not asked. Limits: a flood textured so strongly that its grain reads as outlines (bold
  two-band washes) is admitted; the judge rates what it sees. And the other way: a wash over
  the whole canvas with a small subject in its middle can read as a flood (the calibration's
  ``full_wash_flower`` and ``mono_full_wash``: interior edges 0.05-0.13 at seeds 0-2, against
  the floor's 0.14, are rejected in the calibration's mode; in allowlist mode their
  ``brush.rect`` is refused first). Telling a wash with a small subject from a flood needs
  more than edge shares; not done.
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
EXTENT_SHARE = 0.1
"""A row or column belongs to the painted area when at least this share of it is paint."""
INTERIOR_MARGIN = 6
"""The inside of the painted area: its bounding box less 1/6 of its size on each side."""


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
    extent_coverage: float = 0.75
    """Share of the canvas the painted area's bounding box (:func:`paint_extent`) spans from
    which the canvas must show outlines inside that area (whatever its paint fraction: a
    flood whose own colour reads as the paper covers little "paint")."""
    interior_coverage: float = 0.3
    """A smaller painted area must too when it is a solid mass: paint at least this share of
    the canvas, and at least :attr:`solid_share` of its own bounding box (a framed flood with a
    wide frame; not a loose cluster of washes)."""
    solid_share: float = 0.75
    """(0.85 until a pale single flood of the red team's family, its paint 0.61 of the canvas
    and 0.84 of its box, slipped under it at seed 0; a loose cluster of soft washes fills at
    most 0.58 of its box, the 8 examples and the pool's paintings at most 0.72, and those
    are asked for an inside only to show one: interior edges >= 0.22.)"""
    interior_floor: float = 0.14
    """Minimum :func:`interior_edges` of such a canvas; below it the paint is ``shapeless``
    (a flood, with or without a frame or a seam). Measured at seeds 0, 1 and 2 (issue 39):
    57 renders of single-wash floods (the red team's ``flood`` family and the fixture) span
    >= 0.754 of the canvas with interior edges <= 0.094; the 252 honest renders (the 8
    examples and 76 of the pool's paintings) span <= 0.717, and those spanning >= 0.6 have
    interior edges >= 0.220: none is rejected. Raised from 0.12 when a boldly textured
    two-band flood of the family (texture 0.68) read 0.124 at seed 0; re-measured on 126
    honest renders (the examples at seeds 0-2, the 96 pool paintings, a loose cluster of
    washes at seeds 0-5) and 69 floods: none honest rejected, the floods' largest 0.124."""
    seam_ceiling: float = 0.35
    """... while the larger share (:func:`interior_seams`) stays below this: a seam or two, as
    floods in bands have (<= 0.23), not stripes (rainbow stripes: 0.99)."""


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
    interior_edges: float = 1.0
    """The smaller edge share, horizontal or vertical, inside the painted area."""
    interior_seams: float = 1.0
    """The larger one."""
    paint_extent: float = 0.0
    """Share of the canvas the painted area's bounding box spans."""

    def to_dict(self) -> dict:
        return asdict(self)


def image_measures(png: bytes) -> ImageMeasures:
    """All the gate's measures of one PNG."""
    return measure_rgb(decode_rgb(png))


def measure_rgb(rgb: np.ndarray) -> ImageMeasures:
    """All measures of an RGB ``uint8`` array of shape (height, width, 3)."""
    height, width = rgb.shape[:2]
    box = painted_box(rgb)
    inside = interior_shares(rgb, box)
    return ImageMeasures(
        width=width,
        height=height,
        paint_fraction=round(paint_fraction(rgb), 6),
        paper=paper_colour(rgb) if rgb.size else (255, 255, 255),
        shape_edges=round(shape_edges(rgb), 6),
        speck_fraction=round(speck_fraction(rgb), 6),
        mean_luma=round(mean_luma(rgb), 3),
        interior_edges=round(min(inside), 6),
        interior_seams=round(max(inside), 6),
        paint_extent=round(paint_extent(rgb, box), 6),
    )


def mean_luma(rgb: np.ndarray) -> float:
    """Mean brightness (Rec. 601 luma, 0-255)."""
    if rgb.size == 0:
        return 0.0
    return float((rgb.astype(np.float32) @ np.float32([0.299, 0.587, 0.114])).mean())


def edge_cells(rgb: np.ndarray, cell: int = EDGE_CELL, offset: int = EDGE_OFFSET,
               step: float = EDGE_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Per ``cell``-px cell: does it differ by more than ``step`` (any channel) from the cell
    ``offset`` cells away horizontally (first map) or vertically (second)?"""
    height, width = rgb.shape[:2]
    cols, rows = width // cell, height // cell
    shape = (max(rows, 1), max(cols, 1))
    across, down = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    if rows <= offset and cols <= offset:
        return across, down
    grid = np.asarray(Image.fromarray(rgb).resize((shape[1], shape[0]), Image.BOX),
                      dtype=np.float32)
    k = offset
    if cols > k:
        dx = np.abs(grid[:, k:] - grid[:, :-k]).max(axis=2) > step
        across[:, k:] |= dx
        across[:, :-k] |= dx
    if rows > k:
        dy = np.abs(grid[k:, :] - grid[:-k, :]).max(axis=2) > step
        down[k:, :] |= dy
        down[:-k, :] |= dy
    return across, down


def shape_edges(rgb: np.ndarray, cell: int = EDGE_CELL, offset: int = EDGE_OFFSET,
                step: float = EDGE_STEP) -> float:
    """Share of ``cell``-px cells that differ by more than ``step`` (any channel) from the cell
    ``offset`` cells away, horizontally or vertically."""
    height, width = rgb.shape[:2]
    if height // cell <= offset and width // cell <= offset:
        return 0.0
    across, down = edge_cells(rgb, cell, offset, step)
    return float((across | down).mean())


Box = tuple[int, int, int, int]
"""``(top, bottom, left, right)`` in px, bottom and right exclusive."""


def painted_box(rgb: np.ndarray, share: float = EXTENT_SHARE) -> Box | None:
    """The bounding box of the rows and columns at least ``share`` painted (None: none is)."""
    if rgb.size == 0:
        return None
    mask = paint_mask(rgb)
    rows = np.flatnonzero(mask.mean(axis=1) >= share)
    cols = np.flatnonzero(mask.mean(axis=0) >= share)
    if len(rows) == 0 or len(cols) == 0:
        return None
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def paint_extent(rgb: np.ndarray, box: Box | None = None) -> float:
    """Share of the canvas the painted area's bounding box spans (0.0 when nothing is)."""
    box = painted_box(rgb) if box is None else box
    if box is None or rgb.size == 0:
        return 0.0
    top, bottom, left, right = box
    return (bottom - top) * (right - left) / (rgb.shape[0] * rgb.shape[1])


def interior_shares(rgb: np.ndarray, box: Box | None = None, cell: int = EDGE_CELL,
                    margin: int = INTERIOR_MARGIN) -> tuple[float, float]:
    """The horizontal and vertical edge-cell shares (see :func:`edge_cells`) inside the
    painted area: its bounding box less ``1/margin`` of its size on each side. (0.0, 0.0) when
    nothing is painted or the inside is empty."""
    box = painted_box(rgb) if box is None else box
    if box is None:
        return 0.0, 0.0
    across, down = edge_cells(rgb, cell)
    top, bottom, left, right = (v // cell for v in box)
    dy, dx = (bottom - top) // margin, (right - left) // margin
    inside = (slice(top + dy, bottom - dy), slice(left + dx, right - dx))
    if across[inside].size == 0:
        return 0.0, 0.0
    return float(across[inside].mean()), float(down[inside].mean())


def interior_edges(rgb: np.ndarray, box: Box | None = None) -> float:
    """The smaller of :func:`interior_shares`: a painting has outlines inside it both ways."""
    return min(interior_shares(rgb, box))


def interior_seams(rgb: np.ndarray, box: Box | None = None) -> float:
    """The larger of :func:`interior_shares`: a flood's seam shows only here."""
    return max(interior_shares(rgb, box))


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
