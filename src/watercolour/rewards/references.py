"""The pairwise judge's opponents: references drawn from the pool, per group.

Every rollout of a group (GRPO compares rollouts within a group) faces the same references:
``n`` paintings, **half from ``love`` and half from ``okay``** (an odd ``n`` gives ``okay``
the extra one; a curriculum, :mod:`watercolour.rewards.curriculum`, may move the split step
by step), drawn with the group's seed. The draw depends only on the pool's content and
the seed (ids are sorted before sampling), so it is reproducible and recorded: the seed, the
ids and their tiers go into every evaluation's breakdown.

Half from ``okay`` so that a weak early policy still meets opponents it can sometimes beat; a
win pays the same whichever tier it beats.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from watercolour.errors import InputError

DEFAULT_REFERENCES = 4


@dataclass(frozen=True)
class PoolPainting:
    id: str
    tier: str
    png: bytes
    subject: str | None = None
    sketch: str | None = None
    """The painting's sketch source, when the pool holds it (the near-copy check reads it)."""


@dataclass
class ReferencePool:
    """The pool held in memory as encoded PNGs, for drawing references and fitting the
    offline judge."""

    paintings: list[PoolPainting]
    source: str = ""
    negatives: list[bytes] = field(default_factory=list)
    """Renders a reward should rank below the pool (a build folder's ``negatives/``)."""

    def __post_init__(self) -> None:
        self._by_tier: dict[str, list[PoolPainting]] = {}
        for p in sorted(self.paintings, key=lambda p: p.id):
            self._by_tier.setdefault(p.tier, []).append(p)
        self._by_id = {p.id: p for p in self.paintings}

    def __len__(self) -> int:
        return len(self.paintings)

    def tier(self, name: str) -> list[PoolPainting]:
        return list(self._by_tier.get(name, []))

    def get(self, painting_id: str) -> PoolPainting:
        return self._by_id[painting_id]

    def counts(self) -> dict[str, int]:
        return {t: len(v) for t, v in sorted(self._by_tier.items())}

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], source: str = "",
                  negatives: Iterable[bytes] = ()) -> ReferencePool:
        """Rows with ``id``, ``tier`` and ``png`` (bytes) or ``image`` (any form a pool
        holds)."""
        from watercolour.pool.schema import image_bytes

        paintings = []
        for i, row in enumerate(rows):
            data = row.get("png") or image_bytes(row.get("image"))
            if data is None or row.get("tier") is None:
                continue
            paintings.append(PoolPainting(str(row.get("id") or f"row-{i}"), str(row["tier"]),
                                          bytes(data), row.get("subject"), row.get("sketch")))
        return cls(paintings, source, list(negatives))

    @classmethod
    def from_dataset(cls, dataset, source: str = "",
                     negatives: Iterable[bytes] = ()) -> ReferencePool:
        """A pool ``datasets.Dataset`` (images are read undecoded)."""
        from datasets import Image

        columns = [c for c in ("id", "tier", "image", "subject", "sketch")
                   if c in dataset.column_names]
        raw = dataset.select_columns(columns).cast_column("image", Image(decode=False))
        return cls.from_rows(raw, source, negatives)

    @classmethod
    def load(cls, source: str | os.PathLike[str], negatives: bool = True) -> ReferencePool:
        """Load with :func:`watercolour.pool.load_pool`; a build folder's ``negatives/``
        comes along when ``negatives``."""
        from pathlib import Path

        from watercolour.pool import load_pool

        dataset = load_pool(source)
        negs: list[bytes] = []
        folder = Path(source).expanduser()
        if negatives and (folder / "negatives" / "metadata.jsonl").is_file():
            from watercolour.pool.schema import image_bytes

            neg = load_pool(folder / "negatives", check=False)
            from datasets import Image

            for row in neg.select_columns(["image"]).cast_column("image", Image(decode=False)):
                data = image_bytes(row["image"])
                if data:
                    negs.append(data)
        return cls.from_dataset(dataset, str(source), negs)


@dataclass(frozen=True)
class References:
    """One group's opponents."""

    seed: int
    paintings: tuple[PoolPainting, ...]

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.paintings]

    @property
    def tiers(self) -> list[str]:
        return [p.tier for p in self.paintings]

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "ids": self.ids, "tiers": self.tiers}


_ARTICLES = {"a", "an", "the", "of", "some"}


def subject_key(text: str | None) -> str | None:
    """What a subject phrase names, comparably: a known flower's key (``"a peach hibiscus"``
    -> ``hibiscus``), else the phrase's words without articles, else None."""
    if not text:
        return None
    from watercolour.pool.subjects import SUBJECTS

    lowered = text.lower()
    for s in SUBJECTS.values():
        if s.name in lowered or s.key in lowered:
            return s.key
    words = [w for w in "".join(c if c.isalnum() else " " for c in lowered).split()
             if w not in _ARTICLES]
    return " ".join(words) or None


def draw_references(pool: ReferencePool, seed: int, n: int = DEFAULT_REFERENCES,
                    subject: str | None = None, love: int | None = None) -> References:
    """``love`` (default ``n // 2``) from ``love`` and the rest from ``okay``, without
    replacement, seeded. The default draw is the one every committed run made (the same
    random calls in the same order); a curriculum
    (:class:`~watercolour.rewards.curriculum.ReferencesSchedule`) sets ``love`` per step.

    With ``subject``, each tier's references are drawn from its paintings **of that subject**
    (by :func:`subject_key`: ``a white daisy`` and ``a lilac daisy`` are both daisies), so
    the judge measures a rollout against paintings of what it was asked to paint; a tier
    with too few of them is filled from its other paintings. (A one-subject pool, as the
    original's, draws the same either way.)

    Raises:
        InputError: ``n`` < 1, ``love`` not in 0..n, or a tier holds too few paintings.
    """
    if n < 1:
        raise InputError(f"the number of references must be at least 1, got {n}")
    if love is None:
        love = n // 2
    elif isinstance(love, bool) or not isinstance(love, int) or not 0 <= love <= n:
        raise InputError(f"the love references must be a whole number from 0 to {n}, got "
                         f"{love!r}")
    want = {"love": love, "okay": n - love}
    rng = random.Random(seed)
    key = subject_key(subject)
    chosen: list[PoolPainting] = []
    for tier, k in want.items():
        candidates = pool.tier(tier)
        if len(candidates) < k:
            raise InputError(f"the pool {pool.source or ''} has {len(candidates)} {tier!r} "
                             f"painting(s); {n} references need {k}".replace("  ", " "))
        same = [p for p in candidates if key is not None and subject_key(p.subject) == key]
        if not same:
            chosen += rng.sample(candidates, k)
            continue
        picked = rng.sample(same, min(k, len(same)))
        rest = [p for p in candidates if p not in picked]
        chosen += picked + rng.sample(rest, k - len(picked))
    return References(seed, tuple(chosen))


def group_seed(*parts: object) -> int:
    """A stable 63-bit seed from any parts (e.g. base seed, step, prompt): the same parts give
    the same seed in every process and run (unlike ``hash``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
