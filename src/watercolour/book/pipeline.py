"""The book as a pipeline: execute every chapter once with papermill, then build the HTML from
those executed notebooks (no second execution).

:func:`run_chapters` reads ``_toc.yml``, runs each chapter (a MyST text notebook) from its text
form into ``RUN/executed/<chapter>.ipynb`` and its results into ``RUN/results/<key>/``, in
reading order, handing each chapter the artifacts of the ones before it (:data:`LINKS`: the
smoke run's curve and rollouts become the analysis chapter's ``curve`` and ``rollouts``;
:data:`POOL_CHAPTERS`: the pool chapter's rated pool, or its starter pool, becomes the reward
and training chapters' ``pool``).
:func:`build_html` lays the executed notebooks beside the front matter in ``RUN/book/`` and
runs ``jupyter-book build`` there with execution off. ``RUN/run.json`` records every chapter's
parameters, time and outcome. This is the one way the book is built: ``_config.yml`` executes
nothing, so ``jupyter-book build`` on the sources alone shows no outputs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from watercolour import notebooks
from watercolour.book import colab, tidy
from watercolour.book.notebook_pages import is_notebook_page, relink
from watercolour.errors import InputError, SetupError
from watercolour.io import write_json_atomic, write_text_atomic

MODES = ("tiny", "smoke-4b", "full")
"""The scales a chapter's ``mode`` parameter may take; ``tiny`` runs on a CPU."""

RESULT_KEYS = {
    "01_the_medium": "medium",
    "03_environment_and_gates": "gates",
    "04_building_the_pool": "pool",
    "05_reward_components": "rewards",
    "06_smoke_run": "smoke",
    "07_full_run": "train",
    "08_analysis_of_a_run": "analysis",
    "09_rollouts": "rollouts",
}
"""Chapter -> the folder under ``RUN/results/`` it writes to (its ``out_dir``); a chapter not
listed writes to a folder named after it."""

LINKS: dict[str, dict[str, tuple[str, ...]]] = {
    "08_analysis_of_a_run": {"curve": ("smoke/curve.csv",), "rollouts": ("smoke/rollouts",)},
    "09_rollouts": {"rollouts": ("smoke/rollouts",)},
}
"""Chapter -> parameter -> candidate artifacts (relative to ``RUN/results/``) from earlier
chapters: the first that exists when the chapter starts is passed; none: its default stays.
Only the smoke run trains, so only it writes a curve and rollouts (``curve.csv``,
``rollouts/``); the full-run chapter replays published curves and writes ``full_run.json``.
``tests/test_book_pipeline.py`` checks that each artifact's chapter comes earlier and writes
it."""

POOL_CHAPTERS = ("05_reward_components", "06_smoke_run")
"""Chapters whose ``pool`` the pipeline chooses (:func:`watercolour.pool.choice.choose_pool`):
the pool chapter's rated pool (:data:`RATED_POOL`) when the judge can draw the chapter's
``references`` from it, else its starter pool (:data:`STARTER_POOL`); the reason goes to the
chapter's ``pool_note``. A ``pool`` given by the caller wins."""

RATED_POOL = "pool/rated"
"""Under ``RUN/results/``: the pool the pool chapter writes from a person's ratings."""

STARTER_POOL = "pool/build"
"""Under ``RUN/results/``: the pool chapter's build, tiered by the synthetic rule."""

PUBLISHED = {"rollouts/gallery": "rollouts"}
"""Folders of chapter results (relative to ``RUN/results/``) copied into the built HTML
(relative to its root): the static rollout gallery opens at ``html/rollouts/index.html``."""

BUILD_FOLDER = "book"
"""Under the run folder: the book source the HTML is built from (executed notebooks)."""


@dataclass
class ChapterRun:
    """One chapter's execution in the pipeline."""

    chapter: str
    """Its source, relative to the book root."""
    executed: str | None
    """The executed notebook (``None`` for a prose page, copied as it is)."""
    parameters: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    ok: bool = True
    error: str | None = None


