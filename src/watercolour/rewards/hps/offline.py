"""The embedded default for the HPSv3 slot: an offline aesthetic scorer bounded by the pool,
and aware of the subject asked for.

:class:`PoolBandedAestheticScorer` is **not** a preference model and was not trained on
anyone's choices. It stands in for "would people like this picture *of this subject*?" when no
HPSv3 service is configured, so the reward runs here with no network and no GPU. HPSv3 reads
the caption as well as the image ("is this a hibiscus?"); so does this scorer, through the
pool: fitted on a pool, it measures a picture against the ``love`` paintings **of the subject
the caption names** (without a pool, or for a subject the pool does not hold, it is
subject-blind, as it was).

Its score, in [0, 1], is the mean of its parts, times a subject factor. Every part is a
**band** fitted to the pool's ``love`` tier, not a "more is better" ramp: 1 inside the band
(the ``love`` paintings' 10th to 90th percentile), and outside it ``exp(-gap / width)``, where
``width`` is the band's own width (at least :data:`MIN_WIDTH` of the part's scale): more
colour, contrast or coverage than the ``love`` paintings have costs as much as too little,
and every step further out costs more (the part never flattens at 0, so a sketch far out
still feels the way back). Colour is measured on the paint, not
on the ``background()``:

- ``colourful``: Hasler and Süsstrunk's colourfulness of the **painted** pixels (0-255 scale);
- ``contrast``: the paint's tonal range (90th - 10th percentile of its luminance);
- ``coverage``: the share of the sheet painted;
- ``composed``: the paint's centre of mass from the canvas centre;
- ``shapes``: visible shape edges (:func:`watercolour.gates.image.shape_edges`);
- ``hues``: how many hues the paint uses (:mod:`watercolour.rewards.features` ``hue_spread``);
- ``paper``: the bare paper's chroma (a saturated ``background()`` is not watercolour paper);
- ``specks``: the share of the paint in tiny separate marks (confetti strewn over a painting).

Fitted on a pool, two **anatomy** parts (:func:`watercolour.rewards.features.anatomy`) join
them, each a floor fitted to the asked subject's ``love`` paintings (1 at or above their 10th
percentile, ``exp(-gap / width)`` below; all ``love`` paintings when the subject has fewer than
:data:`MIN_SUBJECT_PAINTINGS`): ``coherence`` (the hue of the paint follows its distance from
the centre, as a throat, petals and leaves do) and ``centre`` (the paint is darker at the
centre than in the petals). A heap of dots in the pool's palette matches every band above and
fails these. The **subject factor** is ``exp(-max(0, d_own - d_other) / SUBJECT_WIDTH)``,
where ``d_own`` is the picture's distance (the offline judge's measurement groups,
standardised by the pool; :data:`K_NEAREST` nearest) to the ``love`` paintings of the subject
asked for and ``d_other`` the same to the nearest other subject's: a good painting of a
sunflower captioned "a hibiscus" is nearer the pool's sunflowers and loses most of its score.
A pool painting is measured against the *other* paintings (leave-one-out).

:data:`STARTER_BANDS` were fitted on the main command's starter pool
(``watercolour pool build --size 96``, seed 0) and are the default;
:meth:`PoolBandedAestheticScorer.fit` fits them on any pool. A blank canvas scores 0.
``mu`` is the score; ``unit`` is the same number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from watercolour.render.paint import PAPER_TOLERANCE, paper_colour
from watercolour.rewards.features import anatomy, normalise, paint_statistics
from watercolour.rewards.hps.base import PreferenceScore
from watercolour.rewards.references import subject_key

PARTS: tuple[str, ...] = ("colourful", "contrast", "coverage", "composed", "shapes", "hues",
                          "paper", "specks")
SCALE: dict[str, float] = {"colourful": 100.0, "contrast": 1.0, "coverage": 1.0,
                           "composed": 1.0, "shapes": 1.0, "hues": 1.0, "paper": 255.0,
                           "specks": 0.2}
"""Each part's natural range (its unit)."""
MIN_WIDTH = 0.05
"""The smallest fall-off width, as a fraction of the part's :data:`SCALE`."""
LOW_PCT, HIGH_PCT = 10.0, 90.0
ANATOMY: tuple[str, ...] = ("coherence", "centre")
"""The subject's anatomy floors (see the module docstring)."""
ANATOMY_SCALE: dict[str, float] = {"coherence": 0.5, "centre": 0.2}
MIN_SUBJECT_PAINTINGS = 3
"""A subject with fewer ``love`` paintings takes its anatomy floors from all of them."""
K_NEAREST = 3
SUBJECT_WIDTH = 0.15
"""How fast the subject factor falls as another subject's ``love`` paintings lie nearer than
the asked subject's (in the distance's units: mean ``log1p`` of the standardised squared
distance per measurement group). The pool's own ``love`` paintings, measured leave-one-out,
are nearer their own subject in most cases and lose little where they are not; a pool
sunflower asked for as a hibiscus lies ~0.3 nearer the sunflowers and keeps ~1/8."""


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    width: float

    def score(self, x: float) -> float:
        if self.low <= x <= self.high:  # (a floor has high = inf)
            return 1.0
        gap = self.low - x if x < self.low else x - self.high
        return float(np.exp(-gap / self.width))


