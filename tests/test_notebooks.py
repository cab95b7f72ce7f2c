"""The book: chapters run with papermill and write plausible results; the whole book builds
(the pipeline, the one way) offline (no widget JavaScript from a CDN)."""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from notebook_support import MYST_HEADER

from watercolour import notebooks
from watercolour.notebooks import NotebookError

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = ROOT / "notebooks" / "01_the_medium.md"

FAILING_CHAPTER = MYST_HEADER + textwrap.dedent(
    """\

    # A chapter that fails

    ```{code-cell} ipython3
    :tags: [parameters]

    answer = 41
    ```

    ```{code-cell} ipython3
    if answer != 42:
        raise ValueError(f"wrong answer {answer}")
    ```
    """
)


# ---------------------------------------------------------------- helpers, no browser


def test_parse_parameters_reads_json_and_falls_back_to_strings():
    assert notebooks.parse_parameters(
        ["n=2", "x=0.5", "flag=true", "none=null", "name=runs/a", 'q="7"', "xs=[1,2]"]
    ) == {"n": 2, "x": 0.5, "flag": True, "none": None, "name": "runs/a", "q": "7",
          "xs": [1, 2]}
    with pytest.raises(ValueError, match="name=value"):
        notebooks.parse_parameter("no-equals-sign")
    with pytest.raises(ValueError, match="name=value"):
        notebooks.parse_parameter("not an identifier=3")


def test_list_chapters_follows_the_toc():
    chapters = notebooks.list_chapters(ROOT)
    assert chapters[0].part is None
    assert all(c.path.is_file() for c in chapters)
    parts: dict[str, list[str]] = {}
    for c in chapters[1:]:
        parts.setdefault(c.part, []).append(c.path.relative_to(ROOT).as_posix())
    assert parts["Start here"] == ["book/intro.md"]
    assert "notebooks/01_the_medium.md" in parts["The environment: what a painting is scored by"]
    # a part's caption says something of its own: never its only chapter's title again
    titles = {c.path.relative_to(ROOT).as_posix(): c.path.read_text().split("\n# ", 1)[-1]
              .split("\n", 1)[0].lstrip("# ") for c in chapters}
    for caption, pages in parts.items():
        assert len(pages) > 1 or titles[pages[0]] != caption, caption


def test_list_chapters_names_a_missing_page(tmp_path):
    (tmp_path / "_config.yml").write_text("title: x\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    with pytest.raises(FileNotFoundError, match="'intro'"):
        notebooks.list_chapters(tmp_path)


def test_medium_declares_its_parameters():
    assert set(notebooks.notebook_parameters(MEDIUM)) == {"mode", "n_examples", "seed", "out_dir",
                                                          "package"}


def test_chapters_run_in_this_environment():
    # the kernelspec `python3` must start this interpreter (the venv's ipykernel)
    assert Path(notebooks.kernel_command("python3")[0]).resolve() == Path(sys.executable).resolve()


def test_run_notebook_refuses_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        notebooks.run_notebook(tmp_path / "missing.md", tmp_path / "out")
    with pytest.raises(ValueError, match="n_exampels"):
        notebooks.run_notebook(MEDIUM, tmp_path / "out", {"n_exampels": 2})
    with pytest.raises(ValueError, match="outside the chapter folder"):
        notebooks.run_notebook(MEDIUM, MEDIUM.parent, {"n_examples": 1})


def test_run_notebook_reports_the_failing_cell(tmp_path):
    chapter = tmp_path / "fails.md"
    chapter.write_text(FAILING_CHAPTER)
    with pytest.raises(NotebookError, match=r"fails\.md failed in cell .*ValueError: wrong "
                                            r"answer 41") as caught:
        notebooks.run_notebook(chapter, tmp_path / "out", timeout=60)
    assert caught.value.ename == "ValueError"
    assert caught.value.output is not None and caught.value.output.is_file()
    # and with the right parameter it runs
    out = notebooks.run_notebook(chapter, tmp_path / "out", {"answer": 42}, timeout=60)
    assert out == tmp_path / "out" / "fails.ipynb"
    assert not list(tmp_path.glob("*.ipynb")), "no .ipynb beside the source"


# ---------------------------------------------------------------- the medium, real renders


@pytest.mark.browser
def test_the_medium_runs_and_writes_its_results(tmp_path):
    results = tmp_path / "medium"
    executed = notebooks.run_notebook(
        MEDIUM, tmp_path / "executed",
        {"n_examples": 2, "seed": 0, "out_dir": str(results)}, timeout=300,
    )
    assert executed.is_file()
    summary = json.loads((results / "medium.json").read_text())

    assert summary["parameters"]["n_examples"] == 2
    examples = summary["examples"]
    assert len(examples) == 2
    for example in examples:
        assert example["ok"], example
        assert 0.02 < example["paint_fraction"] < 0.95, example
        assert 0 < example["seconds"] < 120, example
        assert example["n_shapes"] > 0
    assert summary["identical_pixels"] is True
    assert summary["determinism"]["differing_pixels_same_seed"] == 0
    assert summary["determinism"]["differing_pixels_other_seed"] > 1000
    assert summary["backend"]

    # the executed notebook has the figures in it
    nb = json.loads(executed.read_text())
    images = [o for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in
              o.get("data", {})]
    assert len(images) >= 2


# ---------------------------------------------------------------- the whole book


SMALL_PARAMETERS = {
    "01_the_medium": {"n_examples": 2},
    "03_environment_and_gates": {"only": ["ok_setup_only.js", "bare_primitives.js"]},
    # the rehearsal rates the 3 paintings (as the rule did: 1 love, 2 okay), enough for 2
    # references a group (WATERCOLOUR_REFERENCES=2 in the build test): the rated pool is used
    "04_building_the_pool": {"n_paintings": 3, "scripted_ratings": 3},
    # the pool chapter's 3 paintings hold 1 love: draw 1 love + 1 okay reference
    "05_reward_components": {"n_examples": 2, "references": 2, "consistency_pairs": 2},
    "06_smoke_run": {"live_steps": 1, "mix": "hps-only"},
}
"""Per chapter, the parameters the build test shrinks so the build stays short."""


def _small_book(tmp_path: Path) -> Path:
    """A copy of the book (its chapters unchanged; the pipeline passes the small parameters)."""
    book = tmp_path / "book-src"
    book.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, book / name)
    shutil.copytree(ROOT / "book", book / "book")
    shutil.copytree(ROOT / "notebooks", book / "notebooks")
    # no tests/ folder: the gates chapter reads the fixtures shipped in the package
    return book


