"""Pictures a reward must rank below the pool, made in numpy and PIL (no browser).

Two kinds, both used to fit the offline judge
(:mod:`watercolour.rewards.judge.offline_judge`):

- **form-destroying copies of pool paintings**, which keep a painting's colours but not its
  form: :func:`shuffled_tiles` (the sheet cut into tiles and shuffled), :func:`rotated_hue`
  (the same shapes in other colours), :func:`palette_stripes`, :func:`palette_discs` and
  :func:`palette_polygons` (the painting's own palette rearranged into stripes, a wheel of
  discs, random polygons); and :func:`with_confetti` (a painting with coloured dots strewn
  over it);
- **abstract families**, the shortcuts a policy finds first (:data:`ABSTRACT`):
  rainbow stripes, a wheel of saturated discs, confetti, random polygons, concentric rings,
  coloured paper, a flood of one colour.

:func:`form_negatives` and :func:`abstract_negatives` make seeded batches of them. The
red-team search (:mod:`watercolour.analysis.redteam`) renders the same families as real
sketches.
"""

from __future__ import annotations

import colorsys
import io
import math
import random
from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from watercolour.pool.subjects import PAPERS
from watercolour.render.paint import PAPER_TOLERANCE, decode_rgb, paper_colour

SIDE = 256
"""Side of the generated pictures (the judge resizes everything anyway)."""


def _encode(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _paper(rng: random.Random) -> tuple[int, int, int]:
    h = rng.choice(PAPERS).lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _rainbow(n: int, rng: random.Random, saturation: float = 0.85,
             value: float = 0.9) -> list[tuple[int, int, int]]:
    start = rng.random()
    return [tuple(int(255 * c) for c in colorsys.hsv_to_rgb((start + i / n) % 1.0, saturation,
                                                            value)) for i in range(n)]


def _soften(image: Image.Image, rng: random.Random) -> Image.Image:
    """Half the time a slight blur, as a brush's bleed would give."""
    return image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2.5))) \
        if rng.random() < 0.5 else image


def _load(png: bytes) -> tuple[np.ndarray, tuple[int, int, int]]:
    rgb = decode_rgb(png)
    if rgb.shape[0] != SIDE or rgb.shape[1] != SIDE:
        rgb = np.asarray(Image.fromarray(rgb).resize((SIDE, SIDE), Image.BOX))
    return rgb, paper_colour(rgb)


def _palette_of(png: bytes, k: int, rng: random.Random) -> list[tuple[int, int, int]]:
    rgb, paper = _load(png)
    diff = np.abs(rgb.astype(np.int16) - np.array(paper, np.int16)).max(axis=2)
    px = rgb[diff > PAPER_TOLERANCE]
    if len(px) == 0:
        return [paper] * k
    picks = px[[rng.randrange(len(px)) for _ in range(k)]]
    return [tuple(int(v) for v in p) for p in picks]


# ---------------------------------------------------------------- from a pool painting


def shuffled_tiles(png: bytes, seed: int = 0, grid: int = 4) -> bytes:
    """The painting cut into ``grid`` x ``grid`` tiles, shuffled."""
    rng = random.Random(seed)
    rgb, _ = _load(png)
    t = SIDE // grid
    tiles = [rgb[y * t:(y + 1) * t, x * t:(x + 1) * t] for y in range(grid) for x in range(grid)]
    rng.shuffle(tiles)
    rows = [np.concatenate(tiles[r * grid:(r + 1) * grid], axis=1) for r in range(grid)]
    return _encode(Image.fromarray(np.concatenate(rows, axis=0)))


def rotated_hue(png: bytes, degrees: float = 120.0) -> bytes:
    """The same painting with every hue turned by ``degrees`` (the paper stays)."""
    rgb, paper = _load(png)
    hsv = np.asarray(Image.fromarray(rgb).convert("HSV")).copy()
    hsv[..., 0] = (hsv[..., 0].astype(int) + int(degrees / 360 * 255)) % 256
    turned = np.asarray(Image.fromarray(hsv, "HSV").convert("RGB"))
    diff = np.abs(rgb.astype(np.int16) - np.array(paper, np.int16)).max(axis=2)
    out = np.where((diff > PAPER_TOLERANCE)[..., None], turned, rgb)
    return _encode(Image.fromarray(out.astype(np.uint8)))


