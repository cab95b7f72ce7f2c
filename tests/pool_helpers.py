"""Small pools made of synthetic PNGs, shared by the pool tests (no browser needed)."""

from __future__ import annotations

import io

from PIL import Image


def png(seed: int, size: int = 24) -> bytes:
    """A small, distinct PNG for each seed."""
    image = Image.new("RGB", (size, size), (246, 240, 228))
    r, g, b = (seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256
    for x in range(size // 4, size // 4 + size // 2):
        for y in range(size // 4, size // 4 + size // 2):
            image.putpixel((x, y), (r, g, b))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def rows(n_love: int = 2, n_okay: int = 3) -> list[dict]:
    out = []
    for i in range(n_love + n_okay):
        tier = "love" if i < n_love else "okay"
        out.append({
            "id": f"p{i:03d}", "tier": tier, "subject": "a peach hibiscus" if i % 2 else
            "a red poppy", "sketch": f"function setup() {{ createCanvas(64, 64, WEBGL); }} // {i}",
            "painter": "procedural", "round": 3, "critique": "fine", "seed": i,
            "paint_fraction": 0.1 + 0.05 * i, "n_shapes": 10 + i, "rated_at": None,
            "rated_by": "synthetic:test", "png": png(i),
        })
    return out
