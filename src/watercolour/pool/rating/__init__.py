"""Rating paintings inline in a notebook, and the pool built from the ratings.

Every rating is one line appended to a log (:mod:`watercolour.jsonl`: flushed and
fsynced before the click returns), so a kernel restart loses nothing: a new widget over the
same log replays it and opens at the first painting not yet rated. ``undo`` is itself an
event in the log (it takes back the latest rating or skip not yet taken back), so the log is
append-only and its replay is the state.

    >>> items = items_from_build("runs/pool")
    >>> widget = RatingWidget(items, "runs/pool/ratings.jsonl")
    >>> widget                     # in a notebook: the render, buttons, progress
    >>> widget.rate("love")        # or drive it from code
    >>> write_rated_pool(items, widget.log, "runs/pool/rated")

Modules, one job each: :mod:`~watercolour.pool.rating.items` (what is rated),
:mod:`~watercolour.pool.rating.log` (the log and its replay),
:mod:`~watercolour.pool.rating.widget` (the widget and the summary view) and
:mod:`~watercolour.pool.rating.rated_pool` (the ratings as a pool).
"""

from watercolour.pool.rating.items import Item, items_from_build, items_from_pool
from watercolour.pool.rating.log import ACTIONS, RATINGS, RatingLog
from watercolour.pool.rating.rated_pool import (
    rated_rows,
    rating_summary,
    refresh_rated_pool,
    write_rated_pool,
)
from watercolour.pool.rating.widget import RatingWidget, summary_view

__all__ = [
    "ACTIONS",
    "RATINGS",
    "Item",
    "RatingLog",
    "RatingWidget",
    "items_from_build",
    "items_from_pool",
    "rated_rows",
    "rating_summary",
    "refresh_rated_pool",
    "summary_view",
    "write_rated_pool",
]
