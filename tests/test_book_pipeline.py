"""The book as a pipeline: chapters executed once by papermill, artifacts handed on, the HTML
built from the executed notebooks with no second execution, and the built pages opened in real
headless Chromium (figures, widgets, no error outputs, no JavaScript errors)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from notebook_support import MYST_HEADER

from watercolour.book import pipeline
from watercolour.book.pages import read_page
from watercolour.book.sphinx_assets import unique_scripts

ROOT = Path(__file__).resolve().parents[1]
HEADER = MYST_HEADER

# A chapter that counts its executions and writes an artifact for the next one; it says
# where, shows a progress bar and meets a library warning that the install cell filters.
MAKER = HEADER + textwrap.dedent("""\
    # Making

    ```{code-cell} ipython3
    :tags: [parameters]

    size = 3
    out_dir = "runs/book/making"
    ```

    ```{code-cell} ipython3
    from watercolour.reader.quiet import filter_known_warnings

    filter_known_warnings()  # what a chapter's install cell does
    ```

    ```{code-cell} ipython3
    import warnings

    from tqdm.auto import tqdm

    from watercolour.notebooks import resolve_output_dir, shown_path

    out = resolve_output_dir(out_dir)
    with open(out / "executions.txt", "a") as handle:
        handle.write("1\\n")
    for _ in tqdm(range(size), desc="Writing model shards"):
        warnings.warn("'pin_memory' argument is set as true but no accelerator "
                      "is found, then device pinned memory won't be used.")
    (out / "artifact.json").write_text('{"size": %d}' % size)
    print("made", size, "in", shown_path(out))
    ```
    """)

# A chapter that reads the artifact (handed on by the pipeline) and shows a widget.
USER = HEADER + textwrap.dedent("""\
    # Using

    ```{code-cell} ipython3
    :tags: [parameters]

    artifact = ""
    out_dir = "runs/book/using"
    ```

    ```{code-cell} ipython3
    import json
    from pathlib import Path

    import ipywidgets

    from watercolour.notebooks import resolve_output_dir, resolve_path

    size = json.loads(resolve_path(artifact).read_text())["size"]
    out = resolve_output_dir(out_dir)
    (out / "used.json").write_text(json.dumps({"size": size, "artifact": artifact}))
    ipywidgets.IntSlider(value=size, description="size")
    ```
    """)

INDEX = ("# A small book\n\n- [Making](../notebooks/00_making.md)\n"
         "- [Analysis](../notebooks/08_analysis_of_a_run.md)\n")
LINKS = {"00_using": {"artifact": ("00_making/artifact.json",)}}


def _small_book(tmp_path: Path, maker: str = MAKER) -> Path:
    """A book with the real analysis chapter and two small ones (the real front matter's
    configuration and widget scripts)."""
    book = tmp_path / "src"
    (book / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copytree(ROOT / "book", book / "book")
    (book / "book" / "index.md").write_text(INDEX)
    (book / "notebooks" / "00_making.md").write_text(maker)
    (book / "notebooks" / "00_using.md").write_text(USER)
    shutil.copy(ROOT / "notebooks" / "08_analysis_of_a_run.md", book / "notebooks")
    (book / "_toc.yml").write_text(textwrap.dedent("""\
        format: jb-book
        root: book/index
        parts:
          - caption: Small
            chapters:
              - file: notebooks/00_making
              - file: notebooks/00_using
          - caption: Analysis
            chapters:
              - file: notebooks/08_analysis_of_a_run
        """))
    return book


# ---------------------------------------------------------------- no browser


def test_each_script_is_listed_once():
    from sphinx.builders.html._assets import _JavaScript

    body = 'const THEBE_JS_URL = "x"'
    # what Sphinx 7.4 lists for a script added after the builder started: None, then ''
    scripts = [_JavaScript("doctools.js"), _JavaScript(None, body=body),
               _JavaScript("a.js", priority=500), _JavaScript("", body=body),
               _JavaScript("a.js", priority=500), _JavaScript("b.js", **{"async": "async"})]
    kept = unique_scripts(scripts)
    assert [s.filename for s in kept] == ["doctools.js", None, "a.js", "b.js"]


def test_a_run_in_the_book_is_handed_paths_relative_to_the_book(tmp_path):
    book = _small_book(tmp_path)
    chapter = book / "notebooks" / "00_using.md"
    run = book / "runs" / "book"
    (run / "results" / "00_making").mkdir(parents=True)
    (run / "results" / "00_making" / "artifact.json").write_text("{}")
    assert pipeline.chapter_parameters(chapter, run, "tiny", links=LINKS) == {
        "out_dir": "runs/book/results/00_using",
        "artifact": "runs/book/results/00_making/artifact.json"}
    # outside the book: absolute, as before
    outside = pipeline.chapter_parameters(chapter, tmp_path / "run", "tiny", links=LINKS)
    assert outside == {"out_dir": str(tmp_path / "run" / "results" / "00_using")}


def test_pipeline_parameters_and_refusals(tmp_path):
    book = _small_book(tmp_path)
    chapter = book / "notebooks" / "00_using.md"
    run = tmp_path / "run"
    # no artifact yet: the default stays; out_dir always goes under RUN/results
    assert pipeline.chapter_parameters(chapter, run, "tiny", links=LINKS) == {
        "out_dir": str(run / "results" / "00_using")}
    (run / "results" / "00_making").mkdir(parents=True)
    (run / "results" / "00_making" / "artifact.json").write_text("{}")
    params = pipeline.chapter_parameters(chapter, run, "tiny", {"out_dir": "x"}, LINKS)
    assert params == {"out_dir": "x", "artifact": str(run / "results/00_making/artifact.json")}
    with pytest.raises(ValueError, match="no chapter"):
        pipeline.run_chapters(book, run, only=["99_missing"])
    with pytest.raises(ValueError, match="no parameter"):
        pipeline.run_chapters(book, run, overrides={"00_making": {"sizee": 1}})
    with pytest.raises(ValueError, match="no chapter declares"):
        pipeline.run_chapters(book, run, common={"nothing": 1})
    with pytest.raises(ValueError, match="mode"):
        pipeline.run_chapters(book, run, mode="huge")


def test_a_failing_chapter_stops_the_pipeline_and_is_recorded(tmp_path):
    failing = MAKER.replace('print("made", size, "in", shown_path(out))', "1 / 0")
    assert failing != MAKER
    book = _small_book(tmp_path, failing)
    lines: list[str] = []
    with pytest.raises(pipeline.notebooks.NotebookError, match="ZeroDivisionError"):
        pipeline.run_chapters(book, tmp_path / "run", progress=lines.append, links=LINKS,
                              timeout=120)
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["ok"] is False and len(manifest["chapters"]) == 1
    assert "ZeroDivisionError" in manifest["chapters"][0]["error"]
    assert lines[-1].startswith("[1/3] 00_making: FAILED after")


def test_the_links_name_what_an_earlier_chapter_writes():
    # every artifact the pipeline hands on is one the smoke run publishes
    # (smoke.publish_live_run, tested in test_book_chapter_helpers_b), a chapter that comes
    # earlier in reading order than the one it is handed to
    from watercolour import notebooks
    from watercolour.book.chapters import smoke

    order = [c.path.stem for c in notebooks.list_chapters(ROOT) if c.path.suffix == ".md"]
    assert "smoke.publish_live_run(" in (ROOT / "notebooks" / "06_smoke_run.md").read_text()
    for consumer, parameters in pipeline.LINKS.items():
        declared = notebooks.notebook_parameters(ROOT / "notebooks" / f"{consumer}.md")
        for name, candidates in parameters.items():
            assert name in declared, (consumer, name)
            for candidate in candidates:
                key, artifact = candidate.split("/", 1)
                assert pipeline.RESULT_KEYS["06_smoke_run"] == key, candidate
                assert artifact in smoke.PUBLISHED, candidate
                assert order.index("06_smoke_run") < order.index(consumer), candidate


def test_the_book_is_built_one_way(tmp_path):
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off", "only the pipeline executes"
    book = _small_book(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "watercolour", "book", "build", "--root",
                           str(book), "--run", str(tmp_path / "no-run")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "no pipeline run" in proc.stderr and "watercolour book run" in proc.stderr


# ---------------------------------------------------------------- the pipeline and the book


@pytest.mark.slow
@pytest.mark.browser
def test_the_pipeline_executes_once_and_the_book_is_built_from_it(tmp_path):
    from watercolour.book.pages import check_pages

    book = _small_book(tmp_path)
    run = book / "runs" / "book"  # where `watercolour book run` puts it: paths relative
    lines: list[str] = []
    runs = pipeline.run_chapters(book, run, overrides={"00_making": {"size": 7},
                                                       "08_analysis_of_a_run": {"window": 5}},
                                 links=LINKS, progress=lines.append, timeout=300)
    assert [r.chapter for r in runs] == ["notebooks/00_making.md", "notebooks/00_using.md",
                                         "notebooks/08_analysis_of_a_run.md"]
    done = [line for line in lines if ": ok in " in line]
    assert [re.match(r"\[(\d)/3\] (\S+): ok in [\d.]+ s", line).groups() for line in done] == [
        ("1", "00_making"), ("2", "00_using"), ("3", "08_analysis_of_a_run")]
    results = run / "results"
    # the artifact was handed on, and the chapters wrote their results
    assert json.loads((results / "00_using" / "used.json").read_text()) == {
        "size": 7, "artifact": "runs/book/results/00_making/artifact.json"}
    analysis = json.loads((results / "analysis" / "analysis.json").read_text())
    assert analysis["parameters"]["window"] == 5
    led = analysis["runs"]["hps-led"]
    assert round(led["thirds"]["reward"]["first"], 2) == 0.57
    assert round(led["thirds"]["reward"]["last"], 2) == 0.82
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["ok"] and all(c["seconds"] > 0 for c in manifest["chapters"])
    assert not list((book / "notebooks").glob("*.ipynb")), "no .ipynb beside the sources"

    html = pipeline.build_html(book, run, out=tmp_path / "site" / "_build")
    assert html == tmp_path / "site" / "_build" / "html"
    # built from the executed notebooks: nothing ran a second time
    assert (results / "00_making" / "executions.txt").read_text() == "1\n"
    page = (html / "notebooks" / "00_making.html").read_text()
    assert "made 7 in runs/book/results/00_making" in page
    # the page: the bar as one line, no warning; the executed notebook keeps its bar
    assert "Writing model shards: 100% 7/7" in page
    assert read_page(page).offences() == []  # no machine path, warning or long line
    assert "_static/outputs.css" in page  # a long output line wraps at the column
    executed = (run / "executed" / "00_making.ipynb").read_text()
    assert "application/vnd.jupyter.widget-view+json" in executed
    index = (html / "book" / "index.html").read_text()
    assert 'href="../notebooks/08_analysis_of_a_run.html"' in index
    using = (html / "notebooks" / "00_using.html").read_text()
    assert "application/vnd.jupyter.widget-state+json" in using
    for name in ("book/index.html", "notebooks/00_using.html"):
        assert (html / name).read_text().count("const THEBE_JS_URL") == 1

    reports = {r.page: r for r in check_pages(html)}
    assert set(reports) >= {"book/index.html", "notebooks/00_making.html",
                            "notebooks/00_using.html", "notebooks/08_analysis_of_a_run.html"}
    for report in reports.values():
        assert report.ok, report
    assert reports["notebooks/08_analysis_of_a_run.html"].figures >= 7
    assert reports["notebooks/00_using.html"].widgets >= 1


@pytest.mark.browser
def test_the_page_check_sees_javascript_errors_and_broken_images(tmp_path):
    from watercolour.book.pages import check_pages

    (tmp_path / "index.html").write_text(
        "<main><script>const X = 1</script><script>const X = 2</script>"
        '<img src="missing.png"><div class="cell_output"><div class="output traceback">'
        "Traceback</div></div></main>")
    (report,) = check_pages(tmp_path, ["index.html"])
    assert any("already been declared" in e for e in report.js_errors), report
    assert report.broken_images == ["missing.png"]
    assert report.error_outputs == 1 and not report.ok


def test_cli_runs_the_pipeline(tmp_path):
    book = _small_book(tmp_path)
    (book / "notebooks" / "00_using.md").unlink()
    toc = (book / "_toc.yml").read_text().replace("      - file: notebooks/00_using\n", "")
    (book / "_toc.yml").write_text(toc)
    proc = subprocess.run(
        [sys.executable, "-m", "watercolour", "book", "run", "--root", str(book), "--out",
         str(tmp_path / "run"), "--only", "00_making", "-p", "00_making.size=4", "--no-build",
         "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [c["chapter"] for c in out["chapters"]] == ["notebooks/00_making.md"]
    assert out["chapters"][0]["parameters"]["size"] == 4 and out["html"] is None
    assert re.search(r"\[1/1\] 00_making: ok in [\d.]+ s", proc.stderr)
    # `book build` builds the HTML from that run (executing nothing)
    built = subprocess.run(
        [sys.executable, "-m", "watercolour", "book", "build", "--root", str(book), "--run",
         str(tmp_path / "run"), "--html", str(tmp_path / "site" / "_build"), "--json"],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    html = Path(json.loads(built.stdout)["html"])
    assert "made 4" in (html / "notebooks" / "00_making.html").read_text()
    assert (tmp_path / "run" / "results" / "00_making" / "executions.txt").read_text() == "1\n"
    bad = subprocess.run([sys.executable, "-m", "watercolour", "book", "run", "--root",
                          str(book), "--out", str(tmp_path / "run"), "--only", "nope"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no chapter(s) nope" in bad.stderr


def test_the_analysis_chapter_reads_a_run_of_its_own(tmp_path):
    from watercolour import notebooks

    curve = tmp_path / "curve.csv"
    curve.write_text("step,reward,paint_fraction_mean\n" + "".join(
        f"{s},{0.1 + 0.05 * s},{0.1 + 0.01 * s}\n" for s in range(9)))
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text("".join(
        json.dumps({"step": s, "index": i, "reward": 0.1 if i < 3 - s // 3 else 0.6,
                    "status": "ok", "n_shapes": i, "references": [f"love-{s % 3}"]}) + "\n"
        for s in range(9) for i in range(4)))
    chapter = ROOT / "notebooks" / "08_analysis_of_a_run.md"
    assert {"mode", "curve", "rollouts", "out_dir"} <= set(notebooks.notebook_parameters(chapter))
    notebooks.run_notebook(chapter, tmp_path / "executed",
                           {"curve": str(curve), "rollouts": str(rollouts), "compare": "",
                            "mode": "tiny", "out_dir": str(tmp_path / "out")}, timeout=300)
    summary = json.loads((tmp_path / "out" / "analysis.json").read_text())
    assert list(summary["runs"]) == ["this run"]
    run = summary["runs"]["this run"]
    assert run["thirds"]["reward"]["first"] == pytest.approx(0.15)
    # 3, 2, 1 bad paintings a step in the three thirds
    assert {t: v["count"] for t, v in run["rollouts"]["bad"].items()} == {
        "first": 9, "middle": 6, "last": 3}
    executed = json.loads((tmp_path / "executed" / "08_analysis_of_a_run.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in executed["cells"]
                   for o in c.get("outputs", []))
    assert "below 0.3 by third: 9 (75%) -> 6 (50%) -> 3 (25%)" in text
    gallery = Path(summary["parameters"]["gallery"])
    assert gallery.read_text().count("<tr class=") == 36
    assert "application/vnd.jupyter.widget-view+json" in json.dumps(executed)


# ---------------------------------------------------------------- what a reader installs


from watercolour import notebooks  # noqa: E402
from watercolour.book import colab  # noqa: E402

CHAPTERS = [c.path for c in notebooks.list_chapters(ROOT) if pipeline.is_notebook_page(c.path)]

# what a chapter's imports (and the commands it starts) need beyond the package's own deps
NEEDS = {
    r"^\s*(import|from) (matplotlib|ipywidgets|IPython)\b": "book",
    r"^\s*from watercolour\.train\b|\"watercolour\", \"train\"": "train",
    r"^\s*from watercolour\.env\b|\"watercolour\", \"serve\"": "env",
}


def _install_call(source: str) -> tuple[list[str], dict]:
    found = re.search(r"^install\(package, (.*?)\)$", source, re.M)
    assert found, "the install cell calls watercolour.notebooks.install(package, EXTRAS...)"
    args = [a.strip() for a in found.group(1).split(",")]
    extras = [a.strip('"') for a in args if a.startswith('"')]
    options = dict(a.split("=", 1) for a in args if "=" in a)
    return extras, options


def _helper_modules(code: str) -> list[Path]:
    """The modules of ``watercolour.book.chapters`` a chapter's code imports: what they import
    and start, the chapter needs installed."""
    folder = ROOT / "src" / "watercolour" / "book" / "chapters"
    names = re.findall(r"^\s*from watercolour\.book\.chapters import (\w+)", code, re.M)
    names += re.findall(r"^\s*from watercolour\.book\.chapters\.(\w+) import", code, re.M)
    return [folder / f"{name}.py" for name in names]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_install_cell_installs_what_its_chapter_imports(chapter):
    nb = notebooks.read_notebook(chapter)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    at = next(i for i, c in enumerate(code) if "from watercolour.notebooks import install" in c)
    assert at == 1, "the install cell is the first after the parameters"
    cell = code[at]
    assert len(cell.splitlines()) <= 8, "the install cell stays short: the logic is a helper"
    extras, options = _install_call(cell)
    assert options.get("mode") == "mode"
    rest = "\n".join(code[at + 1:])
    rest += "\n".join(module.read_text() for module in _helper_modules(rest))
    needed = {extra for pattern, extra in NEEDS.items() if re.search(pattern, rest, re.M)}
    assert needed <= set(extras), f"imports need {sorted(needed)}, the cell installs {extras}"
    assert set(extras) - needed <= set(), f"the cell installs more than it imports: {extras}"
    renders = re.search(r"\bRenderer\b|\bbuild_pool\b|\"watercolour\", \"train\"|\btrain\(", rest)
    assert (options.get("browser") != "False") == bool(renders), "a browser where it renders"
    # no file of the repository that a Colab reader lacks
    for code_cell in code:
        assert "benchmarks/results" not in code_cell and '"benchmarks"' not in code_cell, chapter
        assert "project_root()" not in code_cell, chapter
    assert "tests/" not in chapter.read_text()


def test_the_install_helper_adds_the_extras_to_the_source(tmp_path):
    from watercolour.reader.install import install, requirement

    wheel = tmp_path / "watercolour-0.1.0-py3-none-any.whl"
    assert requirement("git+https://github.com/o/w", ["book", "env"]) == \
        "watercolour[book,env] @ git+https://github.com/o/w"
    assert requirement(str(wheel), ["book"]) == f"watercolour[book] @ {wheel.as_uri()}"
    assert requirement("watercolour==0.1.0", ["book", "train"]) == "watercolour[book,train]==0.1.0"
    assert requirement("watercolour @ https://x.org/w.whl", ["env"]) == \
        "watercolour[env] @ https://x.org/w.whl"
    with pytest.raises(ValueError, match="names extras"):
        requirement("watercolour[book] @ git+https://github.com/o/w", ["book"])
    with pytest.raises(ValueError, match="not one of"):
        install("", "book", mode="huge", dry_run=True)
    with pytest.raises(ValueError, match="unknown extra"):
        install("", "gpu", dry_run=True)
    # with `package` empty, the source the package was installed from (here the checkout)
    from watercolour.reader.install import _installed_source

    assert _installed_source() == ROOT.as_uri()
    # here everything is installed: nothing to do, and the browser is this machine's
    record = install("", "book", "env", "train", mode="tiny", dry_run=True, quiet=True)
    assert record.requirement is None and record.missing == []
    assert record.browser and record.browser_commands is None


# ---------------------------------------------------------------- badges and published notebooks


def _published_branch_and_folder() -> tuple[str, str]:
    """The branch and folder the book workflow publishes the notebooks to."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github/workflows/book.yml").read_text())
    env = workflow["env"]
    return env["NOTEBOOKS_BRANCH"], env["NOTEBOOKS_DIR"]


