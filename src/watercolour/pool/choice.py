"""Which pool the reward and training use: a person's rated pool when the judge can draw from
it, else the synthetic starter pool, with the reason either way.

    >>> choice = choose_pool("runs/book/results/pool/rated", "runs/book/results/pool/build", 4)
    >>> choice.kind, choice.reason
    ('starter', 'no rated pool at runs/book/results/pool/rated')

:func:`describe_pool` says what a pool is from its own rows (who rated them), so a chapter
handed a pool can say which one it uses without being told.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from watercolour.errors import InputError

RATED = "rated"
STARTER = "starter"
SYNTHETIC_RATER = "synthetic:"
"""The prefix of ``rated_by`` on rows tiered by a rule, not a person (the starter pool)."""


@dataclass(frozen=True)
class PoolChoice:
    """The pool chosen and why."""

    path: Path
    kind: str
    """:data:`RATED` or :data:`STARTER`."""
    reason: str

    def __str__(self) -> str:
        return f"the {self.kind} pool {self.path}: {self.reason}"


def choose_pool(rated: str | os.PathLike[str], starter: str | os.PathLike[str],
                references: int) -> PoolChoice:
    """The rated pool when it exists, loads as a valid pool and holds enough ``love`` and
    ``okay`` paintings for the judge's draw of ``references`` a group; else the starter pool,
    with the reason the rated one was passed over."""
    from watercolour.pool.dataset import load_pool
    from watercolour.pool.rating.rated_pool import check_enough_for_references

    rated, starter = Path(rated), Path(starter)
    if not rated.exists():
        return PoolChoice(starter, STARTER, f"no rated pool at {rated}")
    try:
        rows = load_pool(rated).select_columns(["tier"]).to_list()
        check_enough_for_references(rows, references, f"the rated pool {rated}")
    except (InputError, FileNotFoundError) as err:  # not a pool, not a valid one, too small
        return PoolChoice(starter, STARTER, str(err))
    tiers = Counter(r["tier"] for r in rows)
    return PoolChoice(rated, RATED, f"{tiers['love']} love and {tiers['okay']} okay paintings, "
                                    f"enough for the judge's {references} references a group")


def describe_pool(source: str | os.PathLike[str]) -> str:
    """One line on a pool from its rows: rated by a person or tiered by the starter rule, its
    tiers and who rated it, e.g. ``a rated pool (rated by book): love 3, okay 5``."""
    from watercolour.pool.dataset import load_pool

    dataset = load_pool(source, check=False)
    columns = [c for c in ("tier", "rated_by") if c in dataset.column_names]
    rows = dataset.select_columns(columns).to_list()
    raters = sorted({r.get("rated_by") or "unnamed" for r in rows})
    synthetic = bool(raters) and all(r.startswith(SYNTHETIC_RATER) for r in raters)
    tiers = Counter(r["tier"] for r in rows)
    kind = "the synthetic starter pool" if synthetic else "a rated pool"
    return (f"{kind} (rated by {', '.join(raters) or 'nobody'}): love {tiers['love']}, "
            f"okay {tiers['okay']}")
