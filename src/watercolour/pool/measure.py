"""Measurements of a render, from its pixels alone: how much paint, how dark, how colourful,
how layered, where it sits. The offline critic and the synthetic tier rule read these."""

from __future__ import annotations

import numpy as np

from watercolour.render.paint import PAPER_TOLERANCE, decode_rgb, paper_colour

EDGE = 0.03
"""The frame (fraction of the side) whose paint counts as touching the edge."""


def painting_measures(png: bytes) -> dict[str, float]:
    """How a render is painted, measured (all in 0..1 unless stated).

    - ``paint_fraction``: share of pixels that differ from the paper;
    - ``paint_luminance``: mean luminance of the painted pixels (0 black, 1 white);
    - ``paint_chroma``: mean chroma (max - min channel) of the painted pixels;
    - ``depth``: mean difference from the paper over the painted pixels (faint paint is low);
    - ``tonal_range``: spread of luminance among painted pixels (the 90th minus the 10th
      percentile): layered washes and glazes give a range, one flat pass gives little;
    - ``centre_offset``: distance of the paint's centre of mass from the canvas centre, as a
      fraction of half the side;
    - ``edge_paint``: share of the outer frame that is painted (a subject cut by the edge).
    """
    rgb = decode_rgb(png)
    h, w, _ = rgb.shape
    paper = np.array(paper_colour(rgb), dtype=np.int16)
    diff = np.abs(rgb.astype(np.int16) - paper).max(axis=2)
    mask = diff > PAPER_TOLERANCE
    n = int(mask.sum())
    out: dict[str, float] = {"paint_fraction": n / mask.size if mask.size else 0.0,
                             "width": float(w), "height": float(h)}
    if n == 0:
        out.update(paint_luminance=1.0, paint_chroma=0.0, depth=0.0, tonal_range=0.0,
                   centre_offset=0.0, edge_paint=0.0)
        return out
    painted = rgb[mask].astype(np.float32) / 255.0
    lum = painted @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    chroma = painted.max(axis=1) - painted.min(axis=1)
    ys, xs = np.nonzero(mask)
    cx, cy = xs.mean() / (w - 1) - 0.5, ys.mean() / (h - 1) - 0.5
    frame = max(1, round(EDGE * min(w, h)))
    edge = np.ones_like(mask)
    edge[frame:-frame, frame:-frame] = False
    p10, p90 = np.percentile(lum, [10, 90])
    out.update(
        paint_luminance=float(lum.mean()),
        paint_chroma=float(chroma.mean()),
        depth=float(diff[mask].mean() / 255.0),
        tonal_range=float(p90 - p10),
        centre_offset=float(min(1.0, 2 * np.hypot(cx, cy))),
        edge_paint=float(mask[edge].mean()),
    )
    return out
