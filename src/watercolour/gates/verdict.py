"""The gate's verdict: is this a sketch that used the watercolour library to put real paint on
the canvas?

:func:`check` runs the whole gate on a model's reply: extract the sketch, take its static
inventory, and — when nothing static already rejects it — render it and read the runtime
evidence and the picture. :func:`assess` is the decision alone, a pure function of what was
found (no browser), so a verdict can be re-decided under another mode or floor without
rendering again (:meth:`GateVerdict.for_mode`).

Three outcomes, never two (``status``): ``ok`` (admitted), ``rejected`` (the sketch's fault:
the reward is 0, with the violations) and ``unavailable`` (the browser failed twice:
``infrastructure_failure`` is set and the reward must be ``None``, not 0).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from watercolour import settings
from watercolour.gates.extract import Extraction, extract_sketch
from watercolour.gates.image import Floors, ImageMeasures, image_measures
from watercolour.gates.inventory import MAX_SKETCH_CHARS, Inventory, take_inventory
from watercolour.gates.violations import Finding, Violation, ordered
from watercolour.render.attempts import SketchRenderer, render_attempts
from watercolour.render.brush import ALLOWLIST, PAINTING_METHODS
from watercolour.render.result import RenderResult
from watercolour.settings import setting

Mode = Literal["library", "allowlist"]
MODES: tuple[str, ...] = typing.get_args(Mode)
Status = Literal["ok", "rejected", "unavailable"]
RENDER_ATTEMPTS = 2
"""A render that fails for infrastructure reasons is retried once."""
CLASS_PAINTING_METHODS = frozenset({"show", "draw", "fill", "hatch"})
"""Methods of p5.brush's classes (``Polygon.show``, ``Plot.draw``) that paint: the harness counts
them as ``Class.method`` when the sketch calls them."""


@dataclass(frozen=True)
class GateConfig:
    """The gate's setting that a run chooses (the image floors are :class:`Floors`)."""

    mode: Mode = setting("library", env="WATERCOLOUR_GATE_MODE",
                         help="library: any real p5.brush method; allowlist: only the prompt's 10")

    def __post_init__(self) -> None:
        settings.check(self)  # mode: one of the Literal's values

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> GateConfig:
        """The default, then ``WATERCOLOUR_GATE_MODE``, then explicit (non-None) overrides."""
        return settings.from_env(cls, environ, **overrides)