STARTER_BANDS: dict[str, Band] = {
    "colourful": Band(37.66, 61.28, 23.62),
    "contrast": Band(0.1646, 0.2347, 0.0701),
    "coverage": Band(0.1159, 0.2607, 0.1448),
    "composed": Band(0.0534, 0.2631, 0.2097),
    "shapes": Band(0.1646, 0.308, 0.1434),
    "hues": Band(0.2539, 0.5315, 0.2776),
    "paper": Band(13.0, 20.0, 12.75),
    "specks": Band(0.0008, 0.0044, 0.01),
}
"""The default bands (see the module docstring; refitted by ``benchmarks/reward_robustness.py``,
which reports any drift)."""


def colourfulness(rgb: np.ndarray) -> float:
    """Hasler & Süsstrunk (2003) colourfulness M of an ``(n, 3)`` or image array, 0-255."""
    f = rgb.reshape(-1, 3).astype(np.float64)
    if len(f) == 0:
        return 0.0
    rg = f[:, 0] - f[:, 1]
    yb = 0.5 * (f[:, 0] + f[:, 1]) - f[:, 2]
    return float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))


def measurements(png: bytes) -> dict[str, float] | None:
    """The eight raw measurements (see the module docstring); None for bare paper."""
    m = paint_statistics(png)
    if m["paint_fraction"] < 0.002:
        return None
    rgb = normalise(png)
    paper = paper_colour(rgb)
    painted = np.abs(rgb.astype(np.int16) - np.array(paper, np.int16)).max(axis=2) \
        > PAPER_TOLERANCE
    return {"colourful": colourfulness(rgb[painted]), "contrast": m["tonal_range"],
            "coverage": m["paint_fraction"], "composed": m["centre_offset"],
            "shapes": m["shape_edges"], "hues": m["hue_spread"],
            "paper": float(max(paper) - min(paper)), "specks": m["speck_fraction"]}


def fit_bands(pngs: Sequence[bytes]) -> dict[str, Band]:
    """Bands from ``love`` paintings: their 10th-90th percentile; the fall-off width is the
    band's (at least :data:`MIN_WIDTH` of the scale)."""
    rows = [m for m in (measurements(p) for p in pngs) if m is not None]
    if not rows:
        raise ValueError("the offline scorer needs painted love paintings to fit its bands")
    out = {}
    for part in PARTS:
        values = np.array([r[part] for r in rows])
        low, high = (float(v) for v in np.percentile(values, [LOW_PCT, HIGH_PCT]))
        out[part] = Band(round(low, 4), round(high, 4),
                         round(max(high - low, MIN_WIDTH * SCALE[part]), 4))
    return out


