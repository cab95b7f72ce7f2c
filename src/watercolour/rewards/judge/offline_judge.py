"""The embedded default judge: fitted on the pool, offline, and bounded by the pool.

:class:`PoolFittedJudge` answers the vision-model judge's question (which of two pictures is
the better watercolour of the subject?) from measurements, with no network. Its only standard
is the pool, as a person's judge's is, and it cannot be pleased beyond the pool:

    quality(x | subject) = t . clip(z(x))                         bounded: the pool's range
                           - sum_g a_g * near_love_g(x, subject)  resemble love of the subject
                           - sum_g b_g * near_pool_g(x)           resemble some pool painting
                           - sum_g c_g * out_of_range_g(x)        stay inside the pool's range
                           - sum_g d_g * other_subject_g(x)       not another subject

``z`` are the whole-picture paint statistics (:mod:`watercolour.rewards.features`, among
them how near the picture is to each weak variant the pool critic names, and its score),
standardised and **clipped to the range the pool's paintings span**, so no statistic pays
beyond the best the pool shows (more hues, more chroma, more contrast stop paying at the
pool's edge). The other terms are distances, so they can only cost: for every group ``g`` of
measurements (the statistics and the form groups of :mod:`watercolour.rewards.form`:
palette, radial structure around the paint's centre, edge orientations and straight runs,
marks, paper colour, an 8 x 8 thumbnail), ``near_love_g`` is the mean squared distance
(``log1p``) to the ``K_NEAREST`` nearest ``love`` paintings **of the subject asked for**
(all ``love`` paintings when the pool has none of that subject or none is named),
``near_pool_g`` the same to the nearest pool paintings of any subject, and
``out_of_range_g`` how far each measurement lies outside the pool's range, and
``other_subject_g`` how much nearer the picture is to another subject's ``love`` paintings
than to those of the subject asked for (when the pool has both). The best a picture
can do is to look like the pool's ``love`` paintings of its subject; a picture far from every
pool painting (stripes, a colour wheel, confetti) loses its comparisons; a good painting of
another subject loses to the references of the subject asked for. A pool painting is always
measured against the *other* paintings (leave-one-out), so a reference is never compared with
itself.

The weights (``t`` free, ``a, b, c, d >= 0``) are fitted deterministically (projected Newton on
an L2-regularised Bradley-Terry loss) on ordered pairs, weighted by kind
(:data:`KIND_WEIGHTS`):
``love`` above ``okay`` (same subject, and regardless of subject); the pool above
**negatives** (the build folder's negative renders, degraded copies of the pool's paintings,
form-destroying copies that keep their colours: :mod:`watercolour.rewards.negatives`,
abstract families, and whatever ``negatives`` the caller adds, e.g. a red-team search's
winners: :mod:`watercolour.analysis.redteam`); each painting above its own degraded and
form-destroyed copies (so strewing confetti over a painting never pays); and, where the pool
has several subjects, a ``love`` painting of a subject above paintings of other subjects,
asked about that subject.

A fit is cached on disk by :meth:`PoolFittedJudge.fit_cached`, keyed by :func:`fit_key` (the
pool's content, the fit's settings, :data:`MODEL_VERSION` and the features' version).

On a starter pool tiered by the synthetic rule (:mod:`watercolour.pool.tiers`), the held-out
love/okay accuracy is partly circular; on a pool a person rated it measures how much of that
person's taste the measurements can express.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from watercolour.rewards.features import FEATURE_VERSION, FEATURES, normalise, statistics_vector
from watercolour.rewards.form import GROUPS, form_measures
from watercolour.rewards.judge.base import Vote
from watercolour.rewards.negatives import abstract_negatives, form_negatives
from watercolour.rewards.references import ReferencePool, subject_key

L2 = 0.01
"""Ridge penalty on the weights (the loss is a weighted mean over pairs). Lighter ridges
(0.001) let a painting with confetti beat the painting (``benchmarks/reward_robustness.py``);
the weak-variant features, not a lighter ridge, lift the held-out love/okay accuracy."""
K_NEAREST = 3
"""Neighbours averaged in each distance term."""
GROUP_NAMES: tuple[str, ...] = ("stats", *GROUPS)
"""The measurement groups the distance terms cover."""
PENALTIES: tuple[str, ...] = ("near_love", "near_pool", "out_of_range", "other_subject")
MIN_SCALE = 0.02
"""Floor on a measurement's spread in the pool (a measurement the pool never varies must not
make a tiny difference infinite)."""
SYNTHETIC_PER_PAINTING = 2
MAX_SYNTHETIC_SOURCES = 48
"""At most this many pool paintings are degraded into synthetic negatives (fit time)."""
FORM_NEGATIVES_PER_KIND = 8
"""Form-destroying copies of each kind the judge makes for its fit (abstract pictures: three
quarters as many per family)."""
NEWTON_STEPS = 60
KIND_WEIGHTS: dict[str, float] = {"tier": 2.0, "negative": 1.0, "copy": 1.0, "subject": 1.0}
"""How much each kind of pair weighs in the fit (love above okay counts double: the other
kinds are easy to satisfy together, the tiers are the pool's taste)."""
MODEL_VERSION = 2
"""Bumped whenever the fit or the terms change (with :data:`FEATURE_VERSION`, it keys the
cached fits: :meth:`PoolFittedJudge.fit_cached`)."""


def measure_groups(png: bytes) -> dict[str, np.ndarray]:
    """Every group of :data:`GROUP_NAMES` for one picture."""
    return {"stats": statistics_vector(png), **form_measures(png)}


def _digest(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


# ---------------------------------------------------------------- the model


@dataclass
class FittedModel:
    """Everything a fitted judge needs (plain arrays: JSON round-trips)."""

    mean: np.ndarray
    """Per group: the pool's mean (only ``stats`` uses it, for ``z``)."""
    scale: dict[str, np.ndarray]
    """Per group: the pool's spread per measurement (floored at :data:`MIN_SCALE`)."""
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]
    """Per group: the pool's range, standardised."""
    pool: dict[str, np.ndarray]
    """Per group: the pool's paintings, standardised (rows in ``ids`` order)."""
    ids: list[str]
    digests: list[str]
    tiers: list[str]
    subjects: list[str | None]
    weights: np.ndarray
    """Linear weights over the clipped statistics, then one weight per (penalty, group)."""
    fitted_on: dict[str, int]
    k: int = K_NEAREST

    # ------------------------------------------------------------ terms
    def standardise(self, groups: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {}
        for g in GROUP_NAMES:
            x = np.atleast_2d(groups[g])
            centre = self.mean if g == "stats" else 0.0
            out[g] = (x - centre) / self.scale[g]
        return out

    def love_rows(self, key: str | None) -> np.ndarray:
        love = np.array([t == "love" for t in self.tiers])
        if key is not None:
            same = love & np.array([s == key for s in self.subjects])
            if same.any():
                return same
        return love

    def terms(self, std: dict[str, np.ndarray], key: str | None,
              own: Sequence[int]) -> np.ndarray:
        """Rows of terms for standardised pictures; ``own[i]`` is picture ``i``'s row in the
        pool (excluded from its neighbours) or -1."""
        n = len(own)
        love = self.love_rows(key)
        every = np.ones(len(self.ids), dtype=bool)
        tiers, subjects = np.array(self.tiers), np.array(self.subjects, dtype=object)
        named = sorted({s for s, t in zip(self.subjects, self.tiers) if s and t == "love"})
        others = [(tiers == "love") & (subjects == s) for s in named if s != key] \
            if key in named else []
        z = np.clip(std["stats"], self.low["stats"], self.high["stats"])
        cols = [z]
        near = {p: np.zeros((n, len(GROUP_NAMES))) for p in PENALTIES}
        for j, g in enumerate(GROUP_NAMES):
            x = std[g]
            d = ((x[:, None, :] - self.pool[g][None, :, :]) ** 2).mean(axis=2)
            for i, row in enumerate(own):
                if row >= 0:
                    d[i, row] = np.inf
            near["near_love"][:, j] = _nearest(d[:, love], self.k)
            near["near_pool"][:, j] = _nearest(d[:, every], self.k)
            if others:  # closer to another subject's love paintings than to this one's
                closest = np.min([_nearest(d[:, rows], self.k) for rows in others], axis=0)
                near["other_subject"][:, j] = np.maximum(
                    0.0, np.log1p(near["near_love"][:, j]) - np.log1p(closest))
            outside = np.maximum(0.0, self.low[g] - x) + np.maximum(0.0, x - self.high[g])
            near["out_of_range"][:, j] = (outside ** 2).mean(axis=1)
        cols += [-(near[p] if p == "other_subject" else np.log1p(near[p])) for p in PENALTIES]
        return np.concatenate(cols, axis=1)

    def constrained(self) -> np.ndarray:
        """Which weights must stay >= 0 (every distance weight)."""
        return np.arange(len(self.weights)) >= len(FEATURES)

    def term_names(self) -> list[str]:
        return ([f"clip:{f}" for f in FEATURES]
                + [f"{p}:{g}" for p in PENALTIES for g in GROUP_NAMES])

    def importance(self) -> dict[str, float]:
        """Every term's weight: what the judge rewards (``clip:``) and what costs."""
        return {name: round(float(w), 4) for name, w in zip(self.term_names(), self.weights)}

    # ------------------------------------------------------------ plain data
    def to_dict(self) -> dict[str, Any]:
        def arr(d: dict[str, np.ndarray]) -> dict[str, list]:
            return {k: v.tolist() for k, v in d.items()}

        return {"mean": self.mean.tolist(), "scale": arr(self.scale), "low": arr(self.low),
                "high": arr(self.high), "pool": arr(self.pool), "ids": self.ids,
                "digests": self.digests, "tiers": self.tiers, "subjects": self.subjects,
                "weights": self.weights.tolist(), "fitted_on": self.fitted_on, "k": self.k}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FittedModel:
        def arr(d: dict[str, list]) -> dict[str, np.ndarray]:
            return {k: np.array(v, dtype=np.float64) for k, v in d.items()}

        return cls(np.array(data["mean"]), arr(data["scale"]), arr(data["low"]),
                   arr(data["high"]), arr(data["pool"]), list(data["ids"]),
                   list(data["digests"]), list(data["tiers"]), list(data["subjects"]),
                   np.array(data["weights"]), dict(data["fitted_on"]), int(data["k"]))


def _nearest(d: np.ndarray, k: int) -> np.ndarray:
    """Mean of each row's ``k`` smallest finite distances (0 when a row has none)."""
    if d.shape[1] == 0:
        return np.zeros(d.shape[0])
    part = np.sort(np.where(np.isfinite(d), d, np.nan), axis=1)[:, :max(1, k)]
    count = np.isfinite(part).sum(axis=1)
    return np.where(count > 0, np.nansum(part, axis=1) / np.maximum(count, 1), 0.0)


def _frame(pool_groups: list[dict[str, np.ndarray]]) -> tuple[np.ndarray, dict, dict, dict,
                                                              dict]:
    """The pool's mean, spread, standardised range and standardised rows per group."""
    stacked = {g: np.stack([p[g] for p in pool_groups]) for g in GROUP_NAMES}
    mean = stacked["stats"].mean(axis=0)
    scale, low, high, rows = {}, {}, {}, {}
    for g, x in stacked.items():
        scale[g] = np.maximum(x.std(axis=0), MIN_SCALE)
        centred = (x - (mean if g == "stats" else 0.0)) / scale[g]
        low[g], high[g], rows[g] = centred.min(axis=0), centred.max(axis=0), centred
    return mean, scale, low, high, rows


# ---------------------------------------------------------------- synthetic negatives


def degrade(png: bytes, kind: str) -> bytes:
    """A degraded copy of a painting: ``washed`` (blended 90% into the paper: near-blank),
    ``grey`` (no colour), ``mud`` (darkened and greyed: over-worked paint)."""
    rgb = normalise(png).astype(np.float32)
    from watercolour.render.paint import paper_colour

    paper = np.array(paper_colour(rgb.astype(np.uint8)), dtype=np.float32)
    if kind == "washed":
        out = paper + 0.1 * (rgb - paper)
    elif kind == "grey":
        lum = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
        out = np.repeat(lum[..., None], 3, axis=2)
    elif kind == "mud":
        lum = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
        painted = np.abs(rgb - paper).max(axis=2, keepdims=True) > 4
        mud = 0.45 * (0.4 * rgb + 0.6 * lum[..., None]) + np.array([20, 14, 6], np.float32)
        out = np.where(painted, mud, rgb)
    else:
        raise ValueError(f"unknown degradation {kind!r}")
    buffer = io.BytesIO()
    Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)).save(buffer, format="PNG",
                                                                compress_level=1)
    return buffer.getvalue()


