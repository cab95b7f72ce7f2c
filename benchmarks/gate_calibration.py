"""Calibrate the gate's image floors on measured renders.

Renders a fixed set of 512 x 512 sketches (the prompt's canvas) that the gate must reject —
blank and near-blank canvases, a lone dot, flat and textured flood fills, a flood stopped short
of the canvas edge and one laid in two bands (issue 39's r04-style floods), a flat and a
textured dark slick, a noise storm — and honest ones it must admit — a single small wash, a few
washes, full-canvas washes with shapes on them, confetti, and the shipped examples. For each it
records the image measures (paint fraction, shape edges, speck fraction, and, for the flood
rule, the painted area's extent and the edges inside it both ways) and the gate's verdict, then
the margins between the two groups for each threshold. Writes
``benchmarks/results/gate-calibration.json``.

    python benchmarks/gate_calibration.py [--seed 0] [--out FILE.json]
"""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from watercolour.examples import load_examples
from watercolour.flags import DEADLINE, OUT, SEED, flag, parser_for
from watercolour.gates import Expected, Floors, check, matches_expected
from watercolour.gates import image as gate_image
from watercolour.io import write_json_atomic
from watercolour.render import Renderer, versions
from watercolour.render.paint import PAPER_TOLERANCE

RESULTS = Path(__file__).resolve().parent / "results"
HEAD = """function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f6f0e4');
  brush.noStroke();
}
"""


def _draw(body: str, head: str = HEAD) -> str:
    return head + "function draw() {\n" + body + "\n  noLoop();\n}\n"


SQUARE = """brush.beginShape(0);
    brush.vertex(-300, -300); brush.vertex(300, -300);
    brush.vertex(300, 300); brush.vertex(-300, 300);
    brush.endShape(CLOSE);"""

