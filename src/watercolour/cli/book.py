"""``watercolour book build|run|list``: build the Jupyter Book, or run one chapter with papermill.

- ``watercolour book build [--root DIR] [--out DIR] [--all]`` runs ``jupyter-book build`` on the
  book root (the folder with ``_config.yml`` and ``_toc.yml``), executing the chapters.
- ``watercolour book run notebooks/01_the_medium.md --out runs/book -p n_examples=2`` executes
  one chapter with papermill and writes ``runs/book/01_the_medium.ipynb``.
- ``watercolour book list`` prints the chapters in reading order.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from watercolour import notebooks
from watercolour.errors import SetupError


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
        help="build the book, or run one of its chapters",
        description="Build the Jupyter Book (executing every chapter), run one chapter with "
        "papermill and chosen parameters, or list the chapters.",
    )
    actions = p.add_subparsers(dest="book_action", metavar="ACTION", required=True)

    build = actions.add_parser(
        "build",
        help="build the whole book to HTML",
        description="Run `jupyter-book build` on the book root. The HTML lands in OUT/html "
        "when OUT is named _build (the default, ROOT/_build), else in OUT/_build/html. "
        "Chapters are executed unless their cached execution is still valid.",
    )
    build.add_argument("--root", type=Path, default=None,
                       help="folder with _config.yml and _toc.yml (default: found from here)")
    build.add_argument("--out", type=Path, default=None,
                       help="build folder (default: ROOT/_build)")
    build.add_argument("--all", action="store_true",
                       help="rebuild every page, not only those that changed")
    build.add_argument("--fresh", action="store_true",
                       help="re-execute every chapter: drop the execution cache first (the "
                       "cache is keyed on the cells' code, not on the package's)")
    build.add_argument("--warnings-as-errors", action="store_true",
                       help="fail on any Sphinx warning (-W)")
    build.add_argument("--json", action="store_true", help="print the result as JSON")
    build.set_defaults(run=run)

    run_p = actions.add_parser(
        "run",
        help="run one chapter with papermill",
        description="Execute one chapter (a MyST .md notebook) with papermill. Parameters "
        "are injected after its `parameters` cell; values are read as JSON when they parse "
        "(2, 0.5, true, null, [1,2]) and as strings otherwise.",
    )
    run_p.add_argument("chapter", type=Path, help="the chapter, e.g. notebooks/01_the_medium.md")
    run_p.add_argument("--out", type=Path, default=Path("runs/book"),
                       help="folder for the executed notebook (default: runs/book)")
    run_p.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                       help="a parameter for the chapter (repeatable)")
    run_p.add_argument("-k", "--kernel", default="python3", help="Jupyter kernel (python3)")
    run_p.add_argument("--timeout", type=float, default=600,
                       help="seconds any one cell may run (default 600)")
    run_p.add_argument("--json", action="store_true", help="print the result as JSON")
    run_p.set_defaults(run=run)

    list_p = actions.add_parser("list", help="list the chapters in reading order")
    list_p.add_argument("--root", type=Path, default=None,
                        help="folder with _config.yml and _toc.yml (default: found from here)")
    list_p.add_argument("--json", action="store_true", help="print the chapters as JSON")
    list_p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.book_action == "build":
        return _build(args)
    if args.book_action == "run":
        return _run(args)
    return _list(args)


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


def _jupyter_book() -> str:
    """The ``jupyter-book`` beside this interpreter (so its kernel is this environment's), else
    the one on PATH."""
    beside = Path(sys.executable).parent / "jupyter-book"
    if beside.is_file():
        return str(beside)
    found = shutil.which("jupyter-book")
    if found is None:
        raise FileNotFoundError(
            "jupyter-book is not installed; install the book extra: pip install 'watercolour[book]'"
        )
    return found


def _build(args: argparse.Namespace) -> int:
    root = _book_root(args.root)
    out = (args.out or root / "_build").resolve()
    path_output = out.parent if out.name == "_build" else out
    html = path_output / "_build" / "html"
    cmd = [_jupyter_book(), "build", str(root), "--path-output", str(path_output)]
    if args.fresh:
        shutil.rmtree(path_output / "_build" / ".jupyter_cache", ignore_errors=True)
    if args.all or args.fresh:
        cmd.append("--all")
    if args.warnings_as_errors:
        cmd += ["-W", "-n", "--keep-going"]
    t0 = time.perf_counter()
    # jupyter-book's own output goes to stderr when --json wants a clean stdout
    proc = subprocess.run(cmd, cwd=root, stdout=sys.stderr if args.json else None)
    seconds = time.perf_counter() - t0
    ok = proc.returncode == 0 and (html / "index.html").is_file()
    if args.json:
        print(json.dumps({"ok": ok, "html": str(html), "seconds": round(seconds, 2),
                          "returncode": proc.returncode}, indent=2))
    elif ok:
        print(f"book built in {seconds:.1f} s: {html / 'index.html'}")
    if not ok:
        raise SetupError(f"jupyter-book build failed (exit code {proc.returncode}); "
                           "see its output above")
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