DEGRADATIONS: tuple[str, ...] = ("washed", "grey", "mud")


def synthetic_negatives(pngs: Sequence[bytes], seed: int = 0,
                        limit: int = MAX_SYNTHETIC_SOURCES) -> list[tuple[int, bytes]]:
    """Degraded copies (two kinds per source): (index of the source, PNG)."""
    rng = random.Random(seed)
    index = list(range(len(pngs)))
    if len(index) > limit:
        index = sorted(rng.sample(index, limit))
    return [(i, degrade(pngs[i], DEGRADATIONS[(n + j) % 3]))
            for n, i in enumerate(index) for j in range(SYNTHETIC_PER_PAINTING)]


def generated_negatives(pngs: Sequence[bytes], seed: int = 0, synthetic: bool = True,
                        per_kind: int = FORM_NEGATIVES_PER_KIND) -> list[tuple[int, bytes]]:
    """Every negative the judge makes for itself from ``pngs``: degraded and form-destroying
    copies (``per_kind`` of each kind, with their source's index) and abstract families
    (index -1; three quarters as many per family)."""
    out: list[tuple[int, bytes]] = []
    if synthetic:
        out += synthetic_negatives(pngs, seed)
    out += [(i, png) for i, _, png in form_negatives(pngs, seed, per_kind)]
    out += [(-1, png) for _, png in abstract_negatives(seed, max(1, (3 * per_kind) // 4))]
    return out


# ---------------------------------------------------------------- fitting


def fit_model(paintings: Sequence[tuple[str, str, str | None, bytes]],
              negatives: Sequence[tuple[int, bytes]], l2: float = L2,
              seed: int = 0) -> FittedModel:
    """Fit on pool ``paintings`` (id, tier, subject, PNG) and ``negatives`` (index of the
    painting each was made from or -1, PNG)."""
    love = [i for i, p in enumerate(paintings) if p[1] == "love"]
    okay = [i for i, p in enumerate(paintings) if p[1] == "okay"]
    if not love or not (okay or negatives):
        raise ValueError("the judge needs love paintings and okay paintings or negatives "
                         "to learn from")
    groups = [measure_groups(p[3]) for p in paintings]
    mean, scale, low, high, rows = _frame(groups)
    keys = [subject_key(p[2]) for p in paintings]
    n_terms = len(FEATURES) + len(PENALTIES) * len(GROUP_NAMES)
    model = FittedModel(mean, scale, low, high, rows, [p[0] for p in paintings],
                        [_digest(p[3]) for p in paintings], [p[1] for p in paintings], keys,
                        np.zeros(n_terms), {})
    neg_groups = [measure_groups(png) for _, png in negatives]
    rng = random.Random(seed)
    neg_keys = [keys[i] if i >= 0 else keys[rng.randrange(len(keys))] for i, _ in negatives]

    cache: dict[tuple[str, int, str | None], np.ndarray] = {}

    def phi(kind: str, items: list[int], key: str | None) -> np.ndarray:
        todo = [i for i in dict.fromkeys(items) if (kind, i, key) not in cache]
        if todo:
            src = groups if kind == "pool" else neg_groups
            std = model.standardise({g: np.stack([src[i][g] for i in todo])
                                     for g in GROUP_NAMES})
            own = todo if kind == "pool" else [-1] * len(todo)
            for i, t in zip(todo, model.terms(std, key, own)):
                cache[(kind, i, key)] = t
        return np.stack([cache[(kind, i, key)] for i in items])

    def add(better: tuple[str, list[int]], worse: tuple[str, list[int]], key: str | None,
            into: list[np.ndarray]) -> None:
        if better[1] and worse[1]:
            a, b = phi(better[0], better[1], key), phi(worse[0], worse[1], key)
            into.append((a[:, None, :] - b[None, :, :]).reshape(-1, n_terms))

    subjects = sorted({k for k in keys if k is not None})
    # love above okay: regardless of subject, and within each subject
    tier_rows: list[np.ndarray] = []
    add(("pool", love), ("pool", okay), None, tier_rows)
    for s in subjects:
        add(("pool", [i for i in love if keys[i] == s]),
            ("pool", [i for i in okay if keys[i] == s]), s, tier_rows)
    # the pool above the negatives: regardless of subject, and asked about the source's
    every = love + okay
    neg_rows: list[np.ndarray] = []
    add(("pool", every), ("neg", list(range(len(negatives)))), None, neg_rows)
    for s in subjects:
        add(("pool", [i for i in every if keys[i] == s]),
            ("neg", [j for j, k in enumerate(neg_keys) if k == s]), s, neg_rows)
    # each painting above its own degraded or form-destroyed copies (confetti must not pay)
    copy_rows: list[np.ndarray] = []
    sources = sorted({i for i, _ in negatives if i >= 0})
    for i in sources:
        copies = [j for j, (src, _) in enumerate(negatives) if src == i]
        add(("pool", [i]), ("neg", copies), keys[i], copy_rows)
        add(("pool", [i]), ("neg", copies), None, copy_rows)
    # the subject asked for above good paintings of other subjects
    subj_rows: list[np.ndarray] = []
    if len(subjects) > 1:
        for s in subjects:
            add(("pool", [i for i in love if keys[i] == s]),
                ("pool", [i for i in love if keys[i] != s]), s, subj_rows)
    kinds = [(np.concatenate(r), KIND_WEIGHTS[name]) for name, r in
             (("tier", tier_rows), ("negative", neg_rows), ("copy", copy_rows),
              ("subject", subj_rows)) if r]
    x = np.concatenate([r for r, _ in kinds])
    sw = np.concatenate([np.full(len(r), w / len(r)) for r, w in kinds])
    sw = sw / sw.sum()
    model.weights = _projected_newton(x, sw, model.constrained(), l2)
    model.fitted_on = {"love": len(love), "okay": len(okay), "negative": len(negatives),
                       "subjects": len(subjects), "pairs": len(x)}
    return model


def _projected_newton(x: np.ndarray, sw: np.ndarray, constrained: np.ndarray,
                      l2: float) -> np.ndarray:
    """Minimise the weighted logistic loss of ``x @ w`` (+ ``l2``) with the ``constrained``
    weights kept >= 0 (an active set: a weight at 0 whose gradient pushes it below stays)."""
    w = np.zeros(x.shape[1])
    w[constrained] = 0.1
    for _ in range(NEWTON_STEPS):
        margin = np.clip(x @ w, -50, 50)
        p = 1.0 / (1.0 + np.exp(-margin))
        grad = -(x.T @ (sw * (1 - p))) + l2 * w
        hess = (x.T * (sw * p * (1 - p))) @ x + l2 * np.eye(x.shape[1])
        free = ~(constrained & (w <= 0) & (grad > 0))
        step = np.zeros_like(w)
        step[free] = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
        w = w - step
        w[constrained] = np.maximum(w[constrained], 0.0)
        if np.abs(step).max() < 1e-7:
            break
    return w


# ---------------------------------------------------------------- the judge


class PoolFittedJudge:
    """A deterministic pairwise judge fitted on a pool and bounded by it (see the module
    docstring). ``compare`` answers like the vision-model judge, from measurements."""

    name = "pool-fitted"

    def __init__(self, model: FittedModel) -> None:
        self.model = model
        self._own = {d: i for i, d in enumerate(model.digests)}
        self._cache: OrderedDict[tuple[str, str | None], float] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def fit(cls, pool: ReferencePool, negatives: Iterable[bytes] | None = None,
            synthetic: bool = True, seed: int = 0, l2: float = L2,
            per_kind: int = FORM_NEGATIVES_PER_KIND) -> PoolFittedJudge:
        """Fit on ``pool`` (its tiers and subjects), its own negatives (a build folder's),
        the negatives it generates from the pool (``per_kind`` of each kind), and
        ``negatives`` (e.g. red-team winners)."""
        paintings = [(p.id, p.tier, p.subject, p.png) for p in pool.paintings
                     if p.tier in ("love", "okay")]
        pngs = [p[3] for p in paintings]
        negs = [(-1, png) for png in pool.negatives]
        negs += [(-1, png) for png in (negatives or ())]
        negs += generated_negatives(pngs, seed, synthetic, per_kind)
        return cls(fit_model(paintings, negs, l2, seed))

    @classmethod
    def fit_cached(cls, pool: ReferencePool, folder: str | Path | None,
                   negatives: Iterable[bytes] | None = None, synthetic: bool = True,
                   seed: int = 0, l2: float = L2, per_kind: int = FORM_NEGATIVES_PER_KIND
                   ) -> PoolFittedJudge:
        """:meth:`fit`, but read from ``folder`` when the same pool was fitted the same way
        before (keyed by :func:`fit_key`); a fresh fit is written there atomically. A cache
        file that cannot be read is fitted again and replaced. ``folder`` None: no cache."""
        if folder is None:
            return cls.fit(pool, negatives, synthetic, seed, l2, per_kind)
        negatives = list(negatives or ())
        key = fit_key(pool, negatives, synthetic, seed, l2, per_kind)
        path = Path(folder) / f"pool-fitted-{key[:24]}.json"
        try:
            data = json.loads(path.read_text())
            if data.get("key") == key:
                return cls(FittedModel.from_dict(data["model"]))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged or foreign file: fit again and replace it
        judge = cls.fit(pool, negatives, synthetic, seed, l2, per_kind)
        from watercolour.io import write_text_atomic

        write_text_atomic(path, json.dumps({"key": key, "model": judge.model.to_dict()}))
        return judge

    def quality(self, png: bytes, subject: str | None = "") -> float:
        """The latent quality of one picture as a painting of ``subject`` (only differences
        mean anything; the pool's own paintings are measured leave-one-out)."""
        digest, key = _digest(png), subject_key(subject)
        with self._lock:
            if (digest, key) in self._cache:
                return self._cache[(digest, key)]
        std = self.model.standardise(measure_groups(png))
        terms = self.model.terms(std, key, [self._own.get(digest, -1)])
        value = float(terms[0] @ self.model.weights)
        with self._lock:
            self._cache[(digest, key)] = value
            if len(self._cache) > 4096:
                self._cache.popitem(last=False)
        return value

    def probability(self, first: bytes, second: bytes, subject: str | None = "") -> float:
        """P(first is the better watercolour of ``subject``)."""
        d = self.quality(first, subject) - self.quality(second, subject)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, d))))

    def compare(self, first: bytes, second: bytes, subject: str = "") -> Vote:
        start = time.monotonic()
        p = self.probability(first, second, subject)
        winner = "first" if p >= 0.5 else "second"
        return Vote(winner, reason=f"P(first better) = {p:.3f} from measurements",
                    latency_s=time.monotonic() - start, probability=round(p, 4))

    def to_json(self) -> str:
        return json.dumps(self.model.to_dict())

    @classmethod
    def from_json(cls, text: str) -> PoolFittedJudge:
        return cls(FittedModel.from_dict(json.loads(text)))