# name -> (sketch, expected violation or None when it must be admitted, what it shows)
CASES: dict[str, tuple[str, str | None, str]] = {
    "blank": (_draw("  brush.fill('#ee9a72', 150);\n  brush.circle(1000, 1000, 20);"),
              "blank_canvas", "paper only: the one wash lies off the canvas"),
    "near_blank": (_draw("  brush.fillBleed(0.2); brush.fill('#efe8dc', 20);\n"
                         "  brush.circle(0, 0, 200);"), "blank_canvas",
                   "one large wash almost the colour of the paper, at opacity 20"),
    "lone_dot": (_draw("  brush.fillBleed(0.1); brush.fill('#b8323a', 200);\n"
                       "  brush.circle(40, -30, 6);"), "blank_canvas", "one 6 px dot"),
    "flood_flat": (_draw("  brush.fill('#e07a5f', 255); brush.circle(0, 0, 3);",
                         head=HEAD.replace("'#f6f0e4'", "'#e07a5f'")), "blank_canvas",
                   "a flat flood (background) with a dot of the same colour: the flood "
                   "becomes the 'paper', so paint reads 0"),
    "dark_slick_flat": (_draw("  brush.fill('#b8323a', 200); brush.circle(0, 0, 4);",
                              head=HEAD.replace("'#f6f0e4'", "'#15100c'")), "blank_canvas",
                        "a flat near-black canvas with one dot"),
    "flood_textured": (_draw("  brush.fillBleed(0.1); brush.fillTexture(0.4, 0.3);\n"
                             "  brush.fill('#e07a5f', 255);\n  " + SQUARE), "shapeless",
                       "one opaque textured wash over the whole canvas"),
    "dark_slick_textured": (_draw("  for (let k = 0; k < 3; k++) {\n"
                                  "    brush.fillBleed(0.1); brush.fillTexture(0.2, 0.1);\n"
                                  "    brush.fill('#15100c', 255);\n    " + SQUARE + "\n  }"),
                            "shapeless", "three opaque near-black washes over everything"),
    "pale_flood": (_draw("  brush.fillBleed(0.2); brush.fillTexture(0.5, 0.3);\n"
                         "  brush.fill('#c9b08e', 110);\n  " + SQUARE), "shapeless",
                   "one pale wash over the whole canvas, nothing on it"),
    "palest_flood": (_draw("  brush.fillBleed(0.2); brush.fillTexture(0.5, 0.3);\n"
                           "  brush.fill('#d9c3a5', 90);\n  " + SQUARE), None,
                     "LIMIT: a flood so pale that 97% of it matches one colour reads as faint "
                     "marks and is admitted (the judge sees a near-blank canvas)"),
    "flood_framed": (_draw("  brush.fillBleed(0.1); brush.fillTexture(0.2, 0.3);\n"
                           "  brush.fill('#e69573', 200);\n  "
                           + SQUARE.replace("300", "232")), "shapeless",
                     "one flat wash stopped 24 px short of the canvas edge: an outline, "
                     "nothing inside it"),
    "flood_two_bands": (_draw("  brush.fillBleed(0.05); brush.fillTexture(0.15, 0.3);\n"
                              "  brush.fill('#9cc3d9', 190);\n  "
                              + SQUARE.replace("300", "240") + "\n"
                              "  brush.fill('#d98f8f', 190);\n  "
                              + SQUARE.replace("300", "240").replace("(-240, -240)", "(-240, 0)")
                              .replace("(240, -240)", "(240, 0)")), "shapeless",
                        "two flat washes, the lower half over the whole: an outline and one "
                        "straight seam"),
    "noise_storm": (_draw("  brush.fillBleed(0); brush.fillTexture(0, 0);\n"
                          "  for (let i = 0; i < 1200; i++) {\n"
                          "    brush.fill(color(random(255), random(255), random(255)), 255);\n"
                          "    brush.circle(random(-256, 256), random(-256, 256), random(2, 4));\n"
                          "  }"), "noise_storm", "1200 specks of random colour"),
    "one_small_wash": (_draw("  brush.fillBleed(0.3); brush.fillTexture(0.5, 0.4);\n"
                             "  brush.fill('#ee9a72', 150);\n  brush.circle(0, 0, 30);"), None,
                       "a single small wash (radius 30) on paper"),
    "few_washes": (_draw("  const cols = ['#f4b891', '#ee9a72', '#8fb26b', '#b8323a'];\n"
                         "  for (let i = 0; i < 5; i++) {\n"
                         "    brush.fillBleed(0.3); brush.fillTexture(0.5, 0.4);\n"
                         "    brush.fill(cols[i % 4], 140);\n"
                         "    brush.circle(random(-150, 150), random(-150, 150), random(40, 90));\n"
                         "  }"), None, "a real sketch with five washes"),
    "full_wash_flower": (_draw("  brush.fillBleed(0.2); brush.fillTexture(0.5, 0.3);\n"
                               "  brush.fill('#a9c6d9', 120);\n"
                               "  brush.rect(-300, -300, 600, 600);\n"
                               "  const cols = ['#f4b891', '#ee9a72', '#b8323a'];\n"
                               "  for (let i = 0; i < 5; i++) {\n    const a = i * TWO_PI / 5;\n"
                               "    brush.fillBleed(0.3); brush.fill(cols[i % 3], 160);\n"
                               "    brush.circle(70 * cos(a), 70 * sin(a), 60);\n  }\n"
                               "  brush.fill('#4d7a3e', 150); brush.circle(0, 0, 25);"), None,
                         "a sky wash over the canvas, then a flower"),
    "mono_full_wash": (_draw("  brush.fillBleed(0.2); brush.fillTexture(0.5, 0.3);\n"
                             "  brush.fill('#8fb0d0', 120);\n  brush.rect(-300, -300, 600, 600);\n"
                             "  brush.fill('#2f5a8a', 170);\n"
                             "  brush.circle(-80, -40, 70); brush.circle(90, 60, 50);"), None,
                       "a blue wash over the canvas with darker blue shapes (one hue)"),
    "confetti": (_draw("  brush.fillBleed(0.1);\n  for (let i = 0; i < 200; i++) {\n"
                       "    brush.fill(color(random(255), random(255), random(255)), 200);\n"
                       "    brush.circle(random(-256, 256), random(-256, 256), random(6, 14));\n"
                       "  }"), None, "200 round marks 12-28 px wide: shapes, however crude"),
}


@dataclass
class CalibrationFlags:
    """The calibration's flags."""

    seed: int = flag(like=SEED, help="the render seed")
    deadline: float = flag(like=DEADLINE, default=90.0, help="seconds a render may take")
    out: Path = flag(like=OUT, default=RESULTS / "gate-calibration.json",
                     help="the JSON file to write")


