"""Rating paintings inline in a notebook, and the pool built from the ratings.

Every rating is one line appended to a log (:mod:`watercolour.pool.jsonl`: flushed and
fsynced before the click returns), so a kernel restart loses nothing: a new widget over the
same log replays it and opens at the first painting not yet rated. ``undo`` is itself an
event in the log (it takes back the latest rating or skip not yet taken back), so the log is
append-only and its replay is the state.

    >>> items = items_from_build("runs/pool")
    >>> widget = RatingWidget(items, "runs/pool/ratings.jsonl")
    >>> widget                     # in a notebook: the render, buttons, progress
    >>> widget.rate("love")        # or drive it from code
    >>> write_rated_pool(items, widget.log, "runs/pool/rated")

The widget uses ipywidgets (the ``book`` extra). Plain ipywidgets has no keyboard events, so
the buttons carry their shortcut in the tooltip only; a front end with ``ipyevents`` could
bind them.
"""

from __future__ import annotations

import io
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from watercolour.pool import jsonl
from watercolour.pool.schema import TIERS, sha256, validate_rows

RATINGS: tuple[str, ...] = ("love", "okay", "reject")
ACTIONS: tuple[str, ...] = (*RATINGS, "skip", "undo")


@dataclass
class Item:
    """One painting to rate."""

    id: str
    png: bytes
    sketch: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    """Provenance carried into the pool: subject, painter, round, critique, seed, ..."""


def items_from_build(folder: str | os.PathLike[str]) -> list[Item]:
    """The final round of every painting a build logged (what a person rates), in log order."""
    from watercolour.pool.log import GenerationLog

    root = Path(folder)
    log = GenerationLog(root / "log" if (root / "log").is_dir() else root)
    records = [r for r in log.records() if r.get("kind") == "painting" and r.get("png")]
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["round"] >= last.get(r["painting_id"], {}).get("round", 0):
            last[r["painting_id"]] = r
    items = []
    for r in last.values():
        png = log.png(r)
        if png is None:
            continue
        items.append(Item(r["id"], png, r.get("sketch") or "", {
            "subject": r.get("subject"), "painter": r.get("painter"), "round": r.get("round"),
            "critique": r.get("critique"), "seed": r.get("seed"),
            "paint_fraction": (r.get("render") or {}).get("paint_fraction"),
            "n_shapes": (r.get("render") or {}).get("n_shapes"), "score": r.get("score"),
        }))
    return items


def items_from_pool(pool) -> list[Item]:
    """The rows of a pool (a ``datasets.Dataset``, or anything :func:`load_pool` takes), to
    rate again: e.g. the published pool, to make its tiers yours."""
    from datasets import Image

    from watercolour.pool.dataset import load_pool
    from watercolour.pool.schema import image_bytes

    dataset = pool if hasattr(pool, "column_names") else load_pool(pool, check=False)
    raw = dataset.cast_column("image", Image(decode=False))
    items = []
    for i, row in enumerate(raw):
        data = image_bytes(row["image"])
        if data is None:
            continue
        meta = {k: row.get(k) for k in ("subject", "painter", "round", "critique", "seed",
                                         "paint_fraction", "n_shapes", "tier")}
        items.append(Item(str(row.get("id") or f"row-{i}"), data, row.get("sketch") or "",
                          meta))
    return items


# ---------------------------------------------------------------- the log


