"""Small generated flower paintings of two subjects, for the reward-robustness tests (PIL, no
browser): a hibiscus (broad warm petals around a dark red throat, green leaves) and a
sunflower (narrow yellow petals around a brown disc, a stem). ``love`` is soft, layered and
translucent; ``okay`` is one flat, darker pass."""

from __future__ import annotations

import io
import math
import random

from PIL import Image, ImageDraw, ImageFilter

from watercolour.rewards.references import ReferencePool

PAPER = (246, 240, 228)
SUBJECTS = {
    "a peach hibiscus": {"petal": [(240, 170, 130), (236, 140, 110)], "centre": (150, 40, 50),
                         "n": 5, "length": 0.34, "width": 0.8},
    "a gold sunflower": {"petal": [(245, 200, 60), (230, 170, 40)], "centre": (110, 70, 30),
                         "n": 14, "length": 0.3, "width": 0.28},
}


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def _petal(cx: float, cy: float, angle: float, length: float, width: float
           ) -> list[tuple[float, float]]:
    pts = []
    for u, v in ((0, 0), (0.3, -0.4), (0.7, -0.5), (1.0, 0.0), (0.7, 0.5), (0.3, 0.4)):
        x, y = u * length, v * width * length
        pts.append((cx + x * math.cos(angle) - y * math.sin(angle),
                    cy + x * math.sin(angle) + y * math.cos(angle)))
    return pts


def flower(seed: int, subject: str = "a peach hibiscus", tier: str = "love",
           size: int = 160) -> bytes:
    """One generated flower painting of ``subject`` (see the module docstring)."""
    spec = SUBJECTS[subject]
    rng = random.Random(f"{subject}-{tier}-{seed}")
    image = Image.new("RGBA", (size, size), (*PAPER, 255))
    cx, cy = size * rng.uniform(0.44, 0.56), size * rng.uniform(0.4, 0.52)
    layers = 3 if tier == "love" else 1

    def paint(shapes, colour, alpha, blur):
        nonlocal image
        sheet = Image.new("RGBA", (size, size), (0, 0, 0, 0))
        draw = ImageDraw.Draw(sheet)
        for kind, geometry in shapes:
            if kind == "poly":
                draw.polygon(geometry, fill=(*colour, alpha))
            else:
                draw.ellipse(geometry, fill=(*colour, alpha))
        if blur:
            sheet = sheet.filter(ImageFilter.GaussianBlur(blur))
        image = Image.alpha_composite(image, sheet)

    stem = [("poly", [(cx - 2, cy), (cx + 2, cy), (cx + 3, size * 0.95), (cx - 1, size * 0.95)])]
    leaves = [("poly", _petal(cx, cy + size * 0.25, a, size * 0.22, 0.4))
              for a in (rng.uniform(0.2, 0.8), math.pi - rng.uniform(0.2, 0.8))]
    green = (110, 160, 90) if tier == "love" else (60, 90, 50)
    paint(stem + leaves, green, 150 if tier == "love" else 255, 1.2 if tier == "love" else 0)
    start = rng.uniform(0, 2 * math.pi)
    length = size * spec["length"] * rng.uniform(0.9, 1.1)
    for layer in range(layers):
        shrink = 1 - 0.22 * layer
        petals = [("poly", _petal(cx, cy, start + 2 * math.pi * i / spec["n"]
                                  + rng.uniform(-0.1, 0.1), length * shrink, spec["width"]))
                  for i in range(spec["n"])]
        colour = spec["petal"][layer % 2]
        if tier != "love":
            colour = tuple(int(c * 0.6) for c in colour)
        paint(petals, colour, 90 + 40 * layer if tier == "love" else 255,
              size / 70 if tier == "love" else 0)
    r = size * 0.05
    paint([("ellipse", (cx - r, cy - r, cx + r, cy + r))], spec["centre"],
          200 if tier == "love" else 255, 1.0 if tier == "love" else 0)
    return _png(image)


def flower_pool(per_tier: int = 5) -> ReferencePool:
    """``per_tier`` love and ``per_tier`` okay paintings of each subject."""
    rows = []
    for subject in SUBJECTS:
        name = subject.split()[-1]
        for tier in ("love", "okay"):
            rows += [{"id": f"{name}-{tier}-{i}", "tier": tier, "subject": subject,
                      "png": flower(i, subject, tier)} for i in range(per_tier)]
    return ReferencePool.from_rows(rows, source="generated flowers")