@pytest.mark.slow
@pytest.mark.browser
def test_the_book_builds_offline(tmp_path, monkeypatch):
    # the one way the book is built: the pipeline executes every chapter, then the HTML
    from watercolour.book import pipeline

    source = _small_book(tmp_path)
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))  # a short warm start
    monkeypatch.setenv("WATERCOLOUR_TINY_SFT_STEPS", "30")
    monkeypatch.setenv("WATERCOLOUR_TINY_SKETCHES", "400")
    monkeypatch.setenv("WATERCOLOUR_REFERENCES", "2")  # what the 3-painting rated pool allows
    run = tmp_path / "run"
    pipeline.run_chapters(source, run, overrides=SMALL_PARAMETERS, timeout=900,
                          progress=lambda line: None)
    html_dir = pipeline.build_html(source, run, out=tmp_path / "out" / "_build")
    page = html_dir / "notebooks" / "01_the_medium.html"
    html = page.read_text(encoding="utf-8")

    assert "The medium" in html and "Ten methods" in html
    assert (html_dir / "book" / "intro.html").is_file()
    # the rendered figures are PNG files of the build
    pngs = re.findall(r'<img[^>]+src="(\.\./_images/[^"]+\.png)"', html)
    assert pngs, "no PNG figure in the chapter"
    assert all((page.parent / p).resolve().is_file() for p in pngs)
    # the results the chapter wrote land in the run's results, not the repository's
    assert (run / "results" / "medium" / "medium.json").is_file()
    # the pool the book rated is the one its smoke run trained the tiny painter against
    rated = run / "results" / pipeline.RATED_POOL
    smoke_record = json.loads((run / "results" / "smoke" / "smoke_run.json").read_text())
    assert smoke_record["pool"]["path"] == str(rated), smoke_record.get("pool")
    assert smoke_record["pool"]["described"].startswith("a rated pool (rated by book-script)")
    live_run = json.loads((run / "results" / "smoke" / "run" / "run.json").read_text())
    assert live_run["config"]["run"]["pool"] == str(rated)
    assert smoke_record["live"]["rollouts"] > 0
    # the smoke run's figures are captioned (glued) and its numbers computed
    smoke = (html_dir / "notebooks" / "06_smoke_run.html").read_text(encoding="utf-8")
    assert "fig-smoke-curves" in smoke and "best first" in smoke

    # widgets: state embedded, JavaScript loaded from the book itself
    assert "application/vnd.jupyter.widget-state+json" in html
    sources = re.findall(r'<script[^>]+src="([^"]+)"', html)
    assert any(s.startswith("../_static/require.js") for s in sources), sources
    assert any(s.startswith("../_static/embed-amd.js") for s in sources), sources
    assert not [s for s in sources if s.startswith(("http:", "https:", "//"))], sources
    assert "cdn.jsdelivr" not in html
    assert "cdnjs.cloudflare" not in html
    assert any(s.startswith("../_static/require-config.js") for s in sources), sources
    for name in ("require.js", "embed-amd.js"):
        assert (html_dir / "_static" / name).stat().st_size > 10_000
    assert not (html_dir / "_static" / "package.json").exists()

    # in a real browser the widget renders and nothing is fetched from outside the book
    _check_page_offline(page)
    # the pool chapter's rating widget renders with its keyboard box (the shortcuts named)
    pool_page = html_dir / "notebooks" / "04_building_the_pool.html"
    _check_page_offline(pool_page, expect="input[placeholder^='click here, then type: ']")


def _check_page_offline(page: Path, expect: str = ".widget-tab") -> None:
    from playwright.sync_api import sync_playwright

    from watercolour.render.browser import find_chromium

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            requests: list[str] = []
            failed: list[str] = []
            tab.on("request", lambda r: requests.append(r.url))
            tab.on("requestfailed", lambda r: failed.append(r.url))
            tab.route("http*://**", lambda route: route.abort())  # no network, as offline
            tab.goto(page.as_uri())
            tab.wait_for_selector(expect, timeout=20_000)
            if expect != ".widget-tab":
                placeholder = tab.get_attribute(expect, "placeholder") or ""
                assert all(f"{key} {name}" in placeholder for key, name in
                           (("1", "love"), ("2", "okay"), ("u", "undo"))), placeholder
            tab.wait_for_timeout(500)
        finally:
            browser.close()
    outside = [u for u in requests if not u.startswith(("file:", "data:", "blob:"))]
    assert not outside, outside
    assert not failed, failed
