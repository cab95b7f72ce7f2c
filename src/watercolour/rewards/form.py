"""Measurements of a picture's *form*: what colour statistics cannot see.

:mod:`watercolour.rewards.features` says how much paint there is and how colourful, soft and
layered it is; a rainbow flag can match a flower on all of those. These say how the paint is
arranged, in named groups (each a short vector, all in [0, 1]) that the offline judge compares
with the pool's paintings (:mod:`watercolour.rewards.judge.offline_judge`):

- ``palette``: the painted pixels' colours as a 12-hue histogram weighted by chroma, plus the
  share of nearly neutral paint and of dark paint (what colours, not how many);
- ``radial``: around the paint's centre of mass, the share painted and the paint's lightness in
  five rings (a flower has a dark centre and paint that thins outwards; a flag has neither);
- ``edges``: the strongest edges' orientations, an 8-bin histogram sorted from the most
  common (rotation does not matter, concentration does: stripes and polygons put their edges
  in a few directions), and the share of edge pixels on long straight runs;
- ``marks``: how the paint is split into separate marks: how many (log scale), the largest
  mark's share, the share in small marks (confetti), the green paint's share and elongation
  (leaves and stems are long green marks);
- ``paper``: the bare paper's colour (a saturated ``background()`` is not watercolour paper);
- ``thumbnail``: the picture itself at 8 x 8 px, paper subtracted (how the paint sits on the
  sheet, compared with paintings of the same subject).

Every picture is measured at :data:`FORM_SIDE` px, so the cost is a few milliseconds.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np
from PIL import Image

from watercolour.gates.image import components
from watercolour.render.paint import PAPER_TOLERANCE, decode_rgb, paper_colour

FORM_SIDE = 128
"""Pictures are resized to this square before their form is measured."""
RINGS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.32, 0.46, 0.7)
"""Ring edges around the paint's centre, as a fraction of half the side."""
GROUPS: dict[str, int] = {"palette": 14, "radial": 10, "edges": 9, "marks": 5, "paper": 3,
                          "thumbnail": 192}
"""Each form group and its length."""

_CACHE: OrderedDict[str, dict[str, np.ndarray]] = OrderedDict()
_CACHE_SIZE = 4096
_LOCK = threading.Lock()


def form_measures(png: bytes) -> dict[str, np.ndarray]:
    """Every group of :data:`GROUPS` for one picture (cached by content)."""
    key = hashlib.sha256(png).hexdigest()
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    full = decode_rgb(png)
    rgb = full
    if rgb.shape[0] != FORM_SIDE or rgb.shape[1] != FORM_SIDE:
        rgb = np.asarray(Image.fromarray(rgb).resize((FORM_SIDE, FORM_SIDE), Image.BOX))
    out = form_of_rgb(rgb, paper_colour(full))
    with _LOCK:
        _CACHE[key] = out
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out


