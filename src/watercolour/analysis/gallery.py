"""Render sketches into a folder: one PNG each, ``gallery.json`` and a static ``index.html``."""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from watercolour.io import write_bytes_atomic, write_json_atomic, write_text_atomic
from watercolour.render import Renderer


@dataclass
class GalleryEntry:
    """One rendered sketch in a gallery."""

    name: str
    image: str | None
    seed: int
    paint_fraction: float
    seconds: float
    error: str | None
    lines: int


def render_gallery(
    sketches: Mapping[str, str], out: str | Path, renderer: Renderer, seed: int = 0
) -> list[GalleryEntry]:
    """Render every sketch with ``seed`` into ``out``; returns the entries written to
    ``gallery.json`` (which also records the renderer's backend and configuration)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    names = list(sketches)
    t0 = time.perf_counter()
    results = renderer.render_many([sketches[n] for n in names], seed)
    entries = []
    for name, result in zip(names, results):
        image = None
        if result.png is not None:
            image = f"{name}.png"
            write_bytes_atomic(folder / image, result.png)
        entries.append(
            GalleryEntry(
                name=name,
                image=image,
                seed=seed,
                paint_fraction=round(result.paint_fraction, 4),
                seconds=round(result.timings.get("total_s") or 0.0, 3),
                error=result.error or result.infra_error,
                lines=sketches[name].count("\n") + 1,
            )
        )
    write_json_atomic(
        folder / "gallery.json",
        {
            "backend": renderer.backend,
            "config": asdict(renderer.config),
            "wall_s": round(time.perf_counter() - t0, 3),
            "entries": [asdict(e) for e in entries],
        },
    )
    write_text_atomic(folder / "index.html", gallery_html(entries))
    return entries


def gallery_html(entries: list[GalleryEntry]) -> str:
    """A static page of thumbnails with their names and numbers."""
    cards = []
    for e in entries:
        picture = (f'<img src="{html.escape(e.image)}" width="256" height="256">'
                   if e.image else '<div class="missing">no picture</div>')
        note = html.escape(e.error.splitlines()[0]) if e.error else (
            f"paint {e.paint_fraction:.2f} · {e.seconds:.2f} s · {e.lines} lines")
        cards.append(f"<figure>{picture}<figcaption><b>{html.escape(e.name)}</b><br>{note}"
                     "</figcaption></figure>")
    return ("<!doctype html><meta charset='utf-8'><title>watercolour gallery</title>"
            "<style>body{font-family:sans-serif;display:flex;flex-wrap:wrap;gap:12px}"
            "figure{margin:0}figcaption{font-size:13px}</style>" + "".join(cards) + "\n")