@dataclass
class SubjectModel:
    """What the scorer knows of the pool's subjects: each ``love`` painting's measurement
    groups (standardised), subject key, digest, and anatomy; the floors per subject."""

    groups: dict[str, np.ndarray]
    scale: dict[str, np.ndarray]
    keys: list[str | None]
    digests: list[str]
    floors: dict[str | None, dict[str, Band]]
    """Per subject key (None: every love painting) the anatomy floors."""

    @classmethod
    def fit(cls, pool) -> SubjectModel:
        from watercolour.rewards.judge.offline_judge import _digest, measure_groups

        every = [measure_groups(p.png) for p in pool.paintings]
        names = list(every[0])
        scale = {g: np.maximum(np.stack([m[g] for m in every]).std(axis=0), 0.02)
                 for g in names}
        love = pool.tier("love")
        measured = [measure_groups(p.png) for p in love]
        groups = {g: np.stack([m[g] for m in measured]) / scale[g] for g in names}
        keys = [subject_key(p.subject) for p in love]
        shapes = [anatomy(p.png) for p in love]
        floors: dict[str | None, dict[str, Band]] = {None: _floors(shapes)}
        for key in set(keys) - {None}:
            own = [a for a, k in zip(shapes, keys) if k == key]
            if len(own) >= MIN_SUBJECT_PAINTINGS:
                floors[key] = _floors(own)
        return cls(groups, scale, keys, [_digest(p.png) for p in love], floors)

    def distances(self, png: bytes) -> np.ndarray:
        """Distance to every ``love`` painting (inf to the picture itself)."""
        from watercolour.rewards.judge.offline_judge import _digest, measure_groups

        m = measure_groups(png)
        d = np.mean([np.log1p(((self.groups[g] - m[g] / self.scale[g]) ** 2).mean(axis=1))
                     for g in self.groups], axis=0)
        digest = _digest(png)
        return np.where(np.array([x == digest for x in self.digests]), np.inf, d)

    def factor(self, png: bytes, key: str | None) -> tuple[float, dict[str, float | None]]:
        """The subject factor and its distances (own, nearest other, that subject)."""
        if key is None or key not in self.keys:
            return 1.0, {"own": None, "other": None}
        d = self.distances(png)
        keys = np.array(self.keys, dtype=object)

        def nearest(mask: np.ndarray) -> float:
            x = np.sort(d[mask])[:K_NEAREST]
            x = x[np.isfinite(x)]
            return float(x.mean()) if len(x) else float("inf")

        own = nearest(keys == key)
        others = {k: nearest(keys == k) for k in set(self.keys) - {None, key}}
        other = min(others.values()) if others else float("inf")
        if not np.isfinite(own):
            return 1.0, {"own": None, "other": None}
        gap = max(0.0, own - other) if np.isfinite(other) else 0.0
        return float(np.exp(-gap / SUBJECT_WIDTH)), {"own": round(own, 4),
                                                       "other": round(other, 4)}


def _floors(shapes: list[dict[str, float]]) -> dict[str, Band]:
    out = {}
    for part in ANATOMY:
        values = np.array([a[part] for a in shapes])
        low, high = (float(v) for v in np.percentile(values, [LOW_PCT, HIGH_PCT]))
        out[part] = Band(round(low, 4), float("inf"),
                         round(max(high - low, MIN_WIDTH * ANATOMY_SCALE[part]), 4))
    return out


class PoolBandedAestheticScorer:
    """The offline stand-in for HPSv3 (see the module docstring). Never fails."""

    name = ("offline-aesthetic (bands fitted to the pool's love tier, measured against the "
            "subject's love paintings; not a learned preference model)")

    def __init__(self, bands: dict[str, Band] | None = None,
                 subjects: SubjectModel | None = None) -> None:
        self.bands = dict(STARTER_BANDS if bands is None else bands)
        self.subjects = subjects

    @classmethod
    def fit(cls, pool) -> PoolBandedAestheticScorer:
        """Bands fitted to ``pool``'s ``love`` tier (a :class:`ReferencePool`), and its
        subjects."""
        return cls(fit_bands([p.png for p in pool.tier("love")]), SubjectModel.fit(pool))

    def parts(self, png: bytes, subject: str | None = None) -> dict[str, float]:
        """Each part's score in [0, 1] (all 0 for bare paper); with a subject model, the
        anatomy floors of ``subject`` (a phrase or a caption) too."""
        m = measurements(png)
        names = PARTS + (ANATOMY if self.subjects is not None else ())
        if m is None:
            return dict.fromkeys(names, 0.0)
        out = {part: self.bands[part].score(m[part]) for part in PARTS}
        if self.subjects is not None:
            key = subject_key(subject)
            floors = self.subjects.floors.get(key, self.subjects.floors[None])
            shape = anatomy(png)
            out.update({part: floors[part].score(shape[part]) for part in ANATOMY})
        return out

    def details(self, png: bytes, subject: str | None = None) -> dict[str, object]:
        """The parts, the subject factor with its distances, and the score."""
        parts = self.parts(png, subject)
        factor, distances = (1.0, {}) if self.subjects is None or measurements(png) is None \
            else self.subjects.factor(png, subject_key(subject))
        value = round(sum(parts.values()) / len(parts) * factor, 6)
        return {"parts": parts, "subject_factor": round(factor, 4), "distances": distances,
                "value": value}

    def value(self, png: bytes, subject: str | None = None) -> float:
        return float(self.details(png, subject)["value"])

    def score(self, pngs: Sequence[bytes], prompt: str = "") -> list[PreferenceScore]:
        out = []
        for png in pngs:
            value = self.value(png, prompt)
            out.append(PreferenceScore(value, None, value))
        return out


def aesthetic_parts(png: bytes) -> dict[str, float]:
    """The parts under :data:`STARTER_BANDS`."""
    return PoolBandedAestheticScorer().parts(png)


def aesthetic_score(png: bytes) -> float:
    """The score under :data:`STARTER_BANDS`."""
    return PoolBandedAestheticScorer().value(png)
