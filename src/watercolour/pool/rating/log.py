"""The append-only rating log and its replay.

Every rating is one line appended to the log (:mod:`watercolour.jsonl`: flushed and
fsynced before the click returns), so a kernel restart loses nothing: replaying the log is the
state. ``undo`` is itself an event (it takes back the latest rating or skip not yet taken back),
so the log is append-only.

The format, for logs written elsewhere (``watercolour pool rated`` reads them): JSON Lines, one
event a line, ``{"id": ..., "action": ..., "rater": ..., "at": ...}``. ``id`` names a painting
(a build's final-round generation id, as in its pool's ``id`` column); ``action`` is ``love``,
``okay``, ``reject``, ``skip`` or ``undo``; ``rater`` (default ``person``) and ``at`` (any
timestamp text) become the pool's ``rated_by`` and ``rated_at``. A later rating of a painting
replaces its earlier one; ``undo`` takes back the latest rating or skip not yet taken back,
whatever its ``id``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from watercolour import jsonl
from watercolour.errors import InputError

RATINGS: tuple[str, ...] = ("love", "okay", "reject")
ACTIONS: tuple[str, ...] = (*RATINGS, "skip", "undo")


class RatingLog:
    """The append-only rating log and its replay."""

    def __init__(self, path: str | os.PathLike[str], rater: str = "person") -> None:
        self.path = Path(path)
        self.rater = rater
        jsonl.repair(self.path)
        self.events: list[dict[str, Any]] = jsonl.read(self.path)
        for number, event in enumerate(self.events, 1):
            if not isinstance(event, dict) or not isinstance(event.get("id"), str) \
                    or event.get("action") not in ACTIONS:
                raise InputError(f"{self.path}: record {number} is not a rating ({event!r}); "
                                 f"each line is {{\"id\": ..., \"action\": one of "
                                 f"{', '.join(ACTIONS)}}}")

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