@dataclass
class GateVerdict:
    """Everything the gate found about one reply, and its decision."""

    passed: bool
    violations: list[str]
    """Violation names (see ``watercolour.gates.VOCABULARY``), in vocabulary order."""
    findings: list[Finding]
    """One per violation, with its evidence."""
    mode: str
    extraction: Extraction
    inventory: Inventory | None
    render: RenderResult | None
    """None when the render was skipped (the sketch was already rejected statically)."""
    image: ImageMeasures | None
    n_shapes: int
    paint_fraction: float
    infrastructure_failure: bool
    notes: list[str] = field(default_factory=list)
    """Facts that do not reject: an error thrown after painting, methods outside the allowlist
    in library mode, a missing closing fence."""
    floors: Floors = field(default_factory=Floors)
    attempts: int = 0
    """Renders tried (0, 1, or 2 after an infrastructure failure)."""

    @property
    def status(self) -> Status:
        if self.infrastructure_failure:
            return "unavailable"
        return "ok" if self.passed else "rejected"

    @property
    def sketch(self) -> str | None:
        return self.extraction.code

    @property
    def reasons(self) -> dict[str, str]:
        return {f.violation.value: f.detail for f in self.findings}

    @property
    def methods_used(self) -> dict[str, int]:
        """brush methods the sketch called: counted in the browser when it ran, else its call
        sites in the code."""
        if self.render is not None and self.render.evidence.get("brush_calls") is not None \
                and not self.render.infrastructure_failure:
            return dict(sorted(self.render.evidence["brush_calls"].items()))
        if self.inventory is None:
            return {}
        return dict(sorted(self.inventory.counts("brush_calls").items()))

    @property
    def outside_allowlist(self) -> list[str]:
        """Real p5.brush methods used that the prompt's 10 do not include (either mode)."""
        used = set(self.methods_used)
        if self.inventory is not None:
            used |= set(self.inventory.brush_calls)
        return sorted(m for m in used if m not in ALLOWLIST)

    @property
    def error(self) -> str | None:
        """The sketch's first JavaScript error, if it ran and threw."""
        return self.render.error if self.render is not None else None

    def for_mode(self, mode: Mode, floors: Floors | None = None) -> GateVerdict:
        """The same evidence decided under another mode (and floors), without rendering."""
        return assess(self.extraction, self.inventory, self.render, mode=mode,
                      floors=floors or self.floors, attempts=self.attempts, image=self.image)

    def summary(self) -> str:
        """One line for people."""
        if self.status == "unavailable":
            return "UNAVAILABLE: the browser failed twice (infrastructure, not the sketch)"
        if self.passed:
            return (f"PASSED ({self.mode}): {self.n_shapes} filled shapes, "
                    f"paint {self.paint_fraction:.3f}")
        return "REJECTED: " + "; ".join(f"{f.violation.value} ({f.detail})" if f.detail
                                        else f.violation.value for f in self.findings)

    def to_dict(self, include_sketch: bool = True) -> dict[str, Any]:
        """Plain, JSON-serialisable fields."""
        data: dict[str, Any] = {
            "passed": self.passed,
            "status": self.status,
            "mode": self.mode,
            "violations": list(self.violations),
            "reasons": self.reasons,
            "notes": list(self.notes),
            "n_shapes": self.n_shapes,
            "paint_fraction": self.paint_fraction,
            "infrastructure_failure": self.infrastructure_failure,
            "methods_used": self.methods_used,
            "outside_allowlist": self.outside_allowlist,
            "n_outside_allowlist": len(self.outside_allowlist),
            "error": self.error,
            "image": self.image.to_dict() if self.image is not None else None,
            "floors": asdict(self.floors),
            "attempts": self.attempts,
            "extraction": {k: v for k, v in self.extraction.to_dict().items() if k != "code"},
            "inventory": self.inventory.to_dict() if self.inventory is not None else None,
            "render": self.render.to_dict() if self.render is not None else None,
        }
        if include_sketch:
            data["sketch"] = self.sketch
        return data


