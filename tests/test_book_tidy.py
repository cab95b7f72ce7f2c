"""The built page's copy of an executed chapter, tidied: a progress bar becomes one line, and the
injected parameters fit the column with the same values. No kernel, no book build."""

from __future__ import annotations

import copy

from watercolour.book.pages import read_page
from watercolour.book.tidy import WIDGET_STATE, WIDGET_VIEW, tidy_progress, wrap_parameters


def _tqdm_widget(state: dict, key: str, desc: str, n: int) -> dict:
    """tqdm's notebook bar, as nbclient stores it: an HBox of a label, a bar and the counts."""
    state[f"{key}-box"] = {"model_name": "HBoxModel", "state": {"children": [
        f"IPY_MODEL_{key}-left", f"IPY_MODEL_{key}-bar", f"IPY_MODEL_{key}-right"]}}
    state[f"{key}-left"] = {"model_name": "HTMLModel", "state": {"value": f"{desc}: 100%"}}
    state[f"{key}-bar"] = {"model_name": "FloatProgressModel", "state": {"value": n, "max": n}}
    state[f"{key}-right"] = {"model_name": "HTMLModel",
                             "state": {"value": f"\u2007{n}/{n}\u2007[00:00&lt;00:00, 812.41it/s]"}}
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": "HBox(...)", WIDGET_VIEW: {"model_id": f"{key}-box"}}}


TRAINER_TABLE = """<div>
      <progress value='2' max='2' style='width:300px; height:20px;'></progress>
      [2/2 00:26, Epoch 1/1]
    </div>
    <table border="1" class="dataframe"><thead><tr><th>Step</th><th>Training Loss</th></tr>
    </thead><tbody><tr><td>1</td><td>0.0</td></tr></tbody></table>"""


def _chapter() -> dict:
    state: dict = {"slider": {"model_name": "IntSliderModel", "state": {"value": 3}}}
    outputs = [
        _tqdm_widget(state, "load", "Loading weights", 38),
        {"output_type": "stream", "name": "stderr",
         "text": "Saving the dataset (0/1 shards):   0%|          | 0/12 [00:00<?, ? "
                 "examples/s]\rSaving the dataset (1/1 shards): 100%|##########| 12/12 "
                 "[00:00<00:00, 1843.21 examples/s]\n"},
        _tqdm_widget(state, "write", "Writing model shards", 1),
        {"output_type": "display_data", "metadata": {},
         "data": {"text/html": TRAINER_TABLE, "text/plain": "<IPython.core.display.HTML>"}},
        {"output_type": "stream", "name": "stdout", "text": "2 steps, 32 rollouts in 41 s\n"},
    ]
    slider = {"output_type": "display_data", "metadata": {},
              "data": {"text/plain": "IntSlider(value=3)", WIDGET_VIEW: {"model_id": "slider"}}}
    return {"metadata": {"widgets": {WIDGET_STATE: {"state": state}}},
            "cells": [{"cell_type": "code", "source": "train()", "outputs": outputs,
                       "metadata": {}},
                      {"cell_type": "code", "source": "slider", "outputs": [slider],
                       "metadata": {}},
                      {"cell_type": "markdown", "source": "Text.", "metadata": {}}]}


def test_each_progress_bar_becomes_one_line_and_the_steps_read_as_one_block():
    nb = _chapter()
    assert tidy_progress(nb) == 4
    (block,) = nb["cells"][0]["outputs"]
    assert block["output_type"] == "stream" and block["name"] == "stdout"
    assert block["text"].splitlines() == [
        "Loading weights: 100% 38/38 [00:00<00:00, 812.41it/s]",
        "Saving the dataset (1/1 shards): 100% 12/12 [00:00<00:00, 1843.21 examples/s]",
        "Writing model shards: 100% 1/1 [00:00<00:00, 812.41it/s]",
        "training [2/2 00:26, Epoch 1/1]",
        "2 steps, 32 rollouts in 41 s"]
    # a widget that is not a progress bar stays
    assert WIDGET_VIEW in nb["cells"][1]["outputs"][0]["data"]


def test_the_tidied_page_shows_no_raw_progress_bar():
    nb = _chapter()
    text = "".join(o.get("text", "") for o in nb["cells"][0]["outputs"])
    assert read_page(_output_page(text)).progress_bars  # before: the text bars show
    tidy_progress(nb)
    text = "".join(o.get("text", "") for o in nb["cells"][0]["outputs"])
    assert read_page(_output_page(text)).progress_bars == []


def _output_page(text: str) -> str:
    return ('<div class="cell_output docutils container"><div class="output stream"><pre>'
            f"{text}</pre></div></div>")


def test_the_injected_parameters_fit_the_column_with_the_same_values():
    source = "\n".join([
        "# Parameters",
        'mode = "tiny"',
        'pool = "runs/book/results/pool/build"',
        'pool_note = "the starter pool runs/book/results/pool/build: the rated pool '
        'runs/book/results/pool/rated holds 1 love and 0 okay paintings; the judge\'s 4 '
        'references need 2 of each"',
        'only = ["ok_setup_only.js", "bare_primitives.js", "unbalanced_brackets.js", '
        '"rainbow_quads.js"]',
        "live_steps = 1"])
    nb = {"cells": [{"cell_type": "code", "source": source,
                     "metadata": {"tags": ["injected-parameters"]}}]}
    before: dict = {}
    exec(source, before)
    wrap_parameters(copy.deepcopy(nb))
    wrap_parameters(nb)
    wrapped = nb["cells"][0]["source"]
    after: dict = {}
    exec(wrapped, after)
    assert {k: v for k, v in after.items() if k != "__builtins__"} == \
        {k: v for k, v in before.items() if k != "__builtins__"}
    assert max(len(line) for line in wrapped.splitlines()) <= 80
    assert 'mode = "tiny"' in wrapped.splitlines()  # a short line stays as it is
    assert wrapped.splitlines()[3] == "pool_note = ("