def fit_key(pool: ReferencePool, negatives: Sequence[bytes] = (), synthetic: bool = True,
            seed: int = 0, l2: float = L2, per_kind: int = FORM_NEGATIVES_PER_KIND) -> str:
    """A hash of everything a fit depends on: the pool's paintings (id, tier, subject,
    content), its negatives, the extra ``negatives``, the fit's arguments and settings, and
    the versions of the measurements and of the model."""
    h = hashlib.sha256()
    config = {"feature_version": FEATURE_VERSION, "model_version": MODEL_VERSION,
              "features": list(FEATURES), "groups": list(GROUP_NAMES), "k": K_NEAREST,
              "kind_weights": KIND_WEIGHTS, "min_scale": MIN_SCALE, "newton": NEWTON_STEPS,
              "synthetic_per_painting": SYNTHETIC_PER_PAINTING,
              "max_synthetic": MAX_SYNTHETIC_SOURCES, "synthetic": synthetic, "seed": seed,
              "l2": l2, "per_kind": per_kind}
    h.update(json.dumps(config, sort_keys=True).encode())
    for p in sorted(pool.paintings, key=lambda p: p.id):
        h.update(json.dumps([p.id, p.tier, p.subject, _digest(p.png)]).encode())
    for label, pngs in (("pool-negatives", pool.negatives), ("negatives", negatives)):
        h.update(label.encode())
        for png in pngs:
            h.update(_digest(png).encode())
    return h.hexdigest()


