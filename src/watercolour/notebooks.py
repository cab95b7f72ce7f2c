"""Run the book's chapters: MyST text notebooks executed with papermill, and the table of contents.

Chapters live in git as MyST Markdown (``notebooks/*.md`` with a jupytext header); there is no
``.ipynb`` beside them. :func:`run_notebook` reads a chapter with jupytext, lets papermill inject
parameters after its ``parameters``-tagged cell, and writes the executed notebook under an output
folder. :func:`list_chapters` reads ``_toc.yml``.

Needs the ``book`` extra (jupytext, papermill, ipykernel) and a Jupyter kernel named like the
one requested (``python3`` by default; ``python -m ipykernel install --sys-prefix`` registers the
current interpreter's).

Two small helpers keep the chapters thin: :func:`markdown_table` (rows -> a Markdown table, cells
escaped) and :func:`thumbnail` (a PNG shrunk for a widget or a figure).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.errors import SetupError
from watercolour.results import BENCHMARKS

BOOK_FILES = ("_config.yml", "_toc.yml")
"""The files that mark the book's root folder (the repository root)."""

NOTEBOOK_SUFFIXES = (".md", ".ipynb", ".py")
"""File types the table of contents may name without a suffix, tried in this order."""


class NotebookError(SetupError):
    """A notebook could not be run: its kernel is missing, or one of its cells raised."""

    def __init__(
        self,
        message: str,
        *,
        cell_index: int | None = None,
        ename: str | None = None,
        evalue: str | None = None,
        output: Path | None = None,
    ) -> None:
        super().__init__(message)
        self.cell_index = cell_index
        self.ename = ename
        self.evalue = evalue
        self.output = output
        """The executed (partial) notebook, when papermill got as far as writing it."""


@dataclass(frozen=True)
class Chapter:
    """One file in the book's table of contents."""

    path: Path
    """The chapter's source file (absolute)."""
    part: str | None
    """The caption of the part it belongs to (``None`` for the root page)."""

    @property
    def name(self) -> str:
        return self.path.stem


def project_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the working directory) that holds the
    book's ``_config.yml`` and ``_toc.yml``; ``None`` outside a checkout (e.g. on Colab)."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if all((folder / name).is_file() for name in BOOK_FILES):
            return folder
    return None


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """A path a chapter is given (a parameter: a pool, a curve, rollouts, an output folder).

    An absolute path is used as it is; a relative one is taken from the project root when the
    chapter runs inside a checkout (so ``runs/book/...`` means the repository's ``runs/``
    whether papermill started the kernel in ``notebooks/`` or a reader opened the chapter in
    Jupyter), else from the working directory. The book's pipeline passes paths relative to
    the project root, so a page shows the reader's relative paths (:func:`shown_path`).
    """
    found = Path(path).expanduser()
    return found if found.is_absolute() else (project_root() or Path.cwd()) / found


