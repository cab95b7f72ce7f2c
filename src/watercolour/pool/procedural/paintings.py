"""The procedural painter's entry points: a plan written as a sketch, one sketch from a seed, a
negative, and the subjects of a starter pool."""

from __future__ import annotations

from watercolour.pool.procedural.negatives import DRAWN, negative_code
from watercolour.pool.procedural.plan import NEGATIVES, Plan, Sketch, plan_painting, seeded_rng
from watercolour.pool.procedural.writer import write_sketch
from watercolour.pool.subjects import SUBJECTS, subject_phrase


def sketch(plan: Plan) -> str:
    """The plan written as a complete p5.js + p5.brush sketch."""
    return negative_code(plan) if plan.variant in DRAWN else write_sketch(plan)


def negative(kind: str, seed: int, size: int = 512) -> Sketch:
    """A sketch the gates or the judge should reject: one of :data:`NEGATIVES`."""
    if kind not in NEGATIVES:
        raise ValueError(f"unknown negative {kind!r}; choose from {NEGATIVES}")
    plan = plan_painting(seed, variant=kind, size=size)
    return Sketch(sketch(plan), plan.phrase, kind, seed, plan.to_dict())


def generate(
    seed: int,
    subject: str | None = None,
    variant: str | None = None,
    size: int = 512,
    style: str | None = None,
) -> Sketch:
    """One sketch: :func:`plan_painting` then :func:`sketch`."""
    plan = plan_painting(seed, subject=subject, variant=variant, size=size, style=style)
    return Sketch(sketch(plan), plan.phrase, plan.variant, seed, plan.to_dict())


def starter_subjects(n: int, seed: int = 0) -> list[str]:
    """``n`` subject phrases for a starter pool: hibiscus in about a third of them, the other
    flowers sharing the rest; deterministic given ``seed``."""
    rng = seeded_rng("subjects", seed)
    others = [k for k in SUBJECTS if k != "hibiscus"]
    out = []
    for i in range(n):
        key = "hibiscus" if i % 3 == 0 else others[(i - i // 3 - 1) % len(others)]
        subj = SUBJECTS[key]
        out.append(subject_phrase(key, rng.choice(sorted(subj.palettes))))
    return out
