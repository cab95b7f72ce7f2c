"""The rating widget: the render, love / okay / reject / skip / undo buttons and the progress,
saved to the log as you click; and a summary view of the ratings with thumbnails per tier.

The widget uses ipywidgets (the ``book`` extra). Plain ipywidgets has no keyboard events, so
the keyboard goes through a small text box: click it once, then every key typed there is a
shortcut (``1`` love, ``2`` okay, ``3`` reject, ``s`` skip, ``u`` undo; the box empties after
each), so a person rating hundreds of paintings never reaches for the mouse.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

from watercolour.pool.rating.items import Item
from watercolour.pool.rating.log import RATINGS, RatingLog
from watercolour.render.paint import thumbnail


class RatingWidget:
    """love / okay / reject / skip / undo over a list of paintings, saved as you click.

    Drive it from code with :meth:`rate`, :meth:`skip`, :meth:`undo`, :meth:`go`, or click
    its buttons (``widget.buttons["love"].click()``).
    """

    SHORTCUTS: ClassVar[dict[str, str]] = {
        "love": "1", "okay": "2", "reject": "3", "skip": "s", "undo": "u",
    }

    def __init__(
        self,
        items: Sequence[Item],
        log: str | os.PathLike[str] | RatingLog,
        rater: str = "person",
        only_unrated: bool = True,
        image_size: int = 512,
    ) -> None:
        import ipywidgets as w

        if not items:
            raise ValueError("nothing to rate")
        ids = [i.id for i in items]
        if len(set(ids)) != len(ids):
            raise ValueError("item ids must be unique")
        self.items = list(items)
        self.log = log if isinstance(log, RatingLog) else RatingLog(log, rater)
        self.image_size = image_size
        self.image = w.Image(format="png", layout=w.Layout(width=f"{image_size}px"))
        self.title = w.HTML()
        self.progress = w.HTML()
        self.status = w.HTML()
        self.source = w.Textarea(layout=w.Layout(width="100%", height="320px",
                                                 display="none"), disabled=True)
        self.show_source = w.ToggleButton(description="source", tooltip="show the sketch")
        self.unrated = w.Checkbox(value=only_unrated, description="unrated only", indent=False)
        self.buttons = {
            name: w.Button(description=name, tooltip=f"{name} (shortcut {key})",
                           button_style={"love": "success", "okay": "info",
                                         "reject": "danger"}.get(name, ""))
            for name, key in self.SHORTCUTS.items()
        }
        for name, button in self.buttons.items():
            button.on_click(lambda _b, n=name: self._clicked(n))
        keys = " ".join(f"{key} {name}" for name, key in self.SHORTCUTS.items())
        self.keys = w.Text(placeholder=f"click here, then type: {keys}", continuous_update=True,
                           layout=w.Layout(width="360px"))
        self.keys.observe(lambda ch: self._typed(ch["new"]), "value")
        self.show_source.observe(lambda ch: self._toggle_source(ch["new"]), "value")
        self.unrated.observe(lambda ch: self._refresh(), "value")
        self.index = self._start_index()
        self.view = w.VBox([
            self.title, self.image,
            w.HBox([*self.buttons.values(), self.show_source, self.unrated]),
            self.keys, self.progress, self.status, self.source,
        ])
        self._render()

    # ------------------------------------------------------------ state
    @property
    def ratings(self) -> dict[str, str]:
        return self.log.ratings()

    @property
    def current(self) -> Item | None:
        return self.items[self.index] if self.index is not None else None

    @property
    def progress_text(self) -> str:
        rated = sum(1 for i in self.items if i.id in self.ratings)
        return f"{rated} / {len(self.items)} rated"

    def _start_index(self) -> int | None:
        ratings, skipped, _ = self.log.replay()
        for pool in ([i for i, it in enumerate(self.items)
                      if it.id not in ratings and it.id not in skipped],
                     [i for i, it in enumerate(self.items) if it.id not in ratings]):
            if pool:
                return pool[0]
        return None if self.unrated.value else 0

    def _next_index(self, after: int) -> int | None:
        ratings = self.ratings
        n = len(self.items)
        for step in range(1, n + 1):
            j = (after + step) % n
            if not self.unrated.value or self.items[j].id not in ratings:
                return j
        return None

    # ------------------------------------------------------------ actions
    def rate(self, rating: str) -> None:
        """Rate the painting shown and move on."""
        if rating not in RATINGS:
            raise ValueError(f"rating must be one of {RATINGS}, got {rating!r}")
        item = self._require_current()
        self.log.record(item.id, rating)
        self.index = self._next_index(self.index)  # type: ignore[arg-type]
        self._render(f"{item.id}: {rating}")

    def skip(self) -> None:
        item = self._require_current()
        self.log.record(item.id, "skip")
        self.index = self._next_index(self.index)  # type: ignore[arg-type]
        if self.index is not None and self.items[self.index].id == item.id:
            self.index = self._next_index(self.index)
        self._render(f"{item.id}: skipped")

    def undo(self) -> None:
        """Take back the latest rating or skip and show that painting again."""
        stack = self.log.replay()[2]
        if not stack:
            self._render("nothing to undo")
            return
        target = stack[-1]["id"]
        self.log.record(target, "undo")
        ids = [i.id for i in self.items]
        if target in ids:
            self.index = ids.index(target)
        self._render(f"undid {stack[-1]['action']} of {target}")

    def go(self, item_id: str) -> None:
        """Show a given painting."""
        self.index = [i.id for i in self.items].index(item_id)
        self._render()

    def _require_current(self) -> Item:
        if self.current is None:
            raise RuntimeError("every painting is rated (untick 'unrated only' to revisit)")
        return self.current

    def _clicked(self, name: str) -> None:
        try:
            if name in RATINGS:
                self.rate(name)
            elif name == "skip":
                self.skip()
            else:
                self.undo()
        except RuntimeError as err:
            self.status.value = f"<i>{err}</i>"

    def _typed(self, text: str) -> None:
        """Keys typed in the keyboard box, each a shortcut; the box is emptied after."""
        if not text:
            return
        by_key = {key: name for name, key in self.SHORTCUTS.items()}
        for char in text.lower():
            if char in by_key:
                self._clicked(by_key[char])
        self.keys.value = ""

    # ------------------------------------------------------------ display
    def _toggle_source(self, show: bool) -> None:
        self.source.layout.display = "" if show else "none"

    def _refresh(self) -> None:
        if self.unrated.value and (self.current is None or self.current.id in self.ratings):
            self.index = self._next_index(self.index if self.index is not None else -1)
        elif self.index is None:
            self.index = 0
        self._render()

    def _render(self, status: str = "") -> None:
        self.progress.value = f"<b>{self.progress_text}</b>"
        self.status.value = status
        item = self.current
        for name in (*RATINGS, "skip"):
            self.buttons[name].disabled = item is None
        if item is None:
            self.title.value = "<h4>All rated.</h4>"
            self.image.value = b""
            self.image.layout.display = "none"  # an empty image shows as a broken one
            self.source.value = ""
            return
        self.image.layout.display = ""
        rating = self.ratings.get(item.id)
        meta = item.meta
        bits = [b for b in (meta.get("subject"), meta.get("painter"),
                            f"round {meta['round']}" if meta.get("round") else None) if b]
        self.title.value = (f"<h4>{item.id}" + (f" — {', '.join(bits)}" if bits else "")
                            + (f" <small>(rated {rating})</small>" if rating else "") + "</h4>")
        self.image.value = thumbnail(item.png, self.image_size)
        self.source.value = item.sketch

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view)


def summary_view(items: Sequence[Item], log: RatingLog | dict[str, str],
                 per_tier: int = 8, size: int = 128):
    """Counts per tier and thumbnails per tier, as a widget."""
    import ipywidgets as w

    ratings = log.ratings() if isinstance(log, RatingLog) else dict(log)
    rows = []
    counts = Counter(ratings.get(i.id, "unrated") for i in items)
    head = ", ".join(f"{k} <b>{counts.get(k, 0)}</b>" for k in (*RATINGS, "unrated"))
    rows.append(w.HTML(f"<p>{len(items)} paintings: {head}</p>"))
    for tier in RATINGS:
        chosen = [i for i in items if ratings.get(i.id) == tier][:per_tier]
        if not chosen:
            continue
        thumbs = [w.Image(value=thumbnail(i.png, size), format="png",
                          layout=w.Layout(width=f"{size}px")) for i in chosen]
        rows.append(w.HTML(f"<b>{tier}</b> ({counts.get(tier, 0)})"))
        rows.append(w.HBox(thumbs, layout=w.Layout(flex_flow="row wrap")))
    return w.VBox(rows)