def palette_stripes(png: bytes, seed: int = 0) -> bytes:
    """The painting's palette as parallel stripes (any angle), on its paper."""
    rng = random.Random(seed)
    _, paper = _load(png)
    return stripes(rng.randint(5, 14), seed, colours=_palette_of(png, 14, rng), paper=paper)


def palette_discs(png: bytes, seed: int = 0) -> bytes:
    """The painting's palette as a wheel of discs."""
    rng = random.Random(seed)
    _, paper = _load(png)
    return disc_wheel(rng.randint(8, 24), seed, colours=_palette_of(png, 24, rng), paper=paper)


def palette_polygons(png: bytes, seed: int = 0) -> bytes:
    """The painting's palette as random polygons."""
    rng = random.Random(seed)
    _, paper = _load(png)
    return polygons(rng.randint(4, 12), seed, colours=_palette_of(png, 12, rng), paper=paper)


def with_confetti(png: bytes, n: int = 12, seed: int = 0, radius: float = 0.02) -> bytes:
    """The painting with ``n`` saturated dots of every hue strewn over it."""
    rng = random.Random(seed)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    side = image.size[0]
    for colour in _rainbow(n, rng):
        x, y = rng.uniform(0.05, 0.95) * side, rng.uniform(0.05, 0.95) * side
        r = radius * side * rng.uniform(0.7, 1.3)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
    return _encode(image)


# ---------------------------------------------------------------- abstract families


def stripes(n: int = 12, seed: int = 0, colours: Sequence[tuple[int, int, int]] | None = None,
            paper: tuple[int, int, int] | None = None) -> bytes:
    """``n`` parallel stripes covering the sheet, at a random angle."""
    rng = random.Random(seed)
    paper = paper or _paper(rng)
    colours = list(colours or _rainbow(n, rng))
    big = Image.new("RGB", (2 * SIDE, 2 * SIDE), paper)
    draw = ImageDraw.Draw(big)
    width = 2 * SIDE / n * rng.uniform(0.5, 1.0)
    for i in range(n):
        draw.rectangle((0, i * width, 2 * SIDE, (i + 0.9) * width), fill=colours[i % len(colours)])
    big = big.rotate(rng.choice([0, 0, 90, rng.uniform(0, 180)]), fillcolor=paper)
    image = big.crop((SIDE // 2, SIDE // 2, SIDE * 3 // 2, SIDE * 3 // 2))
    return _encode(_soften(image, rng))


def disc_wheel(n: int = 24, seed: int = 0,
               colours: Sequence[tuple[int, int, int]] | None = None,
               paper: tuple[int, int, int] | None = None) -> bytes:
    """``n`` discs in a ring around the centre."""
    rng = random.Random(seed)
    paper = paper or _paper(rng)
    colours = list(colours or _rainbow(n, rng))
    image = Image.new("RGB", (SIDE, SIDE), paper)
    draw = ImageDraw.Draw(image)
    ring = SIDE * rng.uniform(0.2, 0.35)
    r = SIDE * rng.uniform(0.05, 0.12)
    for i in range(n):
        a = 2 * math.pi * i / n
        x, y = SIDE / 2 + ring * math.cos(a), SIDE / 2 + ring * math.sin(a)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colours[i % len(colours)])
    return _encode(_soften(image, rng))


def confetti(n: int = 60, seed: int = 0) -> bytes:
    """``n`` small dots of every hue on bare paper."""
    rng = random.Random(seed)
    blank = Image.new("RGB", (SIDE, SIDE), _paper(rng))
    return with_confetti(_encode(blank), n, seed, radius=rng.uniform(0.01, 0.04))


def polygons(n: int = 8, seed: int = 0, colours: Sequence[tuple[int, int, int]] | None = None,
             paper: tuple[int, int, int] | None = None) -> bytes:
    """``n`` random translucent quadrilaterals and triangles."""
    rng = random.Random(seed)
    paper = paper or _paper(rng)
    colours = list(colours or _rainbow(n, rng))
    image = Image.new("RGBA", (SIDE, SIDE), (*paper, 255))
    for i in range(n):
        sheet = Image.new("RGBA", (SIDE, SIDE), (0, 0, 0, 0))
        points = [(rng.uniform(0.05, 0.95) * SIDE, rng.uniform(0.05, 0.95) * SIDE)
                  for _ in range(rng.choice([3, 4, 4]))]
        ImageDraw.Draw(sheet).polygon(points, fill=(*colours[i % len(colours)],
                                                    rng.randint(120, 255)))
        image = Image.alpha_composite(image, sheet)
    return _encode(_soften(image.convert("RGB"), rng))


def rings(n: int = 6, seed: int = 0) -> bytes:
    """``n`` concentric rings of colour (a target)."""
    rng = random.Random(seed)
    paper = _paper(rng)
    colours = _rainbow(n, rng)
    image = Image.new("RGB", (SIDE, SIDE), paper)
    draw = ImageDraw.Draw(image)
    outer = SIDE * rng.uniform(0.25, 0.48)
    cx, cy = SIDE * rng.uniform(0.4, 0.6), SIDE * rng.uniform(0.4, 0.6)
    for i in range(n):
        r = outer * (1 - i / n)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colours[i])
    return _encode(_soften(image, rng))