# ---------------------------------------------------------------- held-out accuracy


def held_out_accuracy(pool: ReferencePool, folds: int = 5, seed: int = 0,
                      synthetic: bool = True, per_kind: int = FORM_NEGATIVES_PER_KIND
                      ) -> dict[str, Any]:
    """K-fold by painting (stratified by tier): fit on the other folds, then ask the judge,
    in both orders, every cross-tier pair within the held-out fold (``love_vs_okay``, asked
    regardless of subject), every held-out painting against the build's negatives of that fold
    (``pool_vs_negative``; absent without them) and against negatives generated from the
    held-out paintings and fresh abstract pictures (``pool_vs_generated``)."""
    rng = random.Random(seed)
    items = []
    for tier in ("love", "okay"):  # stratified: every fold holds both tiers
        group = [(p, p.tier) for p in pool.paintings if p.tier == tier]
        rng.shuffle(group)
        items += group
    negatives = list(pool.negatives)
    folds = max(2, min(folds, len(items)))
    kinds = ("love_vs_okay", "pool_vs_negative", "pool_vs_generated")
    right = dict.fromkeys(kinds, 0)
    total = dict.fromkeys(kinds, 0)
    for k in range(folds):
        test = items[k::folds]
        train = [it for i, it in enumerate(items) if i % folds != k]
        train_negs = [n for i, n in enumerate(negatives) if i % folds != k]
        test_negs = [n for i, n in enumerate(negatives) if i % folds == k]
        sub = ReferencePool([p for p, _ in train], pool.source, train_negs)
        try:
            judge = PoolFittedJudge.fit(sub, synthetic=synthetic, seed=seed + k,
                                        per_kind=per_kind)
        except ValueError:
            continue

        def ask(kind: str, better: bytes, worse: bytes, subject: str | None = "",
                judge: PoolFittedJudge = judge) -> None:
            for first, second, first_better in ((better, worse, True), (worse, better, False)):
                vote = judge.compare(first, second, subject or "")
                total[kind] += 1
                right[kind] += int((vote.winner == "first") == first_better)

        for i, (a, ta) in enumerate(test):
            for b, tb in test[i + 1:]:
                if ta != tb:
                    better, worse = (a, b) if ta == "love" else (b, a)
                    ask("love_vs_okay", better.png, worse.png)
        held = [p.png for p, _ in test]
        generated = generated_negatives(held, seed + 1000 + k, synthetic, per_kind)
        for p, _ in test:
            for n in test_negs:
                ask("pool_vs_negative", p.png, n)
        for j, (i, n) in enumerate(generated):
            source = test[i][0] if i >= 0 else test[j % len(test)][0]
            ask("pool_vs_generated", source.png, n, source.subject)
    out: dict[str, Any] = {"folds": folds, "paintings": len(items),
                           "negatives": len(negatives), "tiers": pool.counts()}
    for kind in kinds:
        out[kind] = {"accuracy": round(right[kind] / total[kind], 4) if total[kind] else None,
                     "ordered_pairs": total[kind]}
    n = sum(total.values())
    out["all"] = {"accuracy": round(sum(right.values()) / n, 4) if n else None,
                  "ordered_pairs": n}
    return out