# -------------------------------------------------------------------- the whole gate
def check(
    reply: str,
    renderer: SketchRenderer,
    mode: Mode = "library",
    paint_floor: float | None = None,
    *,
    floors: Floors | None = None,
    seed: int = 0,
    deadline_s: float | None = None,
    render_rejected: bool = False,
) -> GateVerdict:
    """Run the gate on a model's reply (or a bare sketch).

    Args:
        reply: the model's raw reply, or the sketch itself.
        renderer: anything with ``render(code, seed) -> RenderResult``.
        mode: ``library`` admits any real p5.brush method; ``allowlist`` only the prompt's 10.
        paint_floor: minimum paint fraction (default :class:`Floors`'); a shorthand for
            ``floors=Floors(paint_floor=...)``: give one or the other, not both.
        floors: all image thresholds (default :class:`Floors`).
        seed: the render seed.
        deadline_s: this render's deadline (default: the renderer's own).
        render_rejected: render even when static checks already reject the sketch (to show
            it, e.g. in the book); the decision does not depend on it unless the render adds
            violations of its own.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if paint_floor is not None and floors is not None:
        raise ValueError("give paint_floor or floors (with its paint_floor), not both")
    floors = floors or (Floors() if paint_floor is None else Floors(paint_floor=paint_floor))
    extraction = extract_sketch(reply)
    inventory = take_inventory(extraction.code) if extraction.code is not None else None
    static = static_findings(extraction, inventory, mode)
    render: RenderResult | None = None
    attempts = 0
    can_run = extraction.code is not None and inventory is not None and not inventory.too_large
    if can_run and (not static or render_rejected):
        assert extraction.code is not None
        render, attempts = render_attempts(renderer, extraction.code, seed,
                                           attempts=RENDER_ATTEMPTS, deadline_s=deadline_s)
    return assess(extraction, inventory, render, mode=mode, floors=floors, attempts=attempts)


# -------------------------------------------------------------------- the decision
def assess(
    extraction: Extraction,
    inventory: Inventory | None,
    render: RenderResult | None,
    mode: Mode = "library",
    floors: Floors | None = None,
    attempts: int = 0,
    image: ImageMeasures | None = None,
) -> GateVerdict:
    """Decide from what was found (no browser): static findings first, then, when there is
    a usable render, runtime and image findings."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    floors = floors or Floors()
    findings = static_findings(extraction, inventory, mode)
    notes = static_notes(extraction, inventory, mode)
    infrastructure_failure = False
    n_shapes = 0
    if render is not None and render.infrastructure_failure:
        # the browser failed, not the sketch: unjudgeable unless the code already failed
        infrastructure_failure = not findings
        notes.append(f"infrastructure: {render.infra_error}")
    elif render is not None:
        if image is None and render.png is not None:
            image = image_measures(render.png)
        n_shapes = int(render.evidence.get("n_shapes", 0) or 0)
        run_findings, run_notes = runtime_findings(inventory, render, image, mode, floors)
        findings += run_findings
        notes += run_notes
    findings = ordered(findings)
    paint = image.paint_fraction if image is not None else (
        render.paint_fraction if render is not None and render.png is not None else 0.0)
    passed = not findings and not infrastructure_failure and render is not None
    return GateVerdict(
        passed=passed,
        violations=[f.violation.value for f in findings],
        findings=findings,
        mode=mode,
        extraction=extraction,
        inventory=inventory,
        render=render,
        image=image,
        n_shapes=n_shapes,
        paint_fraction=paint,
        infrastructure_failure=infrastructure_failure,
        notes=notes,
        floors=floors,
        attempts=attempts,
    )


def _where(table: dict[str, list[int]], limit: int = 4) -> str:
    parts = []
    for name, lines in list(table.items())[:limit]:
        times = f" x{len(lines)}" if len(lines) > 1 else ""
        parts.append(f"{name}{times} (line {lines[0]})")
    more = len(table) - limit
    return ", ".join(parts) + (f", and {more} more" if more > 0 else "")


def static_findings(extraction: Extraction, inventory: Inventory | None,
                    mode: Mode) -> list[Finding]:
    """Violations found in the reply and the code alone."""
    V = Violation
    if extraction.code is None or inventory is None:
        return [Finding(V.NO_SKETCH, extraction.reason)]
    inv = inventory
    found: list[Finding] = []
    if inv.too_large:
        found.append(Finding(V.TOO_LARGE, f"{inv.n_chars} characters > {MAX_SKETCH_CHARS}"))
    if inv.truncated:
        cut = "the reply's code fence is never closed; " if (
            extraction.kind == "unclosed_fence") else ""
        return [*found, Finding(V.TRUNCATED, cut + inv.truncated)]
    if inv.syntax_errors:
        shown = "; ".join(inv.syntax_errors[:3])
        more = len(inv.syntax_errors) - 3
        return [*found, Finding(V.SYNTAX_ERROR, shown + (f"; {more} more" if more > 0 else ""))]
    if not inv.has_setup:
        found.append(Finding(V.MISSING_SETUP, "no function setup() is defined"))
    if inv.webgl is False:
        if not inv.canvases:
            detail = "createCanvas is never called (p5's default canvas is 2D)"
        else:
            bad = next(c for c in inv.canvases if c["webgl"] is False)
            detail = f"createCanvas{bad['args']} on line {bad['line']} is not WEBGL"
        found.append(Finding(V.NOT_WEBGL, detail))
    for table, violation in (
        (inv.external, V.EXTERNAL_ACCESS), (inv.dom, V.DOM_ACCESS),
        (inv.dynamic_code, V.DYNAMIC_CODE), (inv.tampering, V.TAMPERING),
        (inv.timers, V.TIMERS), (inv.text, V.TEXT_ON_CANVAS),
        (inv.p5_primitives, V.BARE_PRIMITIVES), (inv.raw_canvas, V.BARE_PRIMITIVES),
    ):
        if table:
            found.append(Finding(violation, _where(table)))
    if inv.unknown_brush_methods:
        names = {f"brush.{k}": v for k, v in inv.unknown_brush_methods.items()}
        found.append(Finding(V.UNKNOWN_BRUSH_METHOD, _where(names) + " not in p5.brush"))
    if mode == "allowlist" and inv.outside_allowlist:
        names = {f"brush.{k}": sorted(inv.brush_calls.get(k, []) + inv.brush_references.get(k, []))
                 for k in inv.outside_allowlist}
        found.append(Finding(V.NOT_ALLOWLISTED, _where(names)))
    if mode == "allowlist" and (inv.dynamic_access or inv.dynamic_brush_access):
        found.append(Finding(V.NOT_ALLOWLISTED, _computed(inv) + ": a name the gate cannot "
                             "read, so it cannot be checked against the allowlist"))
    if not inv.painting_calls and not inv.dynamic_brush_access and not inv.brush_aliased \
            and not inv.dynamic_code:
        found.append(Finding(V.NO_PAINTING_CALLS, "no brush.circle/endShape/rect/... call"))
    return found