def form_of_rgb(rgb: np.ndarray, paper: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """The groups of an RGB ``uint8`` array whose paper colour is ``paper``."""
    f = rgb.astype(np.float32) / 255.0
    paper_f = np.array(paper, dtype=np.float32) / 255.0
    diff = np.abs(rgb.astype(np.int16) - np.array(paper, dtype=np.int16)).max(axis=2)
    mask = diff > PAPER_TOLERANCE
    lum = f @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    out = {"palette": _palette(f, mask), "radial": _radial(mask, lum),
           "edges": _edges(lum), "marks": _marks(f, mask),
           "paper": paper_f.astype(np.float64)}
    thumb = np.asarray(Image.fromarray(rgb).resize((8, 8), Image.BOX), dtype=np.float32) / 255
    out["thumbnail"] = (0.5 + 0.5 * (thumb - paper_f)).reshape(-1).astype(np.float64)
    return out


def _hue(f: np.ndarray) -> np.ndarray:
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    return (np.degrees(np.arctan2(np.sqrt(3) * (g - b), 2 * r - g - b)) + 360) % 360


def _palette(f: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = np.zeros(GROUPS["palette"])
    if not mask.any():
        return out
    px = f[mask]
    chroma = px.max(axis=1) - px.min(axis=1)
    coloured = chroma > 0.08
    hue = _hue(px[coloured])
    hist = np.bincount((hue // 30).astype(int) % 12, weights=chroma[coloured], minlength=12)
    total = chroma.sum() + 1e-9
    out[:12] = hist / max(total, 1e-9)
    out[12] = float((~coloured).mean())
    out[13] = float((px.max(axis=1) < 0.35).mean())
    return out


def _radial(mask: np.ndarray, lum: np.ndarray) -> np.ndarray:
    out = np.zeros(GROUPS["radial"])
    if not mask.any():
        out[5:] = 1.0
        return out
    side = mask.shape[0]
    ys, xs = np.nonzero(mask)
    cy, cx = ys.mean(), xs.mean()
    yy, xx = np.mgrid[0:side, 0:side]
    r = np.hypot(yy - cy, xx - cx) / (side / 2)
    for i in range(5):
        ring = (r >= RINGS[i]) & (r < RINGS[i + 1])
        painted = mask & ring
        out[i] = painted.sum() / max(1, ring.sum())
        out[5 + i] = float(lum[painted].mean()) if painted.any() else 1.0
    return out


def _edges(lum: np.ndarray) -> np.ndarray:
    out = np.zeros(GROUPS["edges"])
    gy, gx = np.gradient(lum)
    grad = np.hypot(gx, gy)
    strong = grad > 0.03
    if strong.sum() < 8:
        return out
    theta = (np.degrees(np.arctan2(gy[strong], gx[strong])) + 180) % 180
    hist = np.bincount((theta // 22.5).astype(int) % 8, minlength=8).astype(np.float64)
    out[:8] = np.sort(hist / hist.sum())[::-1]
    out[8] = _straight_share(strong, theta, gx.shape)
    return out


def _straight_share(strong: np.ndarray, theta: np.ndarray, shape: tuple[int, ...],
                    run: int = 12) -> float:
    """Share of edge pixels lying on horizontal or vertical runs at least ``run`` px long
    whose edges all point the same way (ruled lines, stripes, boxes)."""
    bins = np.full(shape, -1, dtype=np.int16)
    bins[strong] = ((theta + 22.5) // 45).astype(np.int16) % 4
    total = int(strong.sum())
    on_runs = np.zeros(shape, dtype=bool)
    for axis, direction in ((1, 2), (0, 0)):  # rows hold vertical-gradient edges, and so on
        grid = bins if axis == 1 else bins.T
        hit = grid == direction
        padded = np.zeros((hit.shape[0], hit.shape[1] + 2), dtype=np.int8)
        padded[:, 1:-1] = hit
        change = np.diff(padded, axis=1)
        rows, starts = np.nonzero(change == 1)
        _, ends = np.nonzero(change == -1)
        long = (ends - starts) >= run
        mark = np.zeros_like(hit)
        for row, a, b in zip(rows[long], starts[long], ends[long]):
            mark[row, a:b] = True
        on_runs |= mark if axis == 1 else mark.T
    return float(on_runs.sum() / max(1, total))


def _marks(f: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = np.zeros(GROUPS["marks"])
    if not mask.any():
        return out
    area, heights, widths = components(mask)
    total = area.sum()
    out[0] = min(1.0, np.log1p(len(area)) / np.log1p(400))
    out[1] = float(area.max() / total)
    out[2] = float(area[(heights <= 6) & (widths <= 6)].sum() / total)
    hue = _hue(f)
    chroma = f.max(axis=2) - f.min(axis=2)
    green = mask & (chroma > 0.08) & (hue >= 70) & (hue < 170)
    out[3] = float(green.sum() / mask.sum())
    if green.sum() >= 8:
        ys, xs = np.nonzero(green)
        cov = np.cov(np.stack([xs, ys]).astype(np.float64))
        eig = np.linalg.eigvalsh(cov)
        out[4] = float(1.0 - np.sqrt(max(eig[0], 1e-9) / max(eig[1], 1e-9)))
    return out
