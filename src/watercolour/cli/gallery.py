"""``watercolour gallery --out DIR``: render the shipped example sketches into a gallery."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from watercolour.analysis.gallery import render_gallery
from watercolour.examples import load_examples
from watercolour.flags import JSON, OUT, SEED, command, flag
from watercolour.render import Renderer


@dataclass
class GalleryFlags:
    """``watercolour gallery``'s flags."""

    out: Path = flag(like=OUT, required=True,
                     help="folder for the PNGs, gallery.json and index.html")
    seed: int = flag(like=SEED)
    workers: int | None = flag(type=int)
    json: bool = flag(like=JSON, help=None)


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(verbs, name, GalleryFlags, run,
            help="render the example sketches into a gallery folder")


def run(args: argparse.Namespace) -> int:
    with Renderer(workers=args.workers) as renderer:
        entries = render_gallery(load_examples(), args.out, renderer, seed=args.seed)
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2))
    else:
        for e in entries:
            status = e.error.splitlines()[0] if e.error else f"paint {e.paint_fraction:.3f}"
            print(f"{e.name:24s} {e.seconds:6.2f} s  {status}")
        print(f"gallery: {args.out / 'index.html'}")
    return 0 if all(e.image for e in entries) else 1