class RatingLog:
    """The append-only rating log and its replay."""

    def __init__(self, path: str | os.PathLike[str], rater: str = "person") -> None:
        self.path = Path(path)
        self.rater = rater
        jsonl.repair(self.path)
        self.events: list[dict[str, Any]] = jsonl.read(self.path)

    def record(self, item_id: str, action: str) -> dict[str, Any]:
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}; choose from {ACTIONS}")
        event = {"id": item_id, "action": action, "rater": self.rater,
                 "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        jsonl.append(self.path, event)
        self.events.append(event)
        return event

    def replay(self) -> tuple[dict[str, dict[str, Any]], set[str], list[dict[str, Any]]]:
        """``(ratings, skipped, stack)``: the standing rating event per item, the items
        skipped and not rated since, and the events ``undo`` would take back, latest last."""
        ratings: dict[str, dict[str, Any]] = {}
        skipped: set[str] = set()
        stack: list[tuple[dict[str, Any], dict[str, Any] | None, bool]] = []
        for event in self.events:
            iid, action = event["id"], event["action"]
            if action == "undo":
                if not stack:
                    continue
                done, previous, was_skipped = stack.pop()
                if previous is None:
                    ratings.pop(done["id"], None)
                else:
                    ratings[done["id"]] = previous
                if was_skipped:
                    skipped.add(done["id"])
                else:
                    skipped.discard(done["id"])
                continue
            stack.append((event, ratings.get(iid), iid in skipped))
            if action == "skip":
                skipped.add(iid)
            else:
                ratings[iid] = event
                skipped.discard(iid)
        return ratings, skipped, [e for e, _, _ in stack]

    def ratings(self) -> dict[str, str]:
        """Item id -> ``love`` | ``okay`` | ``reject``."""
        return {k: v["action"] for k, v in self.replay()[0].items()}


# ---------------------------------------------------------------- the widget


def _thumbnail(png: bytes, size: int) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.thumbnail((size, size))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


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
        self.show_source.observe(lambda ch: self._toggle_source(ch["new"]), "value")
        self.unrated.observe(lambda ch: self._refresh(), "value")
        self.index = self._start_index()
        self.view = w.VBox([
            self.title, self.image,
            w.HBox([*self.buttons.values(), self.show_source, self.unrated]),
            self.progress, self.status, self.source,
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
            self.source.value = ""
            return
        rating = self.ratings.get(item.id)
        meta = item.meta
        bits = [b for b in (meta.get("subject"), meta.get("painter"),
                            f"round {meta['round']}" if meta.get("round") else None) if b]
        self.title.value = (f"<h4>{item.id}" + (f" — {', '.join(bits)}" if bits else "")
                            + (f" <small>(rated {rating})</small>" if rating else "") + "</h4>")
        self.image.value = _thumbnail(item.png, self.image_size)
        self.source.value = item.sketch

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view)


# ---------------------------------------------------------------- summary and pool


def rating_summary(items: Sequence[Item], log: RatingLog) -> dict[str, Any]:
    ratings = log.ratings()
    counts = Counter(ratings.get(i.id, "unrated") for i in items)
    return {"items": len(items), "rated": len(items) - counts.get("unrated", 0),
            **{k: counts.get(k, 0) for k in (*RATINGS, "unrated")}}


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
        thumbs = [w.Image(value=_thumbnail(i.png, size), format="png",
                          layout=w.Layout(width=f"{size}px")) for i in chosen]
        rows.append(w.HTML(f"<b>{tier}</b> ({counts.get(tier, 0)})"))
        rows.append(w.HBox(thumbs, layout=w.Layout(flex_flow="row wrap")))
    return w.VBox(rows)


def rated_rows(items: Iterable[Item], log: RatingLog) -> list[dict[str, Any]]:
    """Pool rows for the paintings rated ``love`` or ``okay`` (``reject`` stays out)."""
    standing = log.replay()[0]
    rows = []
    for item in items:
        event = standing.get(item.id)
        if event is None or event["action"] not in TIERS:
            continue
        m = item.meta
        rows.append({
            "id": item.id, "tier": event["action"], "subject": m.get("subject"),
            "sketch": item.sketch, "painter": m.get("painter"), "round": m.get("round"),
            "critique": m.get("critique"), "seed": m.get("seed"),
            "paint_fraction": m.get("paint_fraction"), "n_shapes": m.get("n_shapes"),
            "rated_at": event["at"], "rated_by": event.get("rater", "person"),
            "sha256": sha256(item.png), "png": item.png,
        })
    return rows


def write_rated_pool(items: Sequence[Item], log: RatingLog, folder: str | os.PathLike[str]
                     ) -> Path:
    """Validate the rated paintings as a pool and write the pool folder."""
    from watercolour.pool.dataset import default_card, write_pool_folder

    rows = rated_rows(items, log)
    validate_rows([{"id": r["id"], "tier": r["tier"], "image": r["png"]} for r in rows],
                  source=f"the ratings in {log.path}")
    note = f"Rated by {log.rater} with the watercolour rating widget."
    return write_pool_folder(rows, folder, card=default_card(len(rows), note))