def test_every_badge_names_a_notebook_the_workflow_publishes(tmp_path):
    import nbformat

    branch, folder = _published_branch_and_folder()
    workflow = (ROOT / ".github/workflows/book.yml").read_text()
    assert "watercolour book export --out" in workflow
    repository = colab.repository_url(ROOT)
    owner_name = repository.removeprefix("https://github.com/")
    written = colab.export_notebooks(ROOT, tmp_path / "site")  # what the workflow runs
    assert {p.stem for p in written} == {c.stem for c in CHAPTERS}
    for chapter in CHAPTERS:
        url = colab.colab_url(repository, chapter.relative_to(ROOT).as_posix())
        prefix = f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/"
        assert url.startswith(prefix), url
        path = url.removeprefix(prefix)
        assert path.startswith(f"{folder}/")
        published = tmp_path / "site" / path
        assert published.is_file(), f"{url} names {path}, which the workflow does not publish"
        nb = nbformat.read(str(published), as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        badge = next(c.source for c in nb.cells if c.cell_type == "markdown")
        assert f"]({url})" in badge and colab.BADGE_IMAGE in badge
        params = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        assert f'package = "git+{repository}"' in params  # Run all installs from the repository
        assert ".md)" not in "".join(c.source for c in nb.cells if c.cell_type == "markdown")


# ---------------------------------------------------------------- the book's curves as PNGs


def test_analyse_writes_the_curves_the_book_shows_as_pngs(tmp_path, capsys):
    from PIL import Image

    from watercolour.cli import main

    assert main(["analyse", "hps-led", "--plots", str(tmp_path / "published"), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    names = {"reward.png", "components.png", "coverage.png", "step-time.png"}
    assert {p.name for p in (tmp_path / "published").iterdir()} == names
    assert any(n.startswith("plots: ") for n in notes)
    for name in names:
        with Image.open(tmp_path / "published" / name) as image:
            assert image.width >= 800 and image.height >= 300
    # a curve with only some columns: only the plots it has data for
    curve = tmp_path / "curve.csv"
    curve.write_text("step,reward,judge_mean\n" + "".join(
        f"{i},{0.1 * i:.2f},{0.05 * i:.2f}\n" for i in range(6)))
    assert main(["analyse", str(curve), "--plots", str(tmp_path / "small"), "--window", "2"]) == 0
    assert {p.name for p in (tmp_path / "small").iterdir()} == {"reward.png", "components.png"}