def chapter_parameters(chapter: Path, run_dir: Path, mode: str,
                       overrides: Mapping[str, Any] | None = None,
                       links: Mapping[str, Mapping[str, tuple[str, ...]]] = LINKS,
                       common: Mapping[str, Any] | None = None,
                       package: str | None = None,
                       pool_chapters: tuple[str, ...] = POOL_CHAPTERS) -> dict[str, Any]:
    """The parameters the pipeline passes a chapter: its ``out_dir`` under ``RUN/results/``,
    the ``mode``, ``package`` (where its install cell installs from, when given), the artifacts
    of earlier chapters (``links``) that exist, then ``common`` (for every chapter) and
    ``overrides`` (for this one), and for ``pool_chapters`` the pool chosen for them (see
    :data:`POOL_CHAPTERS`). Only parameters the chapter declares are passed. The paths are
    relative to the book root when the run lies in it (``runs/book/results/...``: a chapter
    resolves them from there, :func:`watercolour.notebooks.resolve_path`), so the page shows
    the reader's paths; else absolute."""
    declared = notebooks.notebook_parameters(chapter)
    root = notebooks.project_root(chapter.parent) or chapter.parent
    results = Path(run_dir).resolve() / "results"
    params: dict[str, Any] = {}
    if "out_dir" in declared:
        params["out_dir"] = book_path(results / RESULT_KEYS.get(chapter.stem, chapter.stem),
                                      root)
    if "mode" in declared:
        params["mode"] = mode
    if "package" in declared and package:
        params["package"] = package
    for name, candidates in links.get(chapter.stem, {}).items():
        found = next((results / c for c in candidates if (results / c).exists()), None)
        if name in declared and found is not None:
            params[name] = book_path(found, root)
    params.update({k: v for k, v in (common or {}).items() if k in declared})
    params.update({k: v for k, v in (overrides or {}).items() if k in declared})
    if chapter.stem in pool_chapters and "pool" in declared and "pool" not in params:
        params.update(_chosen_pool(results, declared, params, root))
    return params


