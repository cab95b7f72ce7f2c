"""The embedded default judge: a pool-fitted taste model. No vision model, no network.

:class:`PoolFittedJudge` is a Bradley-Terry model over image measurements
(:mod:`watercolour.rewards.features`: coverage, lightness, colour and saturation, edge
softness / bleed, texture, layering, translucency, composition). Each picture gets a latent
quality ``s(x) = w . phi(x)``, where ``phi`` holds the standardised measurements and their
squares (so "enough paint, but not a flooded sheet" can be learned); the probability that
the first picture is the better one is ``sigmoid(s(first) - s(second))``; the judge answers
whichever is more likely (a tie goes to the first). It answers the same question as the
vision-model judge and never fails.

It is fitted, deterministically (Newton's method on an L2-regularised logistic loss), on
ordered pairs from the pool: every ``love`` above every ``okay``, and both tiers above the
**negatives**: the build folder's negative renders when there are any, and degraded copies
of the pool's own paintings (washed out to near-blank, greyed, darkened to mud), which need
no browser. Pairs are weighted so that each kind (love/okay, pool/negative) counts the same.

What it learns is only what the pool's tiers and the negatives say. On a starter pool tiered
by the synthetic rule (:mod:`watercolour.pool.tiers`: a score computed from similar
measurements), the held-out accuracy on love/okay pairs is partly circular; on a pool a person
rated it measures how much of that person's taste the measurements can express.
"""

from __future__ import annotations

import io
import json
import math
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from watercolour.rewards.features import FEATURES, feature_vector, normalise
from watercolour.rewards.judge.base import Vote
from watercolour.rewards.references import ReferencePool

L2 = 0.1
"""Ridge penalty on the weights (the loss is a weighted mean over pairs; the model needs no
intercept, pairs cancel it)."""
SYNTHETIC_PER_PAINTING = 3
MAX_SYNTHETIC_SOURCES = 48
"""At most this many pool paintings are degraded into synthetic negatives (fit time)."""
NEWTON_STEPS = 30


@dataclass(frozen=True)
class FittedModel:
    """Standardisation and weights of a fitted judge (plain data: JSON round-trips)."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    weights: tuple[float, ...]
    """Linear weights, then quadratic weights, over the standardised measurements."""
    fitted_on: dict[str, int]

    def phi(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - np.array(self.mean)) / np.array(self.std)
        z = np.clip(z, -6, 6)
        return np.concatenate([z, 0.5 * z ** 2], axis=1)

    def quality(self, x: np.ndarray) -> np.ndarray:
        return self.phi(x) @ np.array(self.weights)

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "mean": list(self.mean), "std": list(self.std),
                "weights": list(self.weights), "fitted_on": dict(self.fitted_on)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FittedModel:
        return cls(tuple(data["names"]), tuple(data["mean"]), tuple(data["std"]),
                   tuple(data["weights"]), dict(data.get("fitted_on", {})))

    def importance(self) -> dict[str, float]:
        """Linear weight per measurement (standardised units): what the judge rewards."""
        n = len(self.names)
        return {name: round(self.weights[i], 4) for i, name in enumerate(self.names[:n])}


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
                        limit: int = MAX_SYNTHETIC_SOURCES) -> list[bytes]:
    rng = random.Random(seed)
    sources = list(pngs)
    if len(sources) > limit:
        sources = rng.sample(sources, limit)
    return [degrade(p, kind) for i, p in enumerate(sources)
            for kind in (DEGRADATIONS[i % 3], DEGRADATIONS[(i + 1) % 3])]


# ---------------------------------------------------------------- fitting


def _pairs(groups: dict[str, np.ndarray]) -> list[tuple[np.ndarray, float]]:
    """(difference rows better - worse, weight of each row) per kind of pair."""
    out = []
    order = [("love", "okay"), ("love", "negative"), ("okay", "negative")]
    for better, worse in order:
        a, b = groups.get(better), groups.get(worse)
        if a is None or b is None or not len(a) or not len(b):
            continue
        diff = (a[:, None, :] - b[None, :, :]).reshape(-1, a.shape[1])
        out.append((diff, 1.0 / len(diff)))
    return out


def fit_model(features: dict[str, np.ndarray], l2: float = L2) -> FittedModel:
    """Fit on measurements grouped by tier (``love``, ``okay``, ``negative``)."""
    every = np.concatenate([v for v in features.values() if len(v)])
    mean = every.mean(axis=0)
    std = every.std(axis=0)
    std = np.where(std < 1e-6, 1.0, std)
    draft = FittedModel(FEATURES, tuple(mean), tuple(std), (), {})
    groups = {k: draft.phi(v) for k, v in features.items() if len(v)}
    blocks = _pairs(groups)
    if not blocks:
        raise ValueError("the judge needs at least two tiers (love, okay, or negatives) "
                         "to learn from")
    x = np.concatenate([d for d, _ in blocks])
    sw = np.concatenate([np.full(len(d), w) for d, w in blocks])
    sw = sw / sw.sum()
    w = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        margin = x @ w
        p = 1.0 / (1.0 + np.exp(-margin))  # P(better wins)
        grad = -(x.T @ (sw * (1 - p))) + l2 * w
        hess = (x.T * (sw * p * (1 - p))) @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-8:
            break
    counts = {k: len(v) for k, v in features.items()}
    return FittedModel(FEATURES, tuple(float(v) for v in mean), tuple(float(v) for v in std),
                       tuple(float(v) for v in w), counts)


class PoolFittedJudge:
    """A deterministic pairwise judge fitted on a pool's tiers and negatives (see the module
    docstring). ``compare`` answers like the vision-model judge, from measurements."""

    name = "pool-fitted"

    def __init__(self, model: FittedModel) -> None:
        self.model = model

    @classmethod
    def fit(cls, pool: ReferencePool, negatives: Iterable[bytes] | None = None,
            synthetic: bool = True, seed: int = 0, l2: float = L2) -> PoolFittedJudge:
        """Fit on ``pool`` (its tiers), ``negatives`` (default: the pool's own, from a build
        folder) and, when ``synthetic``, degraded copies of the pool's paintings."""
        love = [p.png for p in pool.tier("love")]
        okay = [p.png for p in pool.tier("okay")]
        negs = list(pool.negatives if negatives is None else negatives)
        if synthetic:
            negs += synthetic_negatives(love + okay, seed)
        feats = {"love": _matrix(love), "okay": _matrix(okay), "negative": _matrix(negs)}
        return cls(fit_model(feats, l2))

    def quality(self, png: bytes) -> float:
        """The latent quality of one picture (only differences mean anything)."""
        return float(self.model.quality(feature_vector(png))[0])

    def probability(self, first: bytes, second: bytes) -> float:
        """P(first is the better watercolour)."""
        d = self.quality(first) - self.quality(second)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, d))))

    def compare(self, first: bytes, second: bytes, subject: str = "") -> Vote:
        start = time.monotonic()
        p = self.probability(first, second)
        winner = "first" if p >= 0.5 else "second"
        return Vote(winner, reason=f"P(first better) = {p:.3f} from measurements",
                    latency_s=time.monotonic() - start, probability=round(p, 4))

    def to_json(self) -> str:
        return json.dumps(self.model.to_dict())

    @classmethod
    def from_json(cls, text: str) -> PoolFittedJudge:
        return cls(FittedModel.from_dict(json.loads(text)))