def static_notes(extraction: Extraction, inventory: Inventory | None, mode: Mode) -> list[str]:
    notes = []
    if extraction.kind == "unclosed_fence" and inventory is not None and not inventory.truncated:
        notes.append("the code fence is never closed, but the code is complete")
    if inventory is not None and mode == "library" and inventory.outside_allowlist:
        notes.append("brush methods outside the prompt's allowlist (allowed in library mode): "
                     + ", ".join(inventory.outside_allowlist))
    if inventory is not None and mode == "library" and (
            inventory.dynamic_access or inventory.dynamic_brush_access):
        notes.append(_computed(inventory) + " (rejected in allowlist mode; the render's "
                     "evidence shows what it reached)")
    return notes


def _computed(inv: Inventory) -> str:
    """``computed access window[...] on line(s) 3, 7; brush[...] on line 9``."""
    parts = []
    for label, lines in (("window/p5[...]", inv.dynamic_access),
                         ("brush[...]", inv.dynamic_brush_access)):
        if lines:
            shown = sorted(set(lines))
            parts.append(f"{label} on line(s) {', '.join(map(str, shown[:5]))}"
                         + (" and more" if len(shown) > 5 else ""))
    return "computed access " + "; ".join(parts)


def _asks_for_an_inside(image: ImageMeasures, floors: Floors) -> bool:
    """Does the paint span most of the canvas, or form a large solid mass (see
    :class:`~watercolour.gates.image.Floors`)?"""
    solid = image.paint_fraction >= floors.interior_coverage and \
        image.paint_fraction >= floors.solid_share * image.paint_extent
    return image.paint_extent >= floors.extent_coverage or solid


def _first_line(message: str | None) -> str:
    return (message or "").strip().splitlines()[0][:200] if message and message.strip() else ""


