"""The fixed vocabulary of gate violations: every rejection names one or more of these.

The names are stable identifiers (they are logged, counted and plotted); the meanings are what
the book and the CLI show. ``source`` says where a violation is found: in the reply or the code
(``static``), in what the sketch did while it ran (``runtime``), or in the picture (``image``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Violation(str, Enum):
    """One reason to reject a sketch. ``str(v)`` is its name."""

    NO_SKETCH = "no_sketch"
    TOO_LARGE = "too_large"
    TRUNCATED = "truncated"
    SYNTAX_ERROR = "syntax_error"
    MISSING_SETUP = "missing_setup"
    NOT_WEBGL = "not_webgl"
    EXTERNAL_ACCESS = "external_access"
    DOM_ACCESS = "dom_access"
    DYNAMIC_CODE = "dynamic_code"
    TAMPERING = "tampering"
    TIMERS = "timers"
    TEXT_ON_CANVAS = "text_on_canvas"
    BARE_PRIMITIVES = "bare_primitives"
    UNKNOWN_BRUSH_METHOD = "unknown_brush_method"
    NOT_ALLOWLISTED = "not_allowlisted"
    NO_PAINTING_CALLS = "no_painting_calls"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    BLANK_CANVAS = "blank_canvas"
    SHAPELESS = "shapeless"
    NOISE_STORM = "noise_storm"

    def __str__(self) -> str:
        return self.value

    @property
    def meaning(self) -> str:
        return MEANINGS[self]

    @property
    def source(self) -> str:
        return SOURCES[self]


MEANINGS: dict[Violation, str] = {
    Violation.NO_SKETCH: "the reply holds no JavaScript sketch (prose, a refusal, an empty or "
    "comment-only code block)",
    Violation.TOO_LARGE: "the sketch is longer than the gate reads (MAX_SKETCH_CHARS)",
    Violation.TRUNCATED: "the code is cut off: unbalanced brackets, an unterminated string or "
    "comment, or an unfinished last statement",
    Violation.SYNTAX_ERROR: "the code is not valid JavaScript (or is HTML/JSX)",
    Violation.MISSING_SETUP: "no setup() function, so p5 has nothing to start",
    Violation.NOT_WEBGL: "the canvas is not created with createCanvas(w, h, WEBGL); p5.brush "
    "needs WebGL",
    Violation.EXTERNAL_ACCESS: "the sketch loads or sends something outside itself: network, "
    "files, modules, images or fonts, data: URLs, navigation away from the page",
    Violation.DOM_ACCESS: "the sketch adds or rewrites page elements besides p5's canvas "
    "(overlays, HTML text, extra canvases)",
    Violation.DYNAMIC_CODE: "the sketch builds code at run time (eval, Function, setTimeout with a "
    "string): code the gate cannot read",
    Violation.TAMPERING: "the sketch redefines library or browser internals (p5.prototype, brush "
    "methods, toDataURL, getContext, Object.defineProperty on them)",
    Violation.TIMERS: "the sketch schedules drawing outside p5's setup/draw (setInterval, "
    "setTimeout, requestAnimationFrame)",
    Violation.TEXT_ON_CANVAS: "the sketch writes text (p5 text(), canvas fillText/strokeText)",
    Violation.BARE_PRIMITIVES: "the sketch draws with p5's own primitives (ellipse, rect, line, "
    "vertex, image, pixels, ...) or raw canvas/WebGL calls instead of brush.* (counted wherever "
    "its code runs, inside a brush call's arguments too)",
    Violation.UNKNOWN_BRUSH_METHOD: "the sketch calls a brush.* method that p5.brush does not have",
    Violation.NOT_ALLOWLISTED: "(allowlist mode) the sketch calls a real p5.brush method outside "
    "the prompt's 10, or reaches a member of the global object, p5 or brush by a name the gate "
    "cannot read (a computed key)",
    Violation.NO_PAINTING_CALLS: "the sketch never calls a brush method that paints (circle, "
    "endShape, rect, polygon, line, ...)",
    Violation.TIMEOUT: "the render did not finish its first frame before the deadline",
    Violation.CRASHED: "the sketch crashed its page (e.g. ran out of memory)",
    Violation.BLANK_CANVAS: "the render is blank or nearly so: paint covers less than the paint "
    "floor (if the sketch threw before painting, its error is attached)",
    Violation.SHAPELESS: "paint covers a large part of the canvas without a visible shape edge: "
    "a flood fill, a uniform (dark) slick, a wash with nothing on it",
    Violation.NOISE_STORM: "most of the paint is specks (marks that fit in a 12 px box) scattered "
    "over the canvas, not shapes",
}

SOURCES: dict[Violation, str] = {
    **{v: "static" for v in (
        Violation.NO_SKETCH, Violation.TOO_LARGE, Violation.TRUNCATED, Violation.SYNTAX_ERROR,
        Violation.MISSING_SETUP, Violation.UNKNOWN_BRUSH_METHOD, Violation.TIMERS,
    )},
    **{v: "static+runtime" for v in (
        Violation.NOT_WEBGL, Violation.EXTERNAL_ACCESS, Violation.DOM_ACCESS,
        Violation.DYNAMIC_CODE, Violation.TAMPERING, Violation.TEXT_ON_CANVAS,
        Violation.BARE_PRIMITIVES, Violation.NOT_ALLOWLISTED, Violation.NO_PAINTING_CALLS,
    )},
    **{v: "runtime" for v in (Violation.TIMEOUT, Violation.CRASHED)},
    **{v: "image" for v in (Violation.BLANK_CANVAS, Violation.SHAPELESS, Violation.NOISE_STORM)},
}

VOCABULARY: dict[str, str] = {v.value: MEANINGS[v] for v in Violation}
"""name -> meaning, in the fixed order of :class:`Violation`."""

ORDER = {v: i for i, v in enumerate(Violation)}


@dataclass(frozen=True)
class Finding:
    """One violation with the evidence for it (one line, for people)."""

    violation: Violation
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"violation": self.violation.value, "detail": self.detail}


def ordered(findings: list[Finding]) -> list[Finding]:
    """One finding per violation (details of repeats joined), in vocabulary order."""
    merged: dict[Violation, list[str]] = {}
    for f in findings:
        details = merged.setdefault(f.violation, [])
        if f.detail and f.detail not in details:
            details.append(f.detail)
    return [Finding(v, "; ".join(merged[v])) for v in sorted(merged, key=ORDER.__getitem__)]
