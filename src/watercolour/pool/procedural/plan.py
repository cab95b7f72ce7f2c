"""Planning a painting: the variants, the :class:`Plan` that decides a painting, and how a
critic's issues revise it. Deterministic given the seed."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from watercolour.pool.subjects import PAPERS, SUBJECTS, find_subject, subject_phrase

VARIANTS: tuple[str, ...] = ("good", "flat", "muddy", "sparse", "dark", "off_centre")
WEAK_VARIANTS: tuple[str, ...] = VARIANTS[1:]
NEGATIVES: tuple[str, ...] = ("blank", "blob", "scribble", "faint", "grey", "off_canvas")
STYLES: tuple[str, ...] = ("unrolled", "helpers", "loop")
"""Code styles: every vertex written out; helper functions called once per petal; data
arrays walked by loops."""

VARIANT_CYCLE: tuple[str, ...] = (
    "good", "flat", "good", "muddy", "good", "sparse", "good", "dark", "good", "off_centre",
)
"""The variant of seed ``s`` is ``VARIANT_CYCLE[s % 10]``: half good, half one of the flaws."""

SHAPE_BUDGET = 48
"""Roughly the most filled shapes one sketch paints (render time grows with it)."""


@dataclass
class Plan:
    """Everything that decides one painting. Plain data (JSON-serialisable)."""

    subject: str
    palette: str
    variant: str = "good"
    seed: int = 0
    size: int = 512
    style: str = "helpers"
    paper: str = PAPERS[0]
    n_flowers: int = 1
    n_petals: int = 5
    layers: int = 3
    """Passes per petal: 1 flat, 2 wash + glaze, 3 wash + glaze + accent."""
    scale: float = 1.0
    """Flower size relative to the subject's usual size."""
    offset: tuple[float, float] = (0.0, 0.0)
    """Where the main flower sits, as a fraction of the canvas from its centre."""
    alpha: float = 1.0
    """Opacity multiplier for every fill."""
    leaves: int = 2
    stem: bool = False
    mud: float = 0.0
    """How far every colour is mixed towards mud (0 clean, 1 all mud)."""
    dark: float = 0.0
    """How far every colour is darkened towards black."""
    grey: bool = False
    bleed: float = 0.3
    """Bleed of the first wash; later passes bleed less."""
    revisions: list[str] = field(default_factory=list)
    """The critic's issues this plan has already been revised for, in order."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["offset"] = list(self.offset)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        data = dict(data)
        data["offset"] = tuple(data.get("offset", (0.0, 0.0)))
        return cls(**data)

    @property
    def phrase(self) -> str:
        return subject_phrase(self.subject, self.palette)


@dataclass(frozen=True)
class Sketch:
    """A sketch the procedural painter wrote."""

    code: str
    subject: str
    """The phrase it paints: ``"a peach hibiscus"``."""
    variant: str
    seed: int
    plan: dict[str, Any]


def seeded_rng(*parts: object) -> random.Random:
    """A generator seeded by a string of parts: deterministic across runs and platforms."""
    return random.Random("/".join(str(p) for p in parts))


def plan_painting(
    seed: int,
    subject: str | None = None,
    variant: str | None = None,
    size: int = 512,
    style: str | None = None,
) -> Plan:
    """The plan for painting ``seed``.

    Args:
        seed: decides everything not given explicitly.
        subject: a phrase (``"a peach hibiscus"``) or a subject key; None picks one (hibiscus
            twice as often as any other).
        variant: one of :data:`VARIANTS` or :data:`NEGATIVES`; None takes
            ``VARIANT_CYCLE[seed % 10]``.
        size: canvas side in pixels.
        style: one of :data:`STYLES`; None picks one.
    """
    rng = seeded_rng("plan", seed)
    if subject is None:
        keys = ["hibiscus", *SUBJECTS]
        subj = SUBJECTS[rng.choice(keys)]
        palette = rng.choice(sorted(subj.palettes))
    else:
        subj, named = (SUBJECTS[subject], None) if subject in SUBJECTS else find_subject(subject)
        palette = named or rng.choice(sorted(subj.palettes))
    if variant is None:
        variant = VARIANT_CYCLE[seed % len(VARIANT_CYCLE)]
    if variant not in VARIANTS and variant not in NEGATIVES:
        raise ValueError(f"unknown variant {variant!r}; choose from {VARIANTS + NEGATIVES}")
    if style is None:
        style = rng.choice(STYLES)
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose from {STYLES}")
    if size < 64:
        raise ValueError(f"canvas size must be at least 64 pixels, got {size}")

    plan = Plan(
        subject=subj.key, palette=palette, variant="good", seed=seed, size=size, style=style,
        paper=rng.choice(PAPERS),
        n_flowers=rng.randint(*subj.flowers),
        n_petals=rng.randint(*subj.petals),
        layers=3 if subj.arrangement != "branch" else 2,
        scale=rng.uniform(0.92, 1.08),
        offset=(rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.04)),
        alpha=1.0,
        leaves=rng.randint(*subj.leaves),
        stem=subj.stem,
        bleed=rng.uniform(0.28, 0.4),
    )
    return _apply_variant(plan, variant, rng)


def _apply_variant(plan: Plan, variant: str, rng: random.Random) -> Plan:
    p = replace(plan, variant=variant)
    if variant == "flat":
        p.layers, p.bleed = 1, 0.06
    elif variant == "muddy":
        p.mud = rng.uniform(0.6, 0.8)
    elif variant == "sparse":
        p.scale, p.n_flowers, p.leaves, p.layers = rng.uniform(0.32, 0.42), 1, 0, 1
        p.stem = False
        p.n_petals = max(3, SUBJECTS[p.subject].petals[0] - 1)
        p.alpha = 0.75
    elif variant == "dark":
        p.dark, p.alpha = rng.uniform(0.6, 0.72), 1.7
    elif variant == "off_centre":
        p.offset = (rng.choice((-1, 1)) * rng.uniform(0.33, 0.4),
                    rng.choice((-1, 1)) * rng.uniform(0.3, 0.38))
        p.n_flowers = 1
    elif variant == "faint":
        p.alpha, p.scale, p.layers, p.leaves = 0.3, 0.7, 1, 0
    elif variant == "grey":
        p.grey = True
    elif variant == "off_canvas":
        p.offset = (rng.choice((-1, 1)) * 1.15, rng.choice((-1, 1)) * 1.1)
        p.n_flowers, p.leaves, p.stem = 1, 0, False
    return p


ISSUES: tuple[str, ...] = (
    "blank", "faint", "sparse", "crowded", "dark", "muddy", "grey", "flat", "off_centre",
)
"""What a critic can say is wrong, as the procedural painter understands it."""


def revise(plan: Plan, issues: list[str]) -> Plan:
    """The plan after taking the critic's ``issues`` on board (at most two fixes a round,
    the first-listed first): how the procedural painter refines across rounds."""
    p = replace(plan, revisions=[*plan.revisions])
    fixed = 0
    for issue in issues:
        if fixed == 2:
            break
        if issue in ("sparse", "faint", "blank"):
            p.scale = min(1.0, p.scale * 1.7 + 0.1)
            p.alpha = min(1.0, max(p.alpha * 1.5, 0.85))
            p.leaves = max(p.leaves, 1)
            p.layers = max(p.layers, 2)
        elif issue == "crowded":
            p.scale *= 0.85
        elif issue == "dark":
            p.dark *= 0.3
            p.alpha = min(p.alpha, 1.0) * 0.9
        elif issue in ("muddy", "grey"):
            p.mud *= 0.3
            p.grey = False
        elif issue == "flat":
            p.layers = min(3, p.layers + 1)
            p.bleed = max(p.bleed, 0.3)
        elif issue == "off_centre":
            p.offset = (p.offset[0] * 0.35, p.offset[1] * 0.35)
        else:
            continue
        p.revisions.append(issue)
        fixed += 1
    return p