def runtime_findings(
    inventory: Inventory | None,
    render: RenderResult,
    image: ImageMeasures | None,
    mode: Mode,
    floors: Floors,
) -> tuple[list[Finding], list[str]]:
    """Violations found in what the sketch did in the browser, and in its picture."""
    V = Violation
    ev = render.evidence or {}
    found: list[Finding] = []
    notes: list[str] = []
    if render.timed_out:
        found.append(Finding(V.TIMEOUT, _first_line(render.error)))
    if render.crashed:
        found.append(Finding(V.CRASHED, _first_line(render.error)))
    if render.timed_out or render.crashed:
        return found, notes

    threw = _first_line(render.error)
    static_webgl = inventory.webgl if inventory is not None else None
    if ev and ev.get("webgl") is False and not (static_webgl and threw):
        found.append(Finding(V.NOT_WEBGL, "the p5 canvas that ran is not WEBGL"))
    blocked = list(dict.fromkeys(render.blocked_requests))
    if blocked:
        found.append(Finding(V.EXTERNAL_ACCESS, f"{len(blocked)} request(s) or navigation(s) "
                             f"blocked: {', '.join(u[:80] for u in blocked[:3])}"))
    if ev.get("dom_writes"):
        found.append(Finding(V.DOM_ACCESS, "added to the page: "
                             + ", ".join(dict.fromkeys(ev["dom_writes"]))))
    elif (ev.get("canvas_count") or 0) > 1:
        found.append(Finding(V.DOM_ACCESS, f"{ev['canvas_count']} canvases in the page"))
    if ev.get("dynamic_code"):
        found.append(Finding(V.DYNAMIC_CODE, f"eval/Function ran {ev['dynamic_code']} time(s)"))
    if ev.get("tampering"):
        found.append(Finding(V.TAMPERING, "replaced at run time: "
                             + ", ".join(dict.fromkeys(ev["tampering"]))))
    p5_calls = dict(ev.get("p5_calls") or {})
    text_calls = int(ev.get("text_calls") or 0) + int(p5_calls.pop("text", 0))
    if text_calls:
        found.append(Finding(V.TEXT_ON_CANVAS, f"{text_calls} text drawing call(s) at run time"))
    raw = {**p5_calls, **{f"2d.{k}": n for k, n in (ev.get("raw_2d_calls") or {}).items()},
           **{f"webgl.{k}": n for k, n in (ev.get("raw_gl_calls") or {}).items()},
           **{f"raw.{k}": n for k, n in (ev.get("raw_access") or {}).items()}}
    if raw:
        found.append(Finding(V.BARE_PRIMITIVES, "called at run time: " + ", ".join(
            f"{k} x{n}" for k, n in sorted(raw.items()))))
    brush_calls = ev.get("brush_calls") or {}
    outside = sorted(m for m in brush_calls if m not in ALLOWLIST)
    if mode == "allowlist" and outside:
        found.append(Finding(V.NOT_ALLOWLISTED, "called at run time: "
                             + ", ".join(f"brush.{m}" for m in outside)))
    elif outside and (inventory is None or set(outside) - set(inventory.outside_allowlist)):
        notes.append("brush methods outside the allowlist at run time: " + ", ".join(outside))
    painted_calls = sum(n for m, n in brush_calls.items() if m in PAINTING_METHODS
                        or ("." in m and m.rpartition(".")[2] in CLASS_PAINTING_METHODS))
    if ev and not painted_calls and not threw:
        found.append(Finding(V.NO_PAINTING_CALLS, "no brush painting call ran"))

    after = f"; it threw first: {threw}" if threw else ""
    if image is None:
        why = threw or "nothing was captured"
        found.append(Finding(V.BLANK_CANVAS, f"no picture: {why}"))
    elif image.paint_fraction < floors.paint_floor:
        found.append(Finding(V.BLANK_CANVAS, f"paint {image.paint_fraction:.4f} < floor "
                             f"{floors.paint_floor} (dominant colour rgb{image.paper}){after}"))
    elif image.speck_fraction > floors.speck_ceiling:
        found.append(Finding(V.NOISE_STORM, f"{image.speck_fraction:.0%} of the paint is in "
                             f"specks (> {floors.speck_ceiling:.0%}){after}"))
    elif image.paint_fraction >= floors.flood_coverage and image.shape_edges < floors.edge_floor:
        found.append(Finding(V.SHAPELESS, f"paint covers {image.paint_fraction:.0%} of the canvas "
                             f"but shape edges are {image.shape_edges:.4f} < {floors.edge_floor}"
                             f"{after}"))
    elif _asks_for_an_inside(image, floors) \
            and image.interior_edges < floors.interior_floor \
            and image.interior_seams < floors.seam_ceiling:
        found.append(Finding(V.SHAPELESS, f"paint covers {image.paint_fraction:.0%} of the canvas "
                             f"(its area spans {image.paint_extent:.0%}) with nothing inside it: "
                             f"interior edges {image.interior_edges:.4f} < "
                             f"{floors.interior_floor}{after}"))
    elif threw:
        notes.append(f"the sketch threw after painting (admitted; the judge rates what it "
                     f"painted): {threw}")
    return found, notes