def coloured_paper(seed: int = 0) -> bytes:
    """A saturated ``background()`` with a few shapes on it."""
    rng = random.Random(seed)
    back, *others = _rainbow(4, rng)
    image = Image.new("RGB", (SIDE, SIDE), back)
    draw = ImageDraw.Draw(image)
    for colour in others[: rng.randint(0, 3)]:
        x, y, r = rng.uniform(0.3, 0.7) * SIDE, rng.uniform(0.3, 0.7) * SIDE, SIDE * 0.15
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
    return _encode(image)


def flood(seed: int = 0) -> bytes:
    """The sheet flooded with one or two colours, a little paper left at the edge."""
    rng = random.Random(seed)
    paper = _paper(rng)
    image = Image.new("RGB", (SIDE, SIDE), paper)
    draw = ImageDraw.Draw(image)
    m = SIDE * rng.uniform(0.0, 0.08)
    a, b = _rainbow(2, rng)
    draw.rectangle((m, m, SIDE - m, SIDE - m), fill=a)
    if rng.random() < 0.5:
        draw.rectangle((m, SIDE / 2, SIDE - m, SIDE - m), fill=b)
    return _encode(_soften(image, rng))


ABSTRACT: dict[str, Callable[[int], bytes]] = {
    "stripes": lambda s: stripes(random.Random(s).randint(4, 16), s),
    "disc_wheel": lambda s: disc_wheel(random.Random(s).randint(8, 30), s),
    "confetti": lambda s: confetti(random.Random(s).randint(12, 200), s),
    "polygons": lambda s: polygons(random.Random(s).randint(3, 14), s),
    "rings": lambda s: rings(random.Random(s).randint(3, 9), s),
    "coloured_paper": coloured_paper,
    "flood": flood,
}
"""Abstract family name -> ``seed -> PNG``."""

FROM_PAINTING: dict[str, Callable[[bytes, int], bytes]] = {
    "shuffled_tiles": lambda png, s: shuffled_tiles(png, s, grid=random.Random(s).choice([3, 4])),
    "rotated_hue": lambda png, s: rotated_hue(png, random.Random(s).choice([90, 150, 210])),
    "palette_stripes": palette_stripes,
    "palette_discs": palette_discs,
    "palette_polygons": palette_polygons,
    "confetti_over": lambda png, s: with_confetti(png, random.Random(s).randint(8, 40), s),
}
"""Form-destroying transformation name -> ``(painting, seed) -> PNG``."""


def form_negatives(pngs: Sequence[bytes], seed: int = 0, per_kind: int = 6
                   ) -> list[tuple[int, str, bytes]]:
    """``per_kind`` negatives of every :data:`FROM_PAINTING` kind, each made from a pool
    painting chosen with ``seed``: (index of its source, kind, PNG)."""
    if not pngs:
        return []
    rng = random.Random(seed)
    out = []
    for kind, make in FROM_PAINTING.items():
        for _ in range(per_kind):
            i = rng.randrange(len(pngs))
            out.append((i, kind, make(pngs[i], rng.randrange(2**31))))
    return out


def abstract_negatives(seed: int = 0, per_family: int = 4) -> list[tuple[str, bytes]]:
    """``per_family`` pictures of every :data:`ABSTRACT` family: (family, PNG)."""
    rng = random.Random(seed)
    return [(name, make(rng.randrange(2**31))) for name, make in ABSTRACT.items()
            for _ in range(per_family)]
