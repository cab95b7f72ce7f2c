"""Whole-picture paint statistics shared by the offline judge and the offline aesthetic scorer.

They say how much paint there is and how it looks (colour, softness, layering), not how it is
arranged: :mod:`watercolour.rewards.form` measures form.

Every picture is first brought to :data:`SIDE` x :data:`SIDE` pixels, so a 512 px rollout
and a 256 px pool painting are measured alike. The measurements reuse
:func:`watercolour.pool.measure.painting_measures` (coverage, lightness, chroma, depth, tonal range,
composition) and :func:`watercolour.gates.image.measure_rgb` (shape edges, specks), and add
the ones a watercolour judge weighs that those do not:

- ``saturation``: mean HSV saturation of the painted pixels;
- ``hue_spread``: how many hues the painting uses (normalised entropy of a 12-bin hue
  histogram over the coloured painted pixels, 0 one hue, 1 all twelve evenly);
- ``softness``: edge softness / bleed: among the pixels where the luminance changes at all,
  the share where it changes gently (a bled edge is a ramp, a hard fill a step);
- ``texture``: paper grain and granulation: mean absolute difference between the painted
  pixels' luminance and its 3x3 local mean;
- ``translucency``: share of the painted pixels that stay close to the paper (light washes
  the paper shows through).
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict

import numpy as np
from PIL import Image

from watercolour.gates.image import measure_rgb
from watercolour.pool.critic import (
    ISSUE_PENALTY,
    THRESHOLDS,
    issues_from_measurements,
    score_measurements,
)
from watercolour.pool.measure import painting_measures as pool_measure
from watercolour.render.paint import decode_rgb

SIDE = 256
ISSUE_EDGES: dict[str, tuple[str, float, int]] = {
    "sparse": ("paint_fraction", THRESHOLDS["sparse"], -1),
    "crowded": ("paint_fraction", THRESHOLDS["crowded"], 1),
    "off_centre": ("centre_offset", THRESHOLDS["off_centre"], 1),
    "edge": ("edge_paint", THRESHOLDS["edge"], 1),
    "muddy": ("paint_chroma", THRESHOLDS["muddy"], -1),
    "dark": ("paint_luminance", THRESHOLDS["dark"], -1),
    "flat": ("tonal_range", THRESHOLDS["flat"], -1),
    "faint": ("depth", THRESHOLDS["faint_depth"], -1),
}
"""The weak variants a pool's ``okay`` tier holds, as (measurement, the pool critic's
threshold, the side the flaw lies on: -1 below, +1 above)."""
ISSUE_BAND = 0.3
"""``near_<issue>`` ramps from 0 at ``threshold * (1 + ISSUE_BAND)`` on the good side to 1 at
``threshold * (1 - ISSUE_BAND)`` on the flawed side."""
"""Pictures are resized to this square before measuring."""

FEATURES: tuple[str, ...] = (
    "paint_fraction", "paint_luminance", "paint_chroma", "depth", "tonal_range",
    "centre_offset", "edge_paint", "shape_edges", "speck_fraction", "saturation",
    "hue_spread", "softness", "texture", "translucency",
    *(f"near_{issue}" for issue in ISSUE_EDGES), "critic_score",
)
"""The measurements, in the order of :func:`statistics_vector`."""
FEATURE_VERSION = 2
"""Bumped whenever a measurement changes (fitted judges cached on disk are keyed by it)."""

_CACHE: OrderedDict[str, dict[str, float]] = OrderedDict()
_CACHE_SIZE = 4096
_LOCK = threading.Lock()


def normalise(png: bytes, side: int = SIDE) -> np.ndarray:
    """PNG -> RGB ``uint8`` array of ``side`` x ``side`` (box-filtered)."""
    rgb = decode_rgb(png)
    if rgb.shape[0] != side or rgb.shape[1] != side:
        rgb = np.asarray(Image.fromarray(rgb).resize((side, side), Image.BOX))
    return rgb


def _png(rgb: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def paint_statistics(png: bytes) -> dict[str, float]:
    """All :data:`FEATURES` of one picture (cached by content)."""
    key = hashlib.sha256(png).hexdigest()
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return dict(_CACHE[key])
    rgb = normalise(png)
    out = {k: float(v) for k, v in pool_measure(_png(rgb)).items()
           if k not in ("width", "height")}
    gate = measure_rgb(rgb)
    out["shape_edges"] = gate.shape_edges
    out["speck_fraction"] = gate.speck_fraction
    out.update(_extra(rgb, gate.paper))
    out.update(critic_terms(out))
    with _LOCK:
        _CACHE[key] = dict(out)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out


def statistics_vector(png: bytes) -> np.ndarray:
    """:func:`paint_statistics` as a vector, in :data:`FEATURES` order."""
    m = paint_statistics(png)
    return np.array([m[name] for name in FEATURES], dtype=np.float64)


def critic_terms(m: dict[str, float]) -> dict[str, float]:
    """How near each weak variant of :data:`ISSUE_EDGES` a picture is (0..1, see
    :data:`ISSUE_BAND`) and the pool critic's score (0..1, its issue penalty included):
    the flaws that separate a pool's ``okay`` paintings from its ``love`` ones, measured
    directly and bounded."""
    out = {}
    for issue, (name, threshold, side) in ISSUE_EDGES.items():
        into = side * (m[name] - threshold) / (ISSUE_BAND * threshold)  # > 0: flawed side
        out[f"near_{issue}"] = float(min(1.0, max(0.0, 0.5 + 0.5 * into)))
    penalty = ISSUE_PENALTY ** len(issues_from_measurements(m))
    out["critic_score"] = float(score_measurements(m)[0] * penalty)
    return out


def _extra(rgb: np.ndarray, paper: tuple[int, int, int]) -> dict[str, float]:
    f = rgb.astype(np.float32) / 255.0
    diff = np.abs(rgb.astype(np.int16) - np.array(paper, dtype=np.int16)).max(axis=2)
    mask = diff > 4
    if not mask.any():
        return {"saturation": 0.0, "hue_spread": 0.0, "softness": 0.0, "texture": 0.0,
                "translucency": 0.0}
    hi, lo = f.max(axis=2), f.min(axis=2)
    chroma = hi - lo
    saturation = np.where(hi > 0, chroma / np.maximum(hi, 1e-6), 0.0)
    # hue of the coloured painted pixels
    coloured = mask & (chroma > 0.08)
    hue_spread = 0.0
    if coloured.sum() >= 16:
        r, g, b = f[..., 0][coloured], f[..., 1][coloured], f[..., 2][coloured]
        hue = (np.degrees(np.arctan2(np.sqrt(3) * (g - b), 2 * r - g - b)) + 360) % 360
        hist = np.bincount((hue // 30).astype(int) % 12, minlength=12).astype(np.float64)
        p = hist / hist.sum()
        p = p[p > 0]
        hue_spread = float(-(p * np.log(p)).sum() / np.log(12))
    lum = f @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    gy, gx = np.gradient(lum)
    grad = np.hypot(gx, gy)
    moving = grad > 0.004
    softness = float((moving & (grad < 0.04)).sum() / max(1, moving.sum()))
    padded = np.pad(lum, 1, mode="edge")
    local = sum(padded[dy:dy + lum.shape[0], dx:dx + lum.shape[1]]
                for dy in range(3) for dx in range(3)) / 9.0
    texture = float(np.abs(lum - local)[mask].mean())
    translucency = float((diff[mask] < 0.3 * 255).mean())
    return {"saturation": float(saturation[mask].mean()), "hue_spread": hue_spread,
            "softness": softness, "texture": texture, "translucency": translucency}


ANATOMY_RINGS = 5
"""Rings (out to 1.6 times the paint's radius of gyration) :func:`anatomy` reads."""
_ANATOMY: OrderedDict[str, dict[str, float]] = OrderedDict()


def anatomy(png: bytes, side: int = 128) -> dict[str, float]:
    """How a painting's colour is arranged around its centre, as a flower's is (cached):

    - ``coherence``: how much of the hue of the coloured paint its distance from the paint's
      centre explains (mutual information of ring and 6-bin hue, over the hue entropy; 0 when
      every ring holds the same mix, as scattered dots do; a flower keeps its throat, petals
      and leaves at their own distances);
    - ``centre``: how much darker the paint is near the centre than in the petals' ring (the
      luminance of the paint 0.6-1.0 radii out less that within 0.3 radii; a throat or a disc
      is dark, a heap of dots is not darker in the middle).
    """
    key = hashlib.sha256(png).hexdigest()
    with _LOCK:
        if key in _ANATOMY:
            return dict(_ANATOMY[key])
    full = decode_rgb(png)
    rgb = np.asarray(Image.fromarray(full).resize((side, side), Image.BOX), np.float32)
    from watercolour.render.paint import paper_colour

    paper = np.array(paper_colour(full), np.float32)
    f = rgb / 255.0
    ink = np.abs(rgb - paper).max(axis=2) / 255.0
    out = {"coherence": 0.0, "centre": 0.0}
    total = float(ink.sum())
    if total > 1e-6:
        ys, xs = np.mgrid[0:side, 0:side]
        cy, cx = float((ink * ys).sum()) / total, float((ink * xs).sum()) / total
        r = np.hypot(ys - cy, xs - cx)
        gyration = max(1e-6, float(np.sqrt((ink * r ** 2).sum() / total)))
        chroma = f.max(axis=2) - f.min(axis=2)
        hue = (np.degrees(np.arctan2(np.sqrt(3) * (f[..., 1] - f[..., 2]),
                                     2 * f[..., 0] - f[..., 1] - f[..., 2])) + 360) % 360
        coloured = (ink > 0.05) & (chroma > 0.06)
        if coloured.sum() >= 16:
            ring = np.minimum((r[coloured] / (gyration * 1.6 / ANATOMY_RINGS)).astype(int),
                              ANATOMY_RINGS - 1)
            joint = np.zeros((ANATOMY_RINGS, 6))
            np.add.at(joint, (ring, (hue[coloured] // 60).astype(int) % 6), ink[coloured])
            joint /= joint.sum()
            pr, ph = joint.sum(axis=1, keepdims=True), joint.sum(axis=0, keepdims=True)
            nz = joint > 0
            mi = float((joint[nz] * np.log(joint[nz] / (pr @ ph)[nz])).sum())
            entropy = float(-(ph[ph > 0] * np.log(ph[ph > 0])).sum())
            out["coherence"] = mi / entropy if entropy > 1e-6 else 0.0
        lum = f @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
        painted = ink > 0.05
        inner = painted & (r < 0.3 * gyration)
        petals = painted & (r >= 0.6 * gyration) & (r < 1.0 * gyration)
        if inner.any() and petals.any():
            out["centre"] = float(lum[petals].mean() - lum[inner].mean())
    with _LOCK:
        _ANATOMY[key] = dict(out)
        if len(_ANATOMY) > _CACHE_SIZE:
            _ANATOMY.popitem(last=False)
    return out
