"""The procedural painter: writes p5.brush sketches itself, no model and no network.

It is the starter pool's painter (the embedded default of pool building), the source of the
negatives the gates and the offline judge are tested on, and later the supervised warm-start
data of the tiny policy. Every sketch uses only the ten allowlisted brush methods.

A painting is described by a :class:`Plan` (subject, palette, composition, layering, and the
flaws of its variant); :func:`sketch` writes the plan as JavaScript in one of three code
styles; :func:`revise` applies a critic's issues to a plan, which is how the painter takes part
in the three refinement rounds. Everything is deterministic given the seed.

Variants:

- ``good``: a large translucent wash on every petal, then a smaller, more opaque glaze inside,
  then a small dark accent; a composed, centred flower with leaves.
- ``flat`` (one opaque pass, no layering), ``muddy`` (over-mixed colours), ``sparse`` (a small
  flower lost on the paper), ``dark`` (over-dark, heavy paint), ``off_centre`` (the flower
  pushed against an edge): weaker paintings, as a model's first tries often are.

Negatives (:data:`NEGATIVES`): ``blank``, ``blob``, ``scribble``, ``faint``, ``grey``,
``off_canvas``.

Modules, one job each: :mod:`~.plan` (variants, the plan, revisions), :mod:`~.scene` (geometry),
:mod:`~.writer` (JavaScript in three styles), :mod:`~.negatives` (the drawn negatives) and
:mod:`~.paintings` (the entry points).
"""

from watercolour.pool.procedural.paintings import generate, negative, sketch, starter_subjects
from watercolour.pool.procedural.plan import (
    ISSUES,
    NEGATIVES,
    SHAPE_BUDGET,
    STYLES,
    VARIANT_CYCLE,
    VARIANTS,
    WEAK_VARIANTS,
    Plan,
    Sketch,
    plan_painting,
    revise,
)
from watercolour.pool.procedural.scene import build_scene

__all__ = [
    "ISSUES",
    "NEGATIVES",
    "SHAPE_BUDGET",
    "STYLES",
    "VARIANTS",
    "VARIANT_CYCLE",
    "WEAK_VARIANTS",
    "Plan",
    "Sketch",
    "build_scene",
    "generate",
    "negative",
    "plan_painting",
    "revise",
    "sketch",
    "starter_subjects",
]