def book_path(path: Path, root: Path) -> str:
    """``path`` as a chapter's parameter: relative to the book ``root`` when it lies in it,
    else absolute."""
    path = Path(path).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _chosen_pool(results: Path, declared: Mapping[str, str],
                 params: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """``pool`` (and ``pool_note``, where declared) from :func:`choose_pool`; nothing when
    neither pool exists (the chapter's default stays). Paths in the note are relative to the
    book ``root``, as the ``pool`` is."""
    from watercolour.pool.choice import choose_pool
    from watercolour.rewards.config import RewardConfig

    try:
        references = int(params.get("references", declared.get("references")))
    except (TypeError, ValueError):
        references = RewardConfig.from_env().references
    choice = choose_pool(results / RATED_POOL, results / STARTER_POOL, references)
    if not choice.path.exists():
        return {}
    chosen: dict[str, Any] = {"pool": book_path(choice.path, root)}
    if "pool_note" in declared:
        chosen["pool_note"] = str(choice).replace(f"{root.resolve()}{os.sep}", "")
    return chosen


def run_chapters(
    root: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    mode: str = "tiny",
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    only: list[str] | None = None,
    kernel: str = "python3",
    timeout: float | None = 1800,
    links: Mapping[str, Mapping[str, tuple[str, ...]]] = LINKS,
    common: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ChapterRun]:
    """Execute the book's chapters in reading order into ``run_dir``.

    Args:
        root: the book root (``_config.yml`` + ``_toc.yml``).
        run_dir: the run folder (``executed/``, ``results/``, ``run.json``).
        mode: passed to every chapter that declares ``mode`` (one of :data:`MODES`).
        overrides: chapter stem -> parameters (e.g. ``{"01_the_medium": {"n_examples": 2}}``);
            a parameter the chapter does not declare is an error.
        only: chapter stems to run (default: all); the rest are skipped, not copied.
        common: parameters for every chapter that declares them (e.g. ``{"seed": 1}``); one
            that no chapter declares is an error.
        progress: called with one line per chapter (default: print to stderr).

    Raises ``NotebookError`` when a chapter fails (``run.json`` says which, and its partial
    notebook is kept); ``ValueError`` for an unknown mode, chapter or parameter.
    """
    if mode not in MODES:
        raise InputError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    base = Path(root).resolve()
    run = Path(run_dir).resolve()
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    chapters = [c.path for c in notebooks.list_chapters(base) if is_notebook_page(c.path)]
    overrides = dict(overrides or {})
    known = {c.stem for c in chapters}
    unknown = sorted((set(overrides) | set(only or [])) - known)
    if unknown:
        raise InputError(f"no chapter(s) {', '.join(unknown)}; the book has: "
                         f"{', '.join(sorted(known))}")
    for stem, params in overrides.items():
        path = next(c for c in chapters if c.stem == stem)
        extra = sorted(set(params) - set(notebooks.notebook_parameters(path)))
        if extra:
            raise InputError(f"{stem} has no parameter(s) {', '.join(extra)}")
    selected = [c for c in chapters if only is None or c.stem in only]
    declared_anywhere = set().union(*(notebooks.notebook_parameters(c) for c in selected))
    unused = sorted(set(common or {}) - declared_anywhere)
    if unused:
        raise InputError(f"no chapter declares parameter(s) {', '.join(unused)}")
    repository = colab.repository_url(base)
    package = colab.package_source(repository) if repository else None
    runs: list[ChapterRun] = []
    manifest = run / "run.json"
    for number, chapter in enumerate(selected, 1):
        params = chapter_parameters(chapter, run, mode, overrides.get(chapter.stem), links,
                                    common, package)
        record = ChapterRun(chapter=chapter.relative_to(base).as_posix(), executed=None,
                            parameters=params)
        runs.append(record)
        say(f"[{number}/{len(selected)}] {chapter.stem}: running")
        if params.get("pool_note"):
            say(f"[{number}/{len(selected)}] {chapter.stem}: {params['pool_note']}")
        t0 = time.perf_counter()
        try:
            executed = notebooks.run_notebook(chapter, run / "executed", params, kernel=kernel,
                                              timeout=timeout)
        except notebooks.NotebookError as err:
            record.seconds, record.ok, record.error = round(time.perf_counter() - t0, 2), False, \
                str(err)
            _write_manifest(manifest, base, mode, runs)
            say(f"[{number}/{len(selected)}] {chapter.stem}: FAILED after {record.seconds:.1f} s")
            raise
        record.seconds = round(time.perf_counter() - t0, 2)
        record.executed = str(executed)
        _write_manifest(manifest, base, mode, runs)
        say(f"[{number}/{len(selected)}] {chapter.stem}: ok in {record.seconds:.1f} s")
    return runs


def build_html(root: str | os.PathLike[str], run_dir: str | os.PathLike[str],
               out: str | os.PathLike[str] | None = None, all_pages: bool = True) -> Path:
    """Build the HTML from the run's executed notebooks, executing nothing; the one way the
    book is built (``_config.yml`` executes nothing either). ``SetupError`` without a run.

    Lays out ``RUN/book/``: the book's ``_config.yml`` (execution off), ``_toc.yml``, its prose
    pages and front matter, and each executed chapter as ``notebooks/<stem>.ipynb`` (links to
    ``<stem>.md`` follow it, its Colab badge points at it on Colab, its injected parameters
    are folded and wrapped to the column and its progress bars are one line each:
    :mod:`watercolour.book.tidy`); a chapter the run did
    not execute is left out of the table of contents; the :data:`PUBLISHED` result folders are
    copied into the HTML. Runs ``jupyter-book build`` there into ``out`` (default
    ``RUN/_build``; the HTML lands in ``<out>/html``) and returns the HTML folder."""
    import yaml

    base = Path(root).resolve()
    run = Path(run_dir).resolve()
    if not (run / "run.json").is_file():
        raise SetupError(f"no pipeline run in {run} (no run.json): the book is built from the "
                         "chapters the pipeline executed; run `watercolour book run` first")
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    executed = {Path(c["chapter"]): Path(c["executed"]) for c in manifest["chapters"]
                if c["ok"] and c["executed"]}
    source = run / BUILD_FOLDER
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    chapters = notebooks.list_chapters(base)
    # the folders (and top-level files) of the book's pages, sources and front matter
    for top in sorted({c.path.relative_to(base).parts[0] for c in chapters}):
        if (base / top).is_dir():
            shutil.copytree(base / top, source / top,
                            ignore=shutil.ignore_patterns("*.ipynb", ".*"))
        else:
            shutil.copy2(base / top, source / top)
    stems = {p.stem for p in executed}
    repository = colab.repository_url(base)
    for page in source.rglob("*.md"):
        page.write_text(relink(page.read_text(encoding="utf-8"), stems), encoding="utf-8")
    dropped = set()
    for chapter in chapters:
        rel = chapter.path.relative_to(base)
        if rel in executed:  # the executed notebook replaces its text form
            (source / rel).unlink(missing_ok=True)
            nb = json.loads(executed[rel].read_text(encoding="utf-8"))
            _fold_injected_parameters(nb)
            tidy.wrap_parameters(nb)
            tidy.tidy_progress(nb)  # the executed notebook keeps its bars
            _relink_cells(nb, stems)
            if repository:
                _point_badges(nb, colab.colab_url(repository, rel.as_posix()))
            write_text_atomic(source / rel.with_suffix(".ipynb"), json.dumps(nb, indent=1))
        elif is_notebook_page(chapter.path):
            dropped.add(rel.with_suffix("").as_posix())
    config = yaml.safe_load((base / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    extra = source / "_extra"
    for results_folder, html_folder in PUBLISHED.items():
        if (run / "results" / results_folder).is_dir():
            shutil.copytree(run / "results" / results_folder, extra / html_folder)
    if extra.is_dir():
        sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
        sphinx_config["html_extra_path"] = [*sphinx_config.get("html_extra_path", []), "_extra"]
    write_text_atomic(source / "_config.yml", yaml.safe_dump(config, sort_keys=False))
    toc = yaml.safe_load((base / "_toc.yml").read_text(encoding="utf-8"))
    write_text_atomic(source / "_toc.yml", yaml.safe_dump(_drop_from_toc(toc, dropped),
                                                          sort_keys=False))
    out_dir = Path(out).resolve() if out is not None else run / "_build"
    path_output = out_dir.parent if out_dir.name == "_build" else out_dir
    cmd = [_jupyter_book(), "build", str(source), "--path-output", str(path_output)]
    if all_pages:
        cmd.append("--all")
    proc = subprocess.run(cmd, cwd=source, capture_output=True, text=True)
    html = path_output / "_build" / "html"
    if proc.returncode != 0 or not (html / "index.html").is_file():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SetupError(f"jupyter-book build failed (exit {proc.returncode}): "
                           + " | ".join(tail))
    return html


def _write_manifest(path: Path, root: Path, mode: str, runs: list[ChapterRun]) -> None:
    write_json_atomic(path, {"root": str(root), "mode": mode,
                             "ok": all(r.ok for r in runs),
                             "seconds": round(sum(r.seconds for r in runs), 2),
                             "chapters": [asdict(r) for r in runs]})


def _fold_injected_parameters(nb: dict) -> None:
    """papermill's injected-parameters cell: folded in the page (the values stay readable)."""
    for cell in nb.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")


def _relink_cells(nb: dict, stems: set[str]) -> None:
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell["source"]
            text = "".join(source) if isinstance(source, list) else source
            cell["source"] = relink(text, stems)


def _point_badges(nb: dict, url: str) -> None:
    """The chapter's Colab badge (a link to :data:`colab.COLAB`) -> its own notebook on Colab."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell["source"]
            text = "".join(source) if isinstance(source, list) else source
            cell["source"] = colab.point_badge(text, url)


def _drop_from_toc(toc: dict, dropped: set[str]) -> dict:
    def keep(entries: list[dict]) -> list[dict]:
        kept = []
        for entry in entries:
            if entry.get("file", "").removesuffix(".md") in dropped:
                continue
            if "sections" in entry:
                entry = {**entry, "sections": keep(entry["sections"])}
            kept.append(entry)
        return kept

    for part in toc.get("parts", []):
        part["chapters"] = keep(part.get("chapters", []))
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]] if "parts" in toc else None
    if toc["parts"] is None:
        del toc["parts"]
    if "chapters" in toc:
        toc["chapters"] = keep(toc["chapters"])
    return toc


def _jupyter_book() -> str:
    beside = Path(sys.executable).parent / "jupyter-book"
    if beside.is_file():
        return str(beside)
    found = shutil.which("jupyter-book")
    if found is None:
        raise FileNotFoundError("jupyter-book is not installed; install the book extra: "
                                "pip install 'watercolour[book]'")
    return found
