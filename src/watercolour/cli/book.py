"""``watercolour book run|build|check|list|export``: the book, built one way: as a pipeline.

- ``watercolour book run [--out runs/book] [-p 01_the_medium.n_examples=2]`` runs the book as a
  pipeline: every chapter executed once with papermill, then the HTML built from the executed
  notebooks (``watercolour.book.pipeline``); ``watercolour book run CHAPTER`` runs one chapter
  and writes ``runs/book/<chapter>.ipynb``.
- ``watercolour book build [--run runs/book] [--html DIR]`` builds the HTML again from the
  executed notebooks of a pipeline run (execution off); without a run it says so.
- ``watercolour book check [HTML]`` opens the built pages in headless Chromium.
- ``watercolour book list`` prints the chapters in reading order.
- ``watercolour book export --out DIR`` writes every chapter as an ``.ipynb`` without outputs
  under ``DIR/notebooks/``, its badge naming itself: what ``.github/workflows/book.yml``
  publishes for Colab.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from watercolour import notebooks
from watercolour.book import pipeline
from watercolour.flags import JSON, OUT, Shared, command, flag, positional, switch

ROOT = Shared(("--root",), options={"type": Path},
              help="folder with _config.yml and _toc.yml (default: found from here)")
"""``--root``: the book's folder, which every action reads."""

HTML = Shared(("--html",), options={"type": Path},
              help="build folder for the HTML (default ROOT/_build: the HTML lands in "
              "ROOT/_build/html)")
"""``--html``: where the HTML is built."""


@dataclass
class BuildFlags:
    """``book build``'s flags."""

    root: Path | None = flag(like=ROOT)
    run_dir: Path = flag("--run", type=Path, default=Path("runs/book"),
                         help="the pipeline's run folder (default: runs/book)")
    html: Path | None = flag(like=HTML)
    json: bool = flag(like=JSON)


@dataclass
class RunFlags:
    """``book run``'s flags."""

    chapter: Path | None = positional(type=Path, nargs="?",
                                      help="one chapter to run, e.g. notebooks/01_the_medium.md "
                                      "(default: all)")
    root: Path | None = flag(like=ROOT)
    out: Path = flag(like=OUT, default=Path("runs/book"),
                     help="the run folder (default: runs/book)")
    parameter: list[str] = flag("-p", "--parameter", action="append", default=[],
                                metavar="[CHAPTER.]NAME=VALUE",
                                help="a parameter (repeatable); in the pipeline NAME=VALUE goes "
                                "to every chapter that declares NAME, CHAPTER.NAME=VALUE (e.g. "
                                "01_the_medium.n_examples=2) to one")
    mode: str = flag(default="tiny", choices=pipeline.MODES,
                     help="the scale, passed to every chapter with a `mode` parameter (tiny)")
    only: list[str] | None = flag(nargs="+", metavar="CHAPTER",
                                  help="run only these chapters (stems, e.g. "
                                  "08_analysis_of_a_run)")
    html: Path | None = flag(like=HTML)
    no_build: bool = switch(help="execute the chapters only; build no HTML")
    kernel: str = flag("-k", "--kernel", default="python3", help="Jupyter kernel (python3)")
    timeout: float = flag(type=float, default=1800,
                          help="seconds any one cell may run (default 1800)")
    json: bool = flag(like=JSON)


@dataclass
class CheckFlags:
    """``book check``'s flags."""

    html: Path | None = positional(type=Path, nargs="?",
                                   help="the HTML folder (default: ROOT/_build/html)")
    json: bool = flag(like=JSON, help="print the reports as JSON")


@dataclass
class ListFlags:
    """``book list``'s flags."""

    root: Path | None = flag(like=ROOT)
    json: bool = flag(like=JSON, help="print the chapters as JSON")


@dataclass
class ExportFlags:
    """``book export``'s flags."""

    root: Path | None = flag(like=ROOT)
    out: Path = flag(like=OUT, help="where notebooks/ is written", required=True)
    json: bool = flag(like=JSON, help="print the files as JSON")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
        help="run the book as a pipeline (or one chapter), build and check its HTML",
        description="Run the book as a pipeline (every chapter executed once with papermill, "
        "then the HTML built from the executed notebooks), run one chapter with chosen "
        "parameters, build the HTML again from a run, check the built pages, list or export "
        "the chapters.",
    )
    actions = p.add_subparsers(dest="book_action", metavar="ACTION", required=True)
    command(
        actions, "build", BuildFlags, run,
        help="build the HTML again from a pipeline run (executes nothing)",
        description="Build the HTML from the executed notebooks of a `watercolour book run` "
        "(RUN/run.json), with execution off, as `book run` does after executing: the book is "
        "built one way, by the pipeline, which hands each chapter the outputs of the ones "
        "before it. Without a run in RUN it fails and says to run `watercolour book run`.",
    )
    command(
        actions, "run", RunFlags, run,
        help="run the whole book as a pipeline (or one chapter) with papermill",
        description="Without CHAPTER: execute every chapter once, in reading order, with "
        "papermill from its text form into OUT (OUT/executed/*.ipynb, OUT/results/<chapter>/, "
        "OUT/run.json), handing each chapter the artifacts of the ones before it, with a "
        "progress line per chapter; then build the HTML from those executed notebooks with "
        "execution off (into --html). With CHAPTER: execute that one chapter. Parameters "
        "are injected after a chapter's `parameters` cell; values are read as JSON when they "
        "parse (2, 0.5, true, null, [1,2]) and as strings otherwise.",
    )
    command(
        actions, "check", CheckFlags, run,
        help="open the built pages in headless Chromium and report errors",
        description="Open every page of a built book offline in headless Chromium: figures "
        "shown, cell error outputs, JavaScript errors, broken images, requests that left the "
        "book; and read its HTML for what shows the build machine: absolute machine paths, "
        "Python warnings, tracebacks, raw progress bars, code lines over 80 characters. "
        "Exit code 1 when any page has a problem.",
    )
    command(actions, "list", ListFlags, run, help="list the chapters in reading order")
    command(
        actions, "export", ExportFlags, run,
        help="write the chapters as notebooks for Colab (no outputs)",
        description="Write every chapter as an .ipynb without outputs under OUT/notebooks/: "
        "its Colab badge names itself on the published branch, its `package` defaults to the "
        "repository. The workflow .github/workflows/book.yml publishes them.",
    )


