"""A static, offline HTML gallery of a run's rollouts: every rollout with its render, reward,
terms, status, violations and sketch; sortable by any column, filterable by status and step.

``write_rollout_gallery(rollouts, out)`` writes ``out/index.html`` (no script or style from
outside the page) and one PNG per rollout under ``out/images/``.
"""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path
from typing import Any

from watercolour.analysis.rollouts import read_rollouts, reward_breakdown, rollout_png
from watercolour.io import write_bytes_atomic, write_text_atomic

COLUMNS = ("step", "group", "index", "reward", "status", "paint_fraction", "n_shapes")
"""The sortable columns, in the table's order (after the picture)."""

_SCRIPT = """
const table = document.querySelector('table'), body = table.tBodies[0];
const rows = () => Array.from(body.rows);
document.querySelectorAll('th[data-key]').forEach(th => th.addEventListener('click', () => {
  const key = th.dataset.key, down = th.dataset.dir !== 'desc';
  document.querySelectorAll('th').forEach(h => delete h.dataset.dir);
  th.dataset.dir = down ? 'desc' : 'asc';
  const value = r => { const v = r.dataset[key]; const n = parseFloat(v);
                       return v === '' ? -Infinity : (isNaN(n) ? v : n); };
  rows().sort((a, b) => { const x = value(a), y = value(b);
    return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1); }).forEach(r => body.appendChild(r));
}));
const status = document.getElementById('status'), step = document.getElementById('step');
function filter() {
  rows().forEach(r => { r.hidden = (status.value && r.dataset.status !== status.value)
                                   || (step.value !== '' && r.dataset.step !== step.value); });
  document.getElementById('shown').textContent = rows().filter(r => !r.hidden).length;
}
status.addEventListener('change', filter); step.addEventListener('input', filter); filter();
"""

_STYLE = """body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:4px 8px;vertical-align:top;font-size:13px}
th[data-key]{cursor:pointer;background:#f4f4f4}th[data-dir=asc]::after{content:' ▲'}
th[data-dir=desc]::after{content:' ▼'}img{width:128px;height:128px;object-fit:contain;
background:#fafafa}pre{max-width:520px;max-height:240px;overflow:auto;font-size:11px}
.rejected{color:#a33}.unavailable{color:#888}"""


def write_rollout_gallery(rollouts: str | os.PathLike[str], out: str | os.PathLike[str],
                          title: str = "Rollouts") -> Path:
    """Write the gallery of a rollouts dataset (JSONL or a ``datasets`` folder) into ``out``;
    returns the path of ``index.html``."""
    source = Path(rollouts)
    frame = read_rollouts(source, pictures=True)
    folder = Path(out)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for number, row in enumerate(frame.to_dict("records")):
        image = None
        png = rollout_png(row.get("png"), source)
        if png is not None:
            image = f"images/{number:06d}.png"
            write_bytes_atomic(folder / image, png)
        rows.append(_row(row, image))
    statuses = sorted({str(s) for s in frame["status"].dropna()}) if "status" in frame else []
    options = "".join(f'<option value="{html.escape(s)}">{html.escape(s)}</option>'
                      for s in statuses)
    header = "".join(f'<th data-key="{c}">{c.replace("_", " ")}</th>' for c in COLUMNS)
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p><label>status <select id='status'><option value=''>all</option>{options}</select>"
        "</label> <label>step <input id='step' type='number' min='0' style='width:5em'>"
        f"</label> · <span id='shown'>{len(rows)}</span> of {len(rows)} rollouts · click a "
        "column to sort</p><table><thead><tr><th>render</th>"
        f"{header}<th>terms</th><th>violations</th><th>sketch</th></tr></thead><tbody>"
        + "".join(rows) + f"</tbody></table><script>{_SCRIPT}</script></body></html>\n")
    return write_text_atomic(folder / "index.html", page)


def _row(row: dict[str, Any], image: str | None) -> str:
    data = " ".join(f'data-{c}="{html.escape(_text(row.get(c)))}"' for c in COLUMNS)
    picture = f'<img src="{image}" alt="rollout render">' if image else "no picture"
    cells = "".join(f"<td>{html.escape(_shown(row.get(c)))}</td>" for c in COLUMNS)
    terms = ", ".join(f"{t['term']} {_shown(t['raw'])}" + (
        f" ×{_shown(t['weight'])} = {_shown(t['contribution'])}" if t["weight"] is not None
        else "") for t in reward_breakdown(row))
    violations = row.get("violations")
    if violations is not None and not isinstance(violations, str):
        violations = ", ".join(str(v) for v in list(violations))
    sketch = row.get("sketch") or ""
    status = html.escape(_text(row.get("status")))
    return (f'<tr class="{status}" {data}><td>{picture}</td>{cells}'
            f"<td>{html.escape(terms)}</td><td>{html.escape(violations or '')}</td>"
            f"<td><details><summary>{len(str(sketch).splitlines())} lines</summary>"
            f"<pre>{html.escape(str(sketch))}</pre></details></td></tr>")


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3f}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return _text(value)
