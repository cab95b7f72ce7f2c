"""``watercolour render SKETCH.js -o out.png [--seed N] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from watercolour.cli.inputs import output_file, read_input
from watercolour.env.limits import MAX_REPLY_CHARS
from watercolour.errors import InputError
from watercolour.flags import DEADLINE, JSON, OUT, SEED, command, flag, positional
from watercolour.io import write_bytes_atomic
from watercolour.render import Renderer, RenderResult

EXIT_SKETCH_FAILED = 1
EXIT_INFRASTRUCTURE = 3


@dataclass
class RenderFlags:
    """``watercolour render``'s flags."""

    sketch: Path = positional(type=Path, help=f"a .js sketch file, at most {MAX_REPLY_CHARS} "
                              "characters (the server's limit)")
    out: Path | None = flag("-o", "--out", like=OUT, help="where to write the PNG")
    seed: int = flag(like=SEED, help="seed for Math.random and p5 (default 0)")
    deadline: float | None = flag(like=DEADLINE, help="seconds before giving up")
    json: bool = flag(like=JSON, help="print the result as JSON (without the PNG bytes)")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, RenderFlags, run,
        help="render one sketch to PNG",
        description="Render a p5.js + p5.brush sketch to PNG in headless Chromium. Exit codes: "
        "0 rendered, 1 the sketch failed (error, timeout, crash), 3 the browser failed.",
    )


def run(args: argparse.Namespace) -> int:
    code = read_input(args.sketch, "sketch")
    output_file(args.out)
    if args.deadline is not None and not args.deadline > 0:
        raise InputError(f"--deadline must be a positive number of seconds, got {args.deadline}")
    with Renderer(deadline_s=args.deadline) as renderer:
        result = renderer.render(code, seed=args.seed)
    if args.out is not None and result.png is not None:
        write_bytes_atomic(args.out, result.png)
    if args.json:
        data = result.to_dict()
        data["out"] = str(args.out) if args.out is not None and result.png else None
        print(json.dumps(data, indent=2))
    else:
        _print_human(result, args.out)
    if result.infrastructure_failure:
        return EXIT_INFRASTRUCTURE
    return 0 if result.ok else EXIT_SKETCH_FAILED


def _print_human(result: RenderResult, out: Path | None) -> None:
    t = result.timings
    if result.png is not None:
        where = f" -> {out}" if out else ""
        print(f"rendered {result.width}x{result.height}{where}: "
              f"paint {result.paint_fraction:.3f}, {t.get('total_s', 0):.2f} s "
              f"(draw {t.get('draw_s') or 0:.2f} s) on {result.backend}")
    if result.error:
        print(f"sketch error: {result.error.splitlines()[0]}", file=sys.stderr)
    if result.infra_error:
        print(f"infrastructure error: {result.infra_error}", file=sys.stderr)
    if result.blocked_requests:
        print(f"blocked {len(result.blocked_requests)} network request(s): "
              f"{', '.join(result.blocked_requests[:3])}", file=sys.stderr)