def run(args: argparse.Namespace) -> int:
    if args.book_action == "build":
        return _build(args)
    if args.book_action == "run":
        return _run(args) if args.chapter is not None else _pipeline(args)
    if args.book_action == "check":
        return _check(args)
    if args.book_action == "export":
        return _export(args)
    return _list(args)


def _export(args: argparse.Namespace) -> int:
    from watercolour.book.colab import export_notebooks

    root = _book_root(args.root)
    written = export_notebooks(root, args.out)
    if args.json:
        print(json.dumps([str(p) for p in written], indent=2))
    else:
        print(f"{len(written)} notebooks in {args.out / 'notebooks'}")
    return 0


def _book_root(root: Path | None) -> Path:
    if root is not None:
        found = notebooks.project_root(root)
        if found is None or found != root.resolve():
            raise FileNotFoundError(f"no _config.yml and _toc.yml in {root}")
        return found
    found = notebooks.project_root()
    if found is None:
        raise FileNotFoundError(
            "no _config.yml and _toc.yml here or above; run inside the repository or pass --root"
        )
    return found


def _build(args: argparse.Namespace) -> int:
    root = _book_root(args.root)
    t0 = time.perf_counter()
    html = pipeline.build_html(root, args.run_dir, out=args.html or root / "_build")
    seconds = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"ok": True, "run": str(args.run_dir.resolve()), "html": str(html),
                          "seconds": round(seconds, 2)}, indent=2))
    else:
        print(f"book built from {args.run_dir} in {seconds:.1f} s: {html / 'index.html'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    parameters = notebooks.parse_parameters(args.parameter)
    t0 = time.perf_counter()
    output = notebooks.run_notebook(
        args.chapter, args.out, parameters=parameters, kernel=args.kernel, timeout=args.timeout
    )
    seconds = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"chapter": str(args.chapter), "executed": str(output),
                          "parameters": parameters, "seconds": round(seconds, 2)}, indent=2))
    else:
        print(f"ran {args.chapter} in {seconds:.1f} s: {output}")
    return 0


def _pipeline_parameters(items: list[str]) -> tuple[dict, dict]:
    """``-p`` values -> (for every chapter, {chapter: for that one})."""
    common: dict = {}
    scoped: dict[str, dict] = {}
    for item in items:
        key, sep, value = item.partition("=")
        chapter, dot, name = key.rpartition(".")
        name, parsed = notebooks.parse_parameter(f"{name}{sep}{value}")
        if dot:
            scoped.setdefault(chapter.strip(), {})[name] = parsed
        else:
            common[name] = parsed
    return common, scoped


def _pipeline(args: argparse.Namespace) -> int:
    root = _book_root(args.root)
    common, scoped = _pipeline_parameters(args.parameter)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if args.json else (
        lambda line: print(line, flush=True))
    t0 = time.perf_counter()
    runs = pipeline.run_chapters(root, args.out, mode=args.mode, overrides=scoped,
                                 only=args.only, kernel=args.kernel, timeout=args.timeout,
                                 common=common, progress=say)
    html = None
    if not args.no_build:
        say("building the HTML from the executed notebooks (no execution)")
        t1 = time.perf_counter()
        html = pipeline.build_html(root, args.out, out=args.html or root / "_build")
        say(f"built in {time.perf_counter() - t1:.1f} s: {html / 'index.html'}")
    seconds = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"run": str(args.out.resolve()), "html": str(html) if html else None,
                          "seconds": round(seconds, 2),
                          "chapters": [{"chapter": r.chapter, "seconds": r.seconds,
                                        "executed": r.executed, "parameters": r.parameters}
                                       for r in runs]}, indent=2))
    else:
        print(f"book run: {len(runs)} chapters in {seconds:.1f} s "
              f"({args.out.resolve() / 'run.json'})")
    return 0


def _check(args: argparse.Namespace) -> int:
    from watercolour.book.pages import check_pages

    html = args.html or _book_root(None) / "_build" / "html"
    reports = check_pages(html)
    if args.json:
        print(json.dumps([{**asdict(r), "ok": r.ok} for r in reports], indent=2))
    else:
        for r in reports:
            print(f"{'ok ' if r.ok else 'BAD'} {r.page}: {r.figures} figures"
                  + "".join(f"\n    {p}" for p in r.problems()))
    return 0 if all(r.ok for r in reports) else 1


def _list(args: argparse.Namespace) -> int:
    root = _book_root(args.root)
    chapters = notebooks.list_chapters(root)
    if args.json:
        print(json.dumps([{"part": c.part, "path": str(c.path.relative_to(root))}
                          for c in chapters], indent=2))
        return 0
    part: str | None = None
    for chapter in chapters:
        if chapter.part != part and chapter.part is not None:
            print(f"{chapter.part}:")
        part = chapter.part
        indent = "  " if chapter.part is not None else ""
        print(f"{indent}{chapter.path.relative_to(root)}")
    return 0
