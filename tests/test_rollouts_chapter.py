"""The Rollouts chapter and what the book does around it: a rollout's reward term by term, the
chapter executed on a run's rollouts (the trainer's layout) writing its results and gallery,
the Colab badge and install requirement made from the one repository URL, every chapter's
badge / install cell / ``mode`` parameter, and the built page checked in headless Chromium
with the gallery published inside the HTML."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from watercolour import notebooks
from watercolour.analysis import reward_breakdown
from watercolour.book import colab, pipeline

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "09_rollouts.md"


def _png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (shade, 40, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def _breakdown(raw_hps: float | None) -> str:
    weights = {"gate": 0.05, "length": 0.05, "judge": 0.0, "hps": 0.9}
    raws = {"gate": 1.0 if raw_hps is not None else 0.0, "length": 0.5, "judge": None,
            "hps": raw_hps}
    return json.dumps({"components": {
        k: {"raw": raws[k], "weight": w, "contribution": round((raws[k] or 0.0) * w, 4)}
        for k, w in weights.items()}})


def _run(folder: Path, steps: int = 3, group: int = 4) -> Path:
    """A run's rollouts in the trainer's layout: rollouts.jsonl, renders under png/."""
    root = folder / "rollouts"
    lines = []
    for step in range(steps):
        for index in range(group):
            rejected, lost = index == 0, (step, index) == (1, 1)
            png = None
            if not rejected and not lost:
                png = f"png/step-{step:05d}/g00-i{index:02d}.png"
                (root / png).parent.mkdir(parents=True, exist_ok=True)
                (root / png).write_bytes(_png(20 * step + 5 * index))
            hps = 0.1 * (step + index)
            lines.append({
                "step": step, "group": 0, "index": index, "seed": step,
                "prompt": "[]", "completion": "```js\n// sketch\n```",
                "sketch": None if rejected else f"// sketch {step}.{index}", "png": png,
                "reward": None if lost else (0.0 if rejected else round(0.05 + 0.9 * hps, 4)),
                "status": "unavailable" if lost else ("rejected" if rejected else "ok"),
                "violations": ["no_sketch"] if rejected else [],
                "components": {"gate": 1.0, "length": 0.5, "judge": 0.0, "hps": hps},
                "paint_fraction": 0.2, "n_shapes": index, "references": [],
                "breakdown": _breakdown(None if rejected else hps)})
    root.mkdir(parents=True, exist_ok=True)
    (root / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return root


def test_reward_breakdown_reads_the_record_else_the_components():
    terms = reward_breakdown({"breakdown": _breakdown(0.5), "components": {"x": 1.0}})
    assert [t["term"] for t in terms] == ["gate", "length", "judge", "hps"]
    assert terms[3] == {"term": "hps", "raw": 0.5, "weight": 0.9, "contribution": 0.45}
    assert reward_breakdown({"breakdown": "not json", "components": {"gate": 0.0}}) == [
        {"term": "gate", "raw": 0.0, "weight": None, "contribution": None}]
    assert reward_breakdown({}) == []


def test_the_repository_url_is_declared_once_and_makes_badges_and_installs(tmp_path):
    url = colab.repository_url(ROOT)
    assert url and url.startswith("https://github.com/")
    assert colab.install_requirement(url) == f"watercolour[book] @ git+{url}"
    assert colab.colab_url("https://github.com/a/b.git", "notebooks/09_rollouts.ipynb") == (
        "https://colab.research.google.com/github/a/b/blob/notebooks/"
        "notebooks/09_rollouts.ipynb")
    with pytest.raises(ValueError, match="GitHub"):
        colab.colab_url("https://example.org/x", "a.ipynb")
    assert colab.repository_url(tmp_path) is None
    # the pipeline passes it to chapters that declare `package`, with their run's artifacts
    run = tmp_path / "run"
    (run / "results" / "smoke" / "rollouts").mkdir(parents=True)
    params = pipeline.chapter_parameters(CHAPTER, run, "tiny",
                                         package=colab.install_requirement(url))
    assert params == {"out_dir": str(run / "results" / "rollouts"), "mode": "tiny",
                      "package": f"watercolour[book] @ git+{url}",
                      "rollouts": str(run / "results" / "smoke" / "rollouts")}


@pytest.mark.parametrize("chapter", [c.path for c in notebooks.list_chapters(ROOT)
                                     if pipeline.is_notebook_page(c.path)],
                         ids=lambda p: p.stem)
def test_every_chapter_has_a_badge_an_install_cell_and_a_mode(chapter):
    nb = notebooks.read_notebook(chapter)
    first_markdown = next(c.source for c in nb.cells if c.cell_type == "markdown")
    assert f"]({colab.COLAB})" in first_markdown, "a Colab badge under the title"
    params = notebooks.notebook_parameters(chapter)
    assert params["mode"] == '"tiny"' and params["package"] == '""'
    assert "tests/" not in chapter.read_text()
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert sum("tags: [parameters]" in c or "parameters" in str(cell.metadata.get("tags"))
               for c, cell in zip(code, [c for c in nb.cells if c.cell_type == "code"])) == 1
    install = next(i for i, c in enumerate(code) if "pip\", \"install\"" in c)
    first_import = next(i for i, c in enumerate(code) if re.search(r"^(from|import) watercolour",
                                                                   c, re.M))
    assert install == first_import, "the install cell runs before watercolour is imported"
    cell = code[install]
    assert cell.index("\"pip\", \"install\"") < cell.index("from watercolour"), \
        "the install cell installs the package before it imports the installer"


@pytest.mark.slow
def test_the_chapter_browses_a_runs_rollouts_and_writes_its_results(tmp_path):
    rollouts = _run(tmp_path / "run")
    out = tmp_path / "out"
    executed = notebooks.run_notebook(CHAPTER, tmp_path / "executed",
                                      {"rollouts": str(rollouts), "out_dir": str(out),
                                       "top": 3}, timeout=300)
    summary = json.loads((out / "rollouts.json").read_text())
    assert summary["rollouts"] == 12 and summary["steps"] == 3
    assert summary["status"] == {"rejected": 3, "unavailable": 1, "ok": 8}
    assert summary["violations"] == {"no_sketch": 3}
    assert summary["with_picture"] == 8 and summary["trained_here_s"] is None
    assert summary["best"] == {"step": 2, "index": 3, "reward": pytest.approx(0.5)}
    page = Path(summary["gallery"]).read_text()
    assert page.count("<tr class=") == 12 and "hps 0.500 ×0.900 = 0.450" in page
    assert len(list((out / "gallery" / "images").glob("*.png"))) == 8
    nb = json.loads(executed.read_text())
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3  # scatter + 2 strips
    text = json.dumps(outputs)
    assert "application/vnd.jupyter.widget-view+json" in text
    assert "| hps | 0.500 | 0.900 | 0.450 |" in text  # the best rollout's breakdown
    assert not [o for o in outputs if o.get("output_type") == "error"]


def test_the_chapter_refuses_to_train_a_large_run_here(tmp_path):
    with pytest.raises(notebooks.NotebookError, match="trains on a GPU"):
        notebooks.run_notebook(CHAPTER, tmp_path / "executed",
                               {"mode": "smoke-4b", "out_dir": str(tmp_path / "out")},
                               timeout=120)


@pytest.mark.slow
@pytest.mark.browser
def test_the_built_rollouts_page_and_its_gallery_pass_the_page_check(tmp_path):
    from watercolour.book.pages import check_pages

    book = tmp_path / "src"
    (book / "notebooks").mkdir(parents=True)
    for name in ("_config.yml", "pyproject.toml"):
        shutil.copy(ROOT / name, book / name)
    shutil.copytree(ROOT / "book", book / "book")
    (book / "book" / "index.md").write_text("# Rollouts only\n\n- [Rollouts]"
                                            "(../notebooks/09_rollouts.md)\n")
    shutil.copy(CHAPTER, book / "notebooks")
    (book / "_toc.yml").write_text(textwrap.dedent("""\
        format: jb-book
        root: book/index
        chapters:
          - file: notebooks/09_rollouts
        """))
    run = book / "runs" / "book"  # in the book, as scripts/main.sh has it: relative paths
    (run / "results" / "smoke").mkdir(parents=True)
    _run(run / "results" / "smoke", steps=2)
    runs = pipeline.run_chapters(book, run, overrides={"09_rollouts": {"top": 2}}, timeout=300,
                                 progress=lambda _: None)
    assert runs[0].parameters["rollouts"] == "runs/book/results/smoke/rollouts"
    html = pipeline.build_html(book, run)
    gallery = html / "rollouts" / "index.html"
    assert gallery.read_text().count("<tr class=") == 8
    assert len(list((html / "rollouts" / "images").glob("*.png"))) == 5
    page = (html / "notebooks" / "09_rollouts.html").read_text()
    url = colab.colab_url(colab.repository_url(ROOT), "notebooks/09_rollouts.ipynb")
    assert f'href="{url}"' in page and 'href="../rollouts/index.html"' in page
    reports = {r.page: r for r in check_pages(html)}
    for name in ("notebooks/09_rollouts.html", "rollouts/index.html", "book/index.html"):
        assert reports[name].ok, reports[name]
    assert reports["notebooks/09_rollouts.html"].figures >= 3
    assert reports["notebooks/09_rollouts.html"].widgets >= 1
    assert reports["rollouts/index.html"].js_errors == []


def test_the_browser_shows_the_breakdown_and_a_placeholder_for_a_refused_sketch(tmp_path):
    from watercolour.analysis import RolloutBrowser
    from watercolour.analysis.rollout_browser import no_picture

    browser = RolloutBrowser.from_path(_run(tmp_path))
    assert browser.choice.options[0][0] == "step 0 · #0 · 0.000 · rejected"
    assert browser.image.value == no_picture()  # refused: never painted, never an empty image
    browser.sort.value = "reward, highest first"
    assert browser.image.value == _png(20 * 2 + 5 * 3)
    assert "<td>hps</td><td>0.500</td><td>0.900</td><td>0.450</td>" in browser.details.value
    assert no_picture() in [box.children[0].value for box in browser.group.children]


def test_the_landing_page_lists_every_chapter():
    index = (ROOT / "book" / "index.md").read_text()
    for chapter in notebooks.list_chapters(ROOT):
        if chapter.part is not None:  # the root page is the landing page itself
            rel = os.path.relpath(chapter.path, ROOT / "book")
            assert f"]({rel})" in index, rel
    assert "[A scaled smoke run](../notebooks/06_smoke_run.md)" in index
    pictures = re.findall(r"!\[[^]]*\]\((images/[^)]+)\)", index)
    assert len(pictures) >= 4 and all((ROOT / "book" / p).is_file() for p in pictures)