def main(argv: list[str] | None = None) -> int:
    args = parser_for(CalibrationFlags, description=__doc__.splitlines()[0]).parse_args(argv)

    cases = dict(CASES)
    for name, code in load_examples().items():
        cases[f"example:{name}"] = (code, None, "a shipped example sketch")
    floors = Floors()
    rows = []
    with Renderer(workers=1, deadline_s=args.deadline) as renderer:
        backend = renderer.backend
        for name, (code, want, what) in cases.items():
            verdict = check(code, renderer, seed=args.seed)
            image = verdict.image
            row = {
                "name": name,
                "what": what,
                "expected": want or "admitted",
                "violations": verdict.violations,
                "as_expected": matches_expected(verdict, Expected((want,) if want else ())),
                "paint_fraction": image.paint_fraction if image else None,
                "shape_edges": image.shape_edges if image else None,
                "speck_fraction": image.speck_fraction if image else None,
                "paint_extent": image.paint_extent if image else None,
                "interior_edges": image.interior_edges if image else None,
                "interior_seams": image.interior_seams if image else None,
                "paper": list(image.paper) if image else None,
                "n_shapes": verdict.n_shapes,
                "seconds": round(verdict.render.timings.get("total_s") or 0.0, 2)
                if verdict.render else None,
            }
            rows.append(row)
            print(f"{name:28s} paint {row['paint_fraction'] or 0:.4f}  edges "
                  f"{row['shape_edges'] or 0:.4f}  specks {row['speck_fraction'] or 0:.3f}  "
                  f"inside {row['interior_edges'] or 0:.3f}  "
                  f"{','.join(verdict.violations) or 'admitted':14s} "
                  f"{'ok' if row['as_expected'] else 'UNEXPECTED'}", flush=True)

    admitted = [r for r in rows if r["expected"] == "admitted" and r["paint_fraction"] is not None]
    covered = [r for r in admitted if r["paint_fraction"] >= floors.flood_coverage]

    def asks_for_an_inside(r) -> bool:  # as the gate's verdict does
        solid = r["paint_fraction"] >= floors.interior_coverage and \
            r["paint_fraction"] >= floors.solid_share * r["paint_extent"]
        return r["paint_extent"] >= floors.extent_coverage or solid

    asked = [r for r in admitted if r["paint_extent"] is not None and asks_for_an_inside(r)]

    def extreme(group, key, fn):
        values = [r[key] for r in group if r[key] is not None]
        return fn(values) if values else None

    def of(violation):
        return [r for r in rows if r["expected"] == violation]

    margins = {
        "paint_fraction": {
            "floor": floors.paint_floor,
            "highest_rejected_as_blank": extreme(of("blank_canvas"), "paint_fraction", max),
            "lowest_admitted": extreme(admitted, "paint_fraction", min),
        },
        "speck_fraction": {
            "ceiling": floors.speck_ceiling,
            "lowest_noise_storm": extreme(of("noise_storm"), "speck_fraction", min),
            "highest_admitted": extreme(admitted, "speck_fraction", max),
        },
        "shape_edges": {
            "floor": floors.edge_floor,
            "applies_from_paint_fraction": floors.flood_coverage,
            "highest_shapeless": extreme(of("shapeless"), "shape_edges", max),
            "lowest_admitted_covered_canvas": extreme(covered, "shape_edges", min),
            "lowest_admitted_any": extreme(admitted, "shape_edges", min),
        },
        "interior_edges": {
            "floor": floors.interior_floor,
            "applies_from_paint_extent": floors.extent_coverage,
            "or_solid_from_paint_fraction": floors.interior_coverage,
            "solid_share": floors.solid_share,
            "seam_ceiling": floors.seam_ceiling,
            "highest_shapeless": extreme(of("shapeless"), "interior_edges", max),
            "lowest_admitted_asked": extreme(asked, "interior_edges", min),
            "largest_admitted_extent": extreme(admitted, "paint_extent", max),
        },
    }
    data = {
        "written_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": args.seed,
        "canvas": "512x512",
        "versions": versions(),
        "backend": backend,
        "floors": asdict(floors),
        "measures": {
            "paint_fraction": "share of pixels differing from the most common colour by more "
                              f"than {PAPER_TOLERANCE} in some channel",
            "shape_edges": f"share of {gate_image.EDGE_CELL}-px cells differing by more than "
                           f"{gate_image.EDGE_STEP} (any channel) from the cell "
                           f"{gate_image.EDGE_OFFSET * gate_image.EDGE_CELL} px away",
            "speck_fraction": "share of the paint in 8-connected marks that fit in a "
                              f"{gate_image.SPECK_SIZE} px box",
            "paint_extent": "share of the canvas spanned by the bounding box of the rows and "
                            f"columns at least {gate_image.EXTENT_SHARE:.0%} paint (the painted "
                            "area)",
            "interior_edges": "inside the painted area (its box less 1/"
                              f"{gate_image.INTERIOR_MARGIN} of its size each side): the "
                              "smaller of the horizontal and vertical shape-edge cell shares",
            "interior_seams": "the larger of the two",
        },
        "rules": [
            "blank_canvas: paint_fraction < paint_floor",
            "noise_storm: speck_fraction > speck_ceiling",
            "shapeless: paint_fraction >= flood_coverage and shape_edges < edge_floor",
            "shapeless: (paint_extent >= extent_coverage, or paint_fraction >= "
            "interior_coverage and >= solid_share * paint_extent) and interior_edges < "
            "interior_floor and interior_seams < seam_ceiling (a flood with a frame or a seam)",
            "rules apply in this order; the first that holds names the violation",
        ],
        "cases": rows,
        "margins": margins,
        "all_as_expected": all(r["as_expected"] for r in rows),
    }
    write_json_atomic(args.out, data)
    print(f"wrote {args.out}; all as expected: {data['all_as_expected']}")
    return 0 if data["all_as_expected"] else 1


if __name__ == "__main__":
    sys.exit(main())
