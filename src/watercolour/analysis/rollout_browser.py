"""An ipywidgets browser of a run's rollouts: sort by step or reward, filter by status and
violation, and see each rollout's render, reward breakdown (each term's raw value, weight and
contribution) and sketch beside the rest of its group. Works offline (the widget JavaScript
the book needs is vendored in ``book/_widgets``).

    from watercolour.analysis import RolloutBrowser
    RolloutBrowser.from_path("runs/x/rollouts").widget
"""

from __future__ import annotations

import functools
import html
import io
import os
from pathlib import Path

import pandas as pd

from watercolour.analysis.rollouts import read_rollouts, reward_breakdown, rollout_png

SORTS = {"step": (["step", "index"], True), "reward, highest first": (["reward"], False),
         "reward, lowest first": (["reward"], True)}
"""The orders the browser offers: label -> (columns, ascending)."""

ALL = "(all)"


class RolloutBrowser:
    """The browser's state and widgets: ``widget`` is what a notebook displays."""

    def __init__(self, rollouts: pd.DataFrame, source: str | os.PathLike[str] = ".") -> None:
        import ipywidgets as w

        self.rollouts = rollouts.reset_index(drop=True)
        self.source = Path(source)
        statuses = sorted({str(s) for s in self.rollouts.get("status", pd.Series()).dropna()})
        self.sort = w.Dropdown(options=list(SORTS), value="step", description="sort")
        self.status = w.Dropdown(options=[ALL, *statuses], value=ALL, description="status")
        self.violation = w.Dropdown(options=[ALL, *self._violations()], value=ALL,
                                    description="violation")
        self.choice = w.Select(options=[], rows=12, layout=w.Layout(width="280px"))
        self.image = w.Image(format="png", layout=w.Layout(width="256px", height="256px"))
        self.details = w.HTML()
        self.sketch = w.Textarea(layout=w.Layout(width="520px", height="240px"), disabled=True)
        self.group = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        for control in (self.sort, self.status, self.violation):
            control.observe(lambda _: self.refresh(), names="value")
        self.choice.observe(lambda change: self.show(change["new"]), names="value")
        self.widget = w.VBox([
            w.HBox([self.sort, self.status, self.violation]),
            w.HBox([self.choice, self.image, w.VBox([self.details, self.sketch])]),
            w.HTML("<b>its group</b>"), self.group])
        self.refresh()

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> RolloutBrowser:
        """A browser of a rollouts dataset (JSONL or a ``datasets`` folder), pictures included."""
        return cls(read_rollouts(path, pictures=True), path)

    def filtered(self) -> pd.DataFrame:
        """The rollouts the controls let through, in the chosen order."""
        rows = self.rollouts
        if self.status.value != ALL:
            rows = rows[rows["status"].astype(str) == self.status.value]
        if self.violation.value != ALL:
            rows = rows[rows["violations"].map(lambda v: self.violation.value in _names(v))]
        columns, ascending = SORTS[self.sort.value]
        columns = [c for c in columns if c in rows]
        return rows.sort_values(columns, ascending=ascending, na_position="last", kind="stable")

    def refresh(self) -> None:
        """Re-list the rollouts after a control changed; shows the first."""
        rows = self.filtered()
        self.choice.options = [(_label(r), i) for i, r in rows.iterrows()]
        self.choice.value = rows.index[0] if len(rows) else None
        if not len(rows):
            self.show(None)

    def show(self, number: int | None) -> None:
        """Show rollout ``number`` (a row of ``rollouts``) and its group."""
        import ipywidgets as w

        if number is None:
            self.image.value, self.details.value, self.sketch.value = no_picture(), "no rollout", ""
            self.group.children = ()
            return
        row = self.rollouts.loc[number]
        self.image.value = rollout_png(row.get("png"), self.source) or no_picture()
        terms = "".join(
            f"<tr><td>{html.escape(t['term'])}</td><td>{_fmt(t['raw'])}</td>"
            f"<td>{_fmt(t['weight'])}</td><td>{_fmt(t['contribution'])}</td></tr>"
            for t in reward_breakdown(row))
        if terms:
            terms = "<tr><th>term</th><th>raw</th><th>weight</th><th>adds</th></tr>" + terms
        self.details.value = (
            f"<b>{html.escape(_label(row))}</b><br>seed {row.get('seed')}, paint "
            f"{_fmt(row.get('paint_fraction'))}, shapes {row.get('n_shapes')}<br>violations: "
            f"{html.escape(', '.join(_names(row.get('violations'))) or 'none')}"
            f"<table>{terms}</table>")
        self.sketch.value = str(row.get("sketch") or "")
        keys = [k for k in ("step", "group") if k in self.rollouts]
        same = self.rollouts
        for key in keys:
            same = same[same[key] == row[key]]
        self.group.children = tuple(
            w.VBox([w.Image(value=rollout_png(r.get("png"), self.source) or no_picture(),
                            format="png",
                            layout=w.Layout(width="128px", height="128px")),
                    w.HTML(f"#{r.get('index')} · {_fmt(r.get('reward'))}")])
            for _, r in same.sort_values([c for c in ["index"] if c in same]).iterrows())

    def _violations(self) -> list[str]:
        if "violations" not in self.rollouts:
            return []
        return sorted({n for v in self.rollouts["violations"] for n in _names(v)})


@functools.cache
def no_picture(size: int = 128) -> bytes:
    """The PNG shown for a rollout without a render (a refused sketch is never painted): a grey
    square that says so, never an empty image."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (size, size), (236, 236, 236))
    ImageDraw.Draw(image).text((size // 2, size // 2), "no picture", fill=(120, 120, 120),
                               anchor="mm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _names(violations: object) -> list[str]:
    if violations is None or isinstance(violations, float):
        return []
    if isinstance(violations, str):
        return [violations] if violations else []
    return [str(v.get("code", v)) if isinstance(v, dict) else str(v) for v in list(violations)]


def _label(row: pd.Series) -> str:
    return (f"step {row.get('step')} · #{row.get('index')} · {_fmt(row.get('reward'))} · "
            f"{row.get('status', '')}")


def _fmt(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else html.escape(str(value))
