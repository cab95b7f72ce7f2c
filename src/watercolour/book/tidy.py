"""What the built page shows of an executed chapter, tidied for a reader; the executed notebook
itself (``RUN/executed/``) keeps everything as it ran.

- :func:`tidy_progress`: a progress bar (tqdm's notebook widget, tqdm's text bar, the
  trainer's HTML bar and step table) becomes one line that says what ran, how far and how long
  (``Loading weights: 100% 38/38 [00:00<00:00, 812.41it/s]``); adjacent stream outputs of a
  cell are merged, so a long step's lines read as one block.
- :func:`wrap_parameters`: papermill's injected-parameters cell with its long values wrapped to
  the column (:data:`WIDTH`), the same values.
"""

from __future__ import annotations

import ast
import html
import json
import pprint
import re
from typing import Any

WIDTH = 80
"""The widest code line of a page (characters)."""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PROGRESS_MODELS = ("FloatProgressModel", "IntProgressModel")

_TEXT_BAR = re.compile(r"(\d{1,3}%)\|[^|\n]*\|\s*")
"""tqdm's text bar: the percentage, then the bar between pipes."""
_HTML_BAR = re.compile(r"<progress\b[^>]*>.*?</progress>\s*([^<]*)", re.S)
"""transformers' notebook bar: ``<progress ...></progress> [2/2 00:26, Epoch 1/1]``."""


def tidy_progress(nb: dict[str, Any]) -> int:
    """Replace each progress-bar output of ``nb`` (in place) by one line of text, and merge a
    cell's adjacent stream outputs of the same name. Returns the bars replaced."""
    state = (nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
             .get("state", {}))
    replaced = 0
    for cell in nb.get("cells", []):
        outputs = []
        for output in cell.get("outputs", []):
            line = _progress_line(output, state)
            if line is not None:
                replaced += 1
                output = {"output_type": "stream", "name": "stdout", "text": line + "\n"}
            elif output.get("output_type") == "stream":
                text, bars = _tidy_text(_joined(output.get("text", "")))
                if bars:  # a stream of nothing but bars: the progress lines, not an error
                    replaced += bars
                    only_bars = bars == len([line for line in text.splitlines() if line])
                    output = {**output, "text": text,
                              "name": "stdout" if only_bars else output.get("name")}
            outputs.append(output)
        if "outputs" in cell:
            cell["outputs"] = _merged(outputs)
    return replaced


def wrap_parameters(nb: dict[str, Any], width: int = WIDTH) -> None:
    """The injected-parameters cell's assignments that are wider than ``width``, written over
    several lines (a string as adjacent literals in parentheses, a list or dict as
    :mod:`pprint` lays it out); the values are the same."""
    for cell in nb.get("cells", []):
        if "injected-parameters" not in cell.get("metadata", {}).get("tags", []):
            continue
        lines = []
        for line in _joined(cell.get("source", "")).splitlines():
            lines.extend(_wrapped(line, width) if len(line) > width else [line])
        cell["source"] = "\n".join(lines)


# ---------------------------------------------------------------- small parts


def _joined(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def _progress_line(output: dict[str, Any], state: dict[str, Any]) -> str | None:
    """The line that stands for ``output`` when it is a progress bar, else ``None``."""
    data = output.get("data", {})
    if WIDGET_VIEW in data:
        model = state.get(data[WIDGET_VIEW].get("model_id", ""), {})
        children = [state.get(str(c).removeprefix("IPY_MODEL_"), {})
                    for c in model.get("state", {}).get("children", [])]
        if not any(c.get("model_name") in PROGRESS_MODELS for c in children):
            return None
        texts = [_plain(c.get("state", {}).get("value", "")) for c in children
                 if c.get("model_name") == "HTMLModel"]
        return " ".join(t.strip().strip("|").strip() for t in texts if t.strip("| ")) or \
            "done"
    page = _joined(data.get("text/html", ""))
    found = _HTML_BAR.search(page)
    if found is None:
        return None
    return f"training {_plain(found.group(1)).strip()}".rstrip()


def _tidy_text(text: str) -> tuple[str, int]:
    """``text`` as a terminal would leave it (each line's last ``\\r`` state), each tqdm bar
    cut to its numbers; and how many bars there were."""
    lines, bars = [], 0
    for line in text.split("\n"):
        shown = line.rstrip("\r").split("\r")[-1]
        if _TEXT_BAR.search(shown):
            bars += 1
            shown = _TEXT_BAR.sub(r"\1 ", shown).rstrip()
        lines.append(shown)
    return "\n".join(lines), bars


def _merged(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (last is not None and output.get("output_type") == "stream"
                and last.get("output_type") == "stream" and last["name"] == output["name"]):
            text = _joined(last["text"])
            merged[-1] = {**last, "text": text + ("" if text.endswith("\n") else "\n")
                          + _joined(output["text"])}
        else:
            merged.append(output)
    return merged


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", text)))


def _wrapped(line: str, width: int) -> list[str]:
    try:
        (node,) = ast.parse(line).body
    except (SyntaxError, ValueError):
        return [line]
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return [line]
    name = node.targets[0].id
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        return [line]
    if isinstance(value, str):
        return [f"{name} = (", *(f"    {json.dumps(piece, ensure_ascii=False)}"
                                 for piece in _pieces(value, width - 6)), ")"]
    if isinstance(value, (list, tuple, dict)):
        prefix = f"{name} = "
        laid = pprint.pformat(value, width=width - len(prefix)).splitlines()
        return [prefix + laid[0], *(" " * len(prefix) + rest for rest in laid[1:])]
    return [line]


def _pieces(text: str, width: int) -> list[str]:
    """``text`` cut after spaces into pieces that, quoted, fit ``width``; a word longer than
    that is a piece of its own."""
    pieces, current = [], ""
    for word in re.findall(r"\S*\s*", text):
        if current and len(json.dumps(current + word, ensure_ascii=False)) > width:
            pieces.append(current)
            current = ""
        current += word
    return [*pieces, current] if current or not pieces else pieces