def _matrix(pngs: Sequence[bytes]) -> np.ndarray:
    if not pngs:
        return np.zeros((0, len(FEATURES)))
    return np.stack([feature_vector(p) for p in pngs])


# ---------------------------------------------------------------- held-out accuracy


def held_out_accuracy(pool: ReferencePool, folds: int = 5, seed: int = 0,
                      synthetic: bool = True) -> dict[str, Any]:
    """K-fold by painting: fit on the other folds, then ask the judge every cross-tier pair
    within the held-out fold, in both orders. Reports the share it gets right per kind:
    ``love_vs_okay``, ``pool_vs_negative`` (the build's real negatives, split by fold like the
    paintings; absent without them) and ``all``."""
    rng = random.Random(seed)
    items = [(p.png, p.tier) for p in pool.paintings]
    items += [(n, "negative") for n in pool.negatives]
    rng.shuffle(items)
    folds = max(2, min(folds, len(items)))
    right: dict[str, int] = {"love_vs_okay": 0, "pool_vs_negative": 0}
    total: dict[str, int] = {"love_vs_okay": 0, "pool_vs_negative": 0}
    rank = {"love": 2, "okay": 1, "negative": 0}
    for k in range(folds):
        test = items[k::folds]
        train = [it for i, it in enumerate(items) if i % folds != k]
        by_tier: dict[str, list[bytes]] = {"love": [], "okay": [], "negative": []}
        for png, tier in train:
            by_tier[tier].append(png)
        negs = by_tier["negative"]
        if synthetic:
            negs = negs + synthetic_negatives(by_tier["love"] + by_tier["okay"], seed + k)
        try:
            model = fit_model({"love": _matrix(by_tier["love"]), "okay": _matrix(by_tier["okay"]),
                               "negative": _matrix(negs)})
        except ValueError:
            continue
        judge = PoolFittedJudge(model)
        for i, (a, ta) in enumerate(test):
            for b, tb in test[i + 1:]:
                if rank[ta] == rank[tb]:
                    continue
                kind = "love_vs_okay" if {ta, tb} == {"love", "okay"} else "pool_vs_negative"
                better_first = rank[ta] > rank[tb]
                for first, second, first_better in ((a, b, better_first), (b, a, not better_first)):
                    vote = judge.compare(first, second)
                    total[kind] += 1
                    right[kind] += int((vote.winner == "first") == first_better)
    out: dict[str, Any] = {"folds": folds, "paintings": len(pool.paintings),
                           "negatives": len(pool.negatives), "tiers": pool.counts()}
    for kind in total:
        out[kind] = {"accuracy": round(right[kind] / total[kind], 4) if total[kind] else None,
                     "ordered_pairs": total[kind]}
    n = sum(total.values())
    out["all"] = {"accuracy": round(sum(right.values()) / n, 4) if n else None,
                  "ordered_pairs": n}
    return out
