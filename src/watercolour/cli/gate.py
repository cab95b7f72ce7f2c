"""``watercolour gate FILE [--mode library|allowlist] [--json]``: run the gate on a sketch or a
whole model reply. The mode defaults to ``WATERCOLOUR_GATE_MODE`` (as in ``score``), else
library."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from watercolour import settings
from watercolour.errors import read_text
from watercolour.flags import DEADLINE, JSON, OUT, SEED, add_flags, flag, positional, switch
from watercolour.gates import VOCABULARY, Floors, GateConfig, GateVerdict, check
from watercolour.io import write_bytes_atomic
from watercolour.render import Renderer, RenderResult

EXIT_PASSED = 0
EXIT_REJECTED = 1
EXIT_UNAVAILABLE = 3


@dataclass
class GateFlags:
    """``watercolour gate``'s flags beyond :class:`~watercolour.gates.GateConfig`'s."""

    file: Path = positional(type=Path, help="a sketch (.js) or a model reply (.txt, .md)")
    json: bool = flag(like=JSON, help="print the verdict as JSON on stdout")
    seed: int = flag(like=SEED, help="render seed (default 0)")
    paint_floor: float = flag(type=float, default=Floors.paint_floor,
                              help=f"minimum paint fraction (default {Floors.paint_floor})")
    deadline: float | None = flag(like=DEADLINE, help="render deadline in seconds")
    out: Path | None = flag("-o", "--out", like=OUT, help="write the render's PNG here")
    render_rejected: bool = switch(help="render even when the code alone is enough to reject "
                                   "it")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
        help="check a sketch (or a model's whole reply) against the gates",
        description="Extract the sketch from FILE (a .js sketch or a model's reply with a fenced "
        "code block), inspect it statically, render it and check what it did and painted. "
        "Exit codes: 0 passed, 1 rejected (the sketch's fault), 3 unavailable (the browser "
        "failed twice: not the sketch's fault).",
        epilog="violations: " + ", ".join(VOCABULARY),
    )
    settings.add_arguments(p, GateConfig)
    add_flags(p, GateFlags)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    reply = read_text(args.file, "reply")
    config = settings.from_arguments(GateConfig, args)
    renderer = LazyRenderer(deadline_s=args.deadline)
    try:
        verdict = check(reply, renderer, mode=config.mode, paint_floor=args.paint_floor,
                        seed=args.seed, render_rejected=args.render_rejected)
    finally:
        renderer.close()
    if args.out is not None and verdict.render is not None and verdict.render.png is not None:
        write_bytes_atomic(args.out, verdict.render.png)
    if args.json:
        print(json.dumps(summary(verdict), indent=2))
    else:
        print_human(verdict, args.file)
    if verdict.status == "unavailable":
        return EXIT_UNAVAILABLE
    return EXIT_PASSED if verdict.passed else EXIT_REJECTED


class LazyRenderer:
    """Starts a browser on the first render only: a sketch the code alone rejects needs none."""

    def __init__(self, **overrides: object) -> None:
        self._overrides = overrides
        self._renderer: Renderer | None = None

    def render(self, code: str, seed: int = 0) -> RenderResult:
        if self._renderer is None:
            self._renderer = Renderer(**self._overrides).start()
        return self._renderer.render(code, seed=seed)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def summary(verdict: GateVerdict) -> dict:
    """The verdict's headline fields (the CLI's ``--json``)."""
    image = verdict.image
    return {
        "passed": verdict.passed,
        "status": verdict.status,
        "mode": verdict.mode,
        "violations": verdict.violations,
        "reasons": verdict.reasons,
        "notes": verdict.notes,
        "n_shapes": verdict.n_shapes,
        "paint_fraction": round(verdict.paint_fraction, 6),
        "shape_edges": image.shape_edges if image else None,
        "speck_fraction": image.speck_fraction if image else None,
        "methods_used": verdict.methods_used,
        "outside_allowlist": verdict.outside_allowlist,
        "n_outside_allowlist": len(verdict.outside_allowlist),
        "infrastructure_failure": verdict.infrastructure_failure,
        "error": verdict.error,
        "extraction": verdict.extraction.kind,
        "rendered": verdict.render is not None,
        "seconds": round((verdict.render.timings.get("total_s") or 0.0), 3)
        if verdict.render is not None else 0.0,
    }


def print_human(verdict: GateVerdict, path: Path) -> None:
    print(f"{path}: {verdict.summary()}")
    if verdict.methods_used:
        print("  brush methods: " + ", ".join(f"{m} x{n}" for m, n in
                                              verdict.methods_used.items()))
    for note in verdict.notes:
        print(f"  note: {note}")
    if verdict.status == "unavailable":
        print("  the browser failed twice; this is not the sketch's fault", file=sys.stderr)
