"""The page check reads each built page's HTML for what shows the build machine rather than the
reader's world: machine paths, Python warnings, tracebacks, raw progress bars, code lines wider
than the column. Small hand-made pages in myst-nb's markup; no book build, no browser."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from watercolour.book.pages import MAX_CODE_LINE, read_page


def _cell(code: str, *outputs: tuple[str, str]) -> str:
    """A code cell as myst-nb writes it: the input, then each (kind, text) output."""
    shown = "".join(
        f'<div class="output {kind} highlight-myst-ansi notranslate"><div class="highlight">'
        f"<pre><span></span>{text}</pre></div></div>" for kind, text in outputs)
    return ('<div class="cell docutils container"><div class="cell_input docutils container">'
            '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span>'
            f'</span><span class="n">{code}</span></pre></div></div></div>'
            f'<div class="cell_output docutils container">{shown}</div></div>')


def _page(*body: str) -> str:
    return ('<html><body><nav class="bd-links">Training</nav><article class="bd-article">'
            + "".join(body) + "</article></body></html>")


def test_a_clean_page_passes():
    report = read_page(_page(
        "<p>Run <code>python -m watercolour.train.tiny.runs</code> from the repository.</p>",
        _cell('print(out / "analysis.json")', ("stream", "runs/book/results/analysis.json")),
        _cell("summary = train(*parse_args(plan.flags))",
              ("stream", "Loading weights: 38/38 in 0.4 s"),
              ("stream", "an OpenAI-compatible /v1 endpoint; ~/.cache/watercolour/tiny")),
        '<div class="highlight-bash notranslate"><div class="highlight"><pre>'
        "watercolour book run --mode tiny\n" + "x" * MAX_CODE_LINE + "</pre></div></div>"),
        "notebooks/06_smoke_run.html")
    assert report.ok and report.offences() == [], report


def test_a_machine_path_fails_the_page_and_is_named():
    report = read_page(_page(_cell(
        "print(plan.note)",
        ("stream", "judged against a pool (/work/main/runs/book/results/pool/build)"),
        ("stream", "read from /tmp/pytest-of-root/pytest-3/cache/tiny-painter"))))
    assert report.machine_paths == ["/work/main/runs/book/results/pool/build)",
                                    "/tmp/pytest-of-root/pytest-3/cache/tiny-painter"]
    assert not report.ok
    (offence,) = report.offences()
    assert offence.startswith("2 machine paths, e.g. '/work/main/runs/book/results/pool/")


def test_a_machine_path_a_widget_shows_fails_the_page():
    state = {"state": {
        "label": {"model_name": "HTMLModel", "state": {
            "value": '<img src="data:image/png;base64,iVBO+/tmp/AAA"> from /home/me/runs/x'}},
        "image": {"model_name": "ImageModel", "state": {"value": {"buffer": "..."}}}}}
    report = read_page(_page('<script type="application/vnd.jupyter.widget-state+json">'
                             + json.dumps(state) + "</script>"))
    assert report.machine_paths == ["/home/me/runs/x"]


def test_a_path_in_an_installed_package_fails_the_page():
    report = read_page(_page(_cell("x = 1", ("stream", "C:\\Users\\me\\runs\\smoke"),
                                   ("stream", "lib/python3.11/site-packages/watercolour/x.json"))))
    assert report.machine_paths == ["C:\\Users\\me\\runs\\smoke",
                                    "lib/python3.11/site-packages/watercolour/x.json"]


def test_python_warnings_and_tracebacks_in_outputs_fail_the_page():
    warning = ("/work/main/.venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py:"
               "775: UserWarning: 'pin_memory' argument is set as true but no accelerator is "
               "found, then device pinned memory won't be used.")
    report = read_page(_page(
        _cell("train()", ("stderr", warning + "\n  super().__init__(loader)"),
              ("stderr", "transformers/modeling_utils.py:1: FutureWarning: "
                         "is_gradient_checkpointing is deprecated")),
        _cell("boom()", ("stderr", "Traceback (most recent call last):\n  File x\nKeyError: 1")),
        "<p>A <code>UserWarning: </code> named in the prose is not an output.</p>"))
    assert len(report.warnings) == 2 and "pin_memory" in report.warnings[0]
    assert report.tracebacks == ["Traceback (most recent call last):"]
    kinds = [o.split(",")[0] for o in report.offences()]
    assert kinds == ["1 machine path", "2 Python warnings", "1 traceback"]


def test_raw_progress_bars_fail_the_page():
    state = {"state": {
        "bar": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_label",
                                                                  "IPY_MODEL_progress"]}},
        "label": {"model_name": "HTMLModel", "state": {"value": "Loading weights: "}},
        "progress": {"model_name": "FloatProgressModel", "state": {"value": 38, "max": 38}},
        "slider": {"model_name": "IntSliderModel", "state": {}}}}
    view = ('<script type="application/vnd.jupyter.widget-view+json">'
            '{"version_major": 2, "version_minor": 0, "model_id": "%s"}</script>')
    report = read_page(_page(
        _cell("save()", ("stderr", "Saving the dataset (1/1 shards): 100%|##########| 12/12 "
                                   "[00:00&lt;00:00, 1843.21 examples/s]")),
        _cell("train()", ("stream", "done")),
        '<div class="cell_output docutils container"><div class="output text_html">'
        "<progress value='1' max='1'></progress><table><tr><th>Step</th></tr></table>"
        "</div></div>",
        '<div class="cell_output docutils container">' + view % "bar" + view % "slider"
        + "</div>",
        '<script type="application/vnd.jupyter.widget-state+json">' + json.dumps(state)
        + "</script>"))
    assert report.progress_bars == [
        "Saving the dataset (1/1 shards): 100%|##########| 12/12 [00:00<00:00, 1843.21 "
        "examples/s]", "<progress> element", "progress-bar widget bar"]
    assert not report.ok


def test_a_code_line_over_the_column_fails_the_page_but_a_long_output_does_not():
    wide = "plan = smoke.plan_live_steps(recipe, live_steps, mix, out / 'run', pool, pool_note)"
    assert len(wide) > MAX_CODE_LINE
    report = read_page(_page(_cell(f"x = 1\n{wide}", ("stream", "y" * 120)),
                             '<div class="highlight-bash notranslate"><div class="highlight">'
                             f"<pre>ok\n{'z' * 81}</pre></div></div>"))
    assert report.long_code_lines == [wide, "z" * 81]
    # a page's own <pre> (the rollout gallery's sketches: a model's output) is not the book's
    gallery = read_page(f"<html><body><pre>{'s' * 120}</pre></body></html>", "rollouts/index.html")
    assert gallery.long_code_lines == [] and gallery.ok
    assert report.offences()[0].startswith("2 code lines over 80 characters")


@pytest.mark.browser
def test_the_check_command_names_the_page_and_the_offence(tmp_path):
    (tmp_path / "index.html").write_text(_page("<p>The book.</p>"))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "05.html").write_text(_page(_cell(
        "x = 1", ("stderr", "a.py:3: FutureWarning: is_gradient_checkpointing is deprecated"))))
    proc = subprocess.run([sys.executable, "-m", "watercolour", "book", "check", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ok  index.html" in proc.stdout
    assert "BAD notebooks/05.html" in proc.stdout
    assert "1 Python warning, e.g. 'a.py:3: FutureWarning: is_gradient_checkpointing" \
        in proc.stdout


def test_a_long_word_is_read_in_linear_time():
    # a picture's base64 in an output: the path pattern must not try every start in it
    started = time.perf_counter()
    report = read_page(_page(_cell("x = 1", ("stream", "iVBORw0KGgo" + "Ab+/9" * 40_000))))
    assert report.machine_paths == [] and time.perf_counter() - started < 2