def resolve_output_dir(out_dir: str | os.PathLike[str], create: bool = True) -> Path:
    """Where a chapter writes its results: ``out_dir`` resolved as :func:`resolve_path` does,
    created when ``create``."""
    path = resolve_path(out_dir)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a page shows it: a file of an installed package from the package's folder
    (``watercolour/...``), relative to the project root (else the working directory) when it
    lies under it, under the home folder as ``~/...``; else as it is. A reader's run
    then shows the reader's paths, not the build machine's."""
    given = Path(path).expanduser()
    if not given.is_absolute():
        return given.as_posix()
    parts = given.parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return Path(*parts[parts.index(marker) + 1:]).as_posix()
    for base in (project_root(), Path.cwd()):
        if base is not None and given.is_relative_to(base):
            return given.relative_to(base).as_posix()
    if given.is_relative_to(Path.home()):
        return "~/" + given.relative_to(Path.home()).as_posix()
    return given.as_posix()


def read_notebook(path: str | os.PathLike[str]) -> Any:
    """Read a notebook (MyST ``.md``, ``.py`` percent script or ``.ipynb``) into an
    ``nbformat.NotebookNode`` with jupytext. A ``.md`` file is always read as MyST, whatever
    its header says, and must contain at least one ``{code-cell}``."""
    import jupytext

    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"notebook not found: {source}")
    if source.suffix == ".md":
        nb = jupytext.read(source, fmt="md:myst")
        if not any(cell.cell_type == "code" for cell in nb.cells):
            raise ValueError(f"{source} has no {{code-cell}}: not a MyST notebook")
        return nb
    return jupytext.read(source)


def notebook_parameters(path: str | os.PathLike[str]) -> dict[str, str]:
    """The parameters a notebook declares in its ``parameters``-tagged cell: name -> default
    (as written in the source). Empty when it has no such cell."""
    from papermill.inspection import _infer_parameters

    nb = read_notebook(path)
    for cell in nb.cells:  # papermill expects every cell to carry a tags list
        cell.metadata.setdefault("tags", [])
    return {p.name: p.default for p in _infer_parameters(nb)}


def run_notebook(
    path: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    parameters: Mapping[str, Any] | None = None,
    kernel: str = "python3",
    timeout: float | None = 600,
    cwd: str | os.PathLike[str] | None = None,
    strict: bool = True,
) -> Path:
    """Execute a chapter with papermill and return the path of the executed ``.ipynb``.

    Args:
        path: the chapter's source (``notebooks/01_the_medium.md``).
        output_dir: folder for the executed notebook, written as ``<stem>.ipynb``; created if
            missing. Never the ``notebooks/`` folder: no ``.ipynb`` is kept beside the sources.
        parameters: values injected after the ``parameters``-tagged cell.
        kernel: the Jupyter kernel to run it with.
        timeout: seconds any one cell may run (``None``: no limit).
        cwd: the kernel's working directory; default the chapter's own folder, as when a reader
            opens it in Jupyter, so relative paths mean the same in both.
        strict: refuse parameters the notebook does not declare (a typo would otherwise be
            injected silently and ignored).

    Raises:
        FileNotFoundError: the chapter does not exist.
        ValueError: ``strict`` and a parameter is not declared, or ``output_dir`` is the
            chapter's own folder.
        NotebookError: the kernel could not start, or a cell raised; the message names the
            cell and its error, and ``.output`` the partial notebook.
    """
    import papermill
    from jupyter_client.kernelspec import NoSuchKernel
    from papermill.exceptions import PapermillExecutionError

    source = Path(path).resolve()
    nb = read_notebook(source)
    params = dict(parameters or {})
    if strict and params:
        declared = notebook_parameters(source)
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise ValueError(
                f"{source.name} has no parameter(s) {', '.join(unknown)}; "
                f"it declares: {', '.join(declared) or 'none'}"
            )
    out_folder = Path(output_dir).resolve()
    if out_folder == source.parent:
        raise ValueError(f"write executed notebooks outside the chapter folder {source.parent}")
    out_folder.mkdir(parents=True, exist_ok=True)
    output = out_folder / f"{source.stem}.ipynb"
    try:
        papermill.execute_notebook(
            nb,
            str(output),
            parameters=params,
            kernel_name=kernel,
            cwd=str(Path(cwd) if cwd is not None else source.parent),
            execution_timeout=timeout,
            progress_bar=False,
            log_output=False,
        )
    except NoSuchKernel as err:
        raise NotebookError(
            f"no Jupyter kernel named {kernel!r} (install one for this interpreter with "
            f"`python -m ipykernel install --sys-prefix`): {err}",
            output=output if output.exists() else None,
        ) from err
    except PapermillExecutionError as err:
        where = f"cell {err.cell_index}" + (f" [{err.exec_count}]" if err.exec_count else "")
        raise NotebookError(
            f"{source.name} failed in {where}: {err.ename}: {err.evalue} "
            f"(executed notebook: {output})",
            cell_index=err.cell_index,
            ename=err.ename,
            evalue=err.evalue,
            output=output,
        ) from err
    return output


def kernel_command(kernel: str = "python3") -> list[str]:
    """The command line Jupyter would start ``kernel`` with, from this process (a kernelspec
    whose ``argv`` starts with ``python`` runs this interpreter). Lets a caller check that the
    chapters run in this environment rather than some other Python."""
    from jupyter_client.kernelspec import NoSuchKernel
    from jupyter_client.manager import KernelManager

    try:
        return list(KernelManager(kernel_name=kernel).format_kernel_cmd())
    except NoSuchKernel as err:
        raise NotebookError(
            f"no Jupyter kernel named {kernel!r}; register this interpreter's with "
            "`python -m ipykernel install --sys-prefix`"
        ) from err


def parse_parameter(item: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)``, the value read as JSON when it parses (numbers,
    ``true``/``false``/``null``, lists, quoted strings) and kept as a string otherwise."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ValueError(f"parameter {item!r} is not of the form name=value")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def parse_parameters(items: Iterable[str]) -> dict[str, Any]:
    """Several ``key=value`` strings -> a dict (a later key wins)."""
    return dict(parse_parameter(item) for item in items)


def list_chapters(root: str | os.PathLike[str] | None = None) -> list[Chapter]:
    """The book's pages in reading order, from ``_toc.yml`` (``format: jb-book``).

    ``root`` is the folder holding ``_toc.yml``; by default the project root found from the
    working directory.
    """
    import yaml

    base = Path(root) if root is not None else project_root()
    if base is None:
        raise FileNotFoundError("no _config.yml + _toc.yml found here or in any parent folder")
    toc_path = base / "_toc.yml"
    if not toc_path.is_file():
        raise FileNotFoundError(f"table of contents not found: {toc_path}")
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8")) or {}
    if toc.get("format") != "jb-book":
        raise ValueError(f"{toc_path}: expected `format: jb-book`, found {toc.get('format')!r}")
    if "root" not in toc:
        raise ValueError(f"{toc_path}: no `root` page")

    chapters = [Chapter(_resolve_page(base, toc["root"]), None)]

    def walk(entries: list[dict[str, Any]], part: str | None) -> None:
        for entry in entries:
            if "file" in entry:
                chapters.append(Chapter(_resolve_page(base, entry["file"]), part))
            walk(entry.get("sections", []), part)

    for part in toc.get("parts", []):
        walk(part.get("chapters", []), part.get("caption"))
    walk(toc.get("chapters", []), None)
    return chapters


def _resolve_page(base: Path, name: str) -> Path:
    page = base / name
    if page.suffix in NOTEBOOK_SUFFIXES and page.is_file():
        return page.resolve()
    for suffix in NOTEBOOK_SUFFIXES:
        candidate = page.with_name(page.name + suffix)
        if candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(f"_toc.yml names {name!r} but no such file exists under {base}")


# ---------------------------------------------------------------- helpers for the chapters


NUMBER = re.compile(r"^[-+\u2212]?(\d[\d,]*\.?\d*|\.\d+)(%| ?/ ?\d+| [a-zA-Z%]{1,3})?$")
"""A cell that reads as a number (``0.412``, ``-3``, ``88%``, ``29/32``, ``1 / 320``,
``104.7 s``)."""


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]],
                   limit: int | None = None) -> str:
    """A Markdown table: one row per item of ``rows``; each cell's text has its ``|`` escaped
    and its newlines joined, and is cut to ``limit`` characters (with an ellipsis) if given. A
    column whose cells are all numbers (:data:`NUMBER`; ``-`` or ``?`` for none) is aligned
    right, so its digits line up."""
    def cell(value: object) -> str:
        text = str(value).replace("|", "\\|").replace("\n", " ")
        return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"

    body = [list(row) for row in rows]
    for row in body:
        if len(row) != len(header):
            raise ValueError(f"a row has {len(row)} cells, the header {len(header)}")
    columns = [[cell(row[i]) for row in body] for i in range(len(header))]
    numeric = [any(NUMBER.match(c) for c in column)
               and all(NUMBER.match(c) or c in ("-", "?", "") for c in column)
               for column in columns]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "".join("---:|" if right else "---|" for right in numeric)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in body]
    return "\n".join(lines)


def thumbnail(png: bytes, size: int = 320) -> bytes:
    """``png`` shrunk to fit a ``size`` x ``size`` box, as PNG
    (:func:`watercolour.render.paint.thumbnail`, imported here when called: this module loads
    before the package's dependencies are installed)."""
    from watercolour.render.paint import thumbnail as shrink

    return shrink(png, size)


def install(package: str = "", *extras: str, mode: str | None = None, **options: Any) -> None:
    """A chapter's install cell: the package's ``extras`` from ``package`` (a source without
    extras) and a browser, when missing; prints one line. See
    :func:`watercolour.reader.install.install` (which returns what it did). Then filters the
    libraries' warnings that say nothing to a reader (:mod:`watercolour.reader.quiet`)."""
    from watercolour.reader.install import install as _install
    from watercolour.reader.quiet import filter_known_warnings

    _install(package, *extras, mode=mode, **options)
    filter_known_warnings()


MEASUREMENTS = BENCHMARKS
"""Copies of the benchmark results the chapters show, shipped with the package
(:data:`watercolour.results.BENCHMARKS`: a reader on Colab has no ``benchmarks/results/``); a
test keeps them equal to the checkout's."""

MEASURED = ("gate-calibration.json", "gate-breakage.json", "reward-robustness.json",
            "train-gpu-20261204-170050.json", "train-bench-*.json")
"""The benchmark results the chapters read (a glob: the latest by name)."""


def measurement(pattern: str) -> dict[str, Any] | None:
    """A benchmark's result the chapters show: the newest ``benchmarks/results/<pattern>`` of
    the checkout the chapter runs in, else the copy shipped in the package; ``None`` when
    neither exists."""
    root = project_root()
    folders = ([root / "benchmarks" / "results"] if root is not None else []) + [MEASUREMENTS]
    for folder in folders:
        found = sorted(folder.glob(pattern))
        if found:
            return json.loads(found[-1].read_text(encoding="utf-8"))
    return None
