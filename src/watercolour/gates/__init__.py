"""Gates: is this a sketch that used the watercolour library to put real paint on the canvas?

>>> from watercolour.gates import check
>>> with Renderer(workers=1) as renderer:
...     verdict = check(reply, renderer, mode="library")
...     verdict.passed, verdict.violations, verdict.reasons

Modules, one job each: :mod:`~watercolour.gates.extract` (reply -> sketch),
:mod:`~watercolour.gates.inventory` (static inventory from the JavaScript parser),
:mod:`~watercolour.gates.image` (paint, shape edges, specks), :mod:`~watercolour.gates.violations`
(the vocabulary), :mod:`~watercolour.gates.verdict` (the decision) and
:mod:`~watercolour.gates.fixtures` (the shipped fixtures with their expected verdicts, and
``matches_expected``). The brush API they check
against (the real methods, the 10-method allowlist) is :mod:`watercolour.render.brush`,
re-exported here.
"""

from watercolour.gates.extract import Extraction, extract_sketch
from watercolour.gates.fixtures import Expected, expected_verdicts, matches_expected
from watercolour.gates.image import Floors, ImageMeasures, image_measures, measure_rgb
from watercolour.gates.inventory import MAX_SKETCH_CHARS, Inventory, take_inventory
from watercolour.gates.verdict import MODES, GateConfig, GateVerdict, assess, check
from watercolour.gates.violations import VOCABULARY, Finding, Violation
from watercolour.render.brush import (
    ALLOWLIST,
    FILLED_SHAPE_METHODS,
    PAINTING_METHODS,
    brush_methods,
    bundle_exports,
)

__all__ = [
    "ALLOWLIST",
    "FILLED_SHAPE_METHODS",
    "MAX_SKETCH_CHARS",
    "MODES",
    "PAINTING_METHODS",
    "VOCABULARY",
    "Expected",
    "Extraction",
    "Finding",
    "Floors",
    "GateConfig",
    "GateVerdict",
    "ImageMeasures",
    "Inventory",
    "Violation",
    "assess",
    "brush_methods",
    "bundle_exports",
    "check",
    "expected_verdicts",
    "extract_sketch",
    "image_measures",
    "matches_expected",
    "measure_rgb",
    "take_inventory",
]
