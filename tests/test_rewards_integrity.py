"""Reward integrity (issue 25): the length term counts what paints, a near-copy of a pool
painting does not out-earn painting, and the offline scorer in the HPS slot knows the subject.

Real sketches (the hand-made examples, the procedural painter's, the red team's), real parses
(tree-sitter), and where the picture matters real renders in headless Chromium."""

from __future__ import annotations

import pytest

from watercolour.examples import load_example
from watercolour.rewards.length import count_tokens, length_term, painting_code
from watercolour.rewards.redteam import gamed_sketch, padded, padded_with_string

EXAMPLE = load_example("peach_hibiscus")

# ---------------------------------------------------------------- length: padding does not pay


@pytest.mark.parametrize("kind, amount", [("string", 4000), ("string", 24000),
                                          ("dead_code", 20), ("dead_code", 150),
                                          ("unrolled", 20), ("unrolled", 150)])
def test_padding_the_example_does_not_raise_its_length(kind, amount):
    code = padded({"example": "peach_hibiscus", "kind": kind, "amount": amount, "layout": 3})
    assert len(code) > len(EXAMPLE) + 500
    assert count_tokens(code) == count_tokens(EXAMPLE)
    assert length_term(code) == length_term(EXAMPLE)


def test_the_issues_padded_copy_earns_nothing_for_its_string():
    assert length_term(gamed_sketch("example_string_12k")) == length_term(EXAMPLE)
    long_string = padded_with_string(EXAMPLE, 12000)
    assert "Loose washes" in long_string and "Loose washes" not in painting_code(long_string)


def test_strings_count_as_empty_except_short_colours():
    code = ("function draw() {\n  brush.fill('#f4b891', 150);\n  background('white');\n"
            "  let note = 'a very long caption that paints nothing at all';\n"
            "  brush.fill(`rgba(${note.length}, 0, 0, 1)`, 80);\n}\n")
    text = painting_code(code)
    assert "'#f4b891'" in text and "'white'" in text
    assert "caption" not in text and "rgba" not in text and "note.length" in text


def test_dead_code_is_dropped_and_live_code_kept():
    code = """
const USED = '#aa3344';
const UNUSED = [1, 2, 3, 4, 5, 6, 7, 8];
let onlyWritten = 0;
function setup() { createCanvas(512, 512, WEBGL); }
function draw() {
  onlyWritten = 5;
  petal(USED);
  if (false) { brush.circle(0, 0, 40); }
  if (0) { brush.circle(1, 1, 41); } else { brush.circle(2, 2, 42); }
  while (false) { brush.vertex(9, 9); }
  noLoop();
  return;
  brush.circle(3, 3, 43);
}
function petal(c) { brush.fill(c, 120); }
function neverCalled() { brush.fill('#123456', 50); helper(); }
function helper() { brush.circle(7, 7, 7); }
"""
    text = painting_code(code)
    for kept in ("USED", "petal(USED)", "brush.fill(c,120)", "brush.circle(2,2,42)",
                 "noLoop()"):
        assert kept in text, kept
    for dropped in ("UNUSED", "onlyWritten", "brush.circle(0,0,40)", "brush.circle(1,1,41)",
                    "vertex", "brush.circle(3,3,43)", "neverCalled", "helper", "'#123456'"):
        assert dropped not in text, dropped


def test_a_loop_and_its_unrolled_form_count_alike():
    head = "function setup() { createCanvas(512, 512, WEBGL); }\nfunction draw() {\n"
    loop = head + ("  for (let i = 0; i < 5; i++) {\n"
                   "    brush.circle(40 * i - 80, 0, 30, 0.4);\n  }\n}\n")
    unrolled = head + "".join(f"  brush.circle({40 * i - 80}, 0, 30, 0.4);\n"
                              for i in range(5)) + "}\n"
    copied = head + "".join(f"  brush.circle({40 * i - 80}, 0, 30, 0.4);\n"
                            for i in range(200)) + "}\n"
    assert count_tokens(unrolled) == count_tokens(copied) <= count_tokens(loop)


def test_long_lists_and_operator_chains_are_bounded():
    def base(items: str) -> str:
        return f"function draw() {{\n  const P = [{items}];\n  brush.vertex(P.length, 0);\n}}\n"

    short = base("1, 2, 3")
    long = base(", ".join(str(i) for i in range(10_000)))
    assert count_tokens(long) == count_tokens(base("1, 2, 3, 4"))
    assert len(painting_code(short)) < len(painting_code(long))  # four of a shape count
    chain = "function draw() {\n  brush.circle(0, 0, " + " + ".join(["1"] * 5000) + ");\n}\n"
    assert count_tokens(chain)[0] < 30
    nested = "function draw() {\n  brush.circle(0, 0, " + "(" * 20000 + "1" + ")" * 20000 + \
        ");\n}\n"
    assert count_tokens(nested)[0] == 0  # too deep to read: nothing counts


def test_a_richer_sketch_still_counts_more():
    """Code that does something new pays: the example without its stamen column (and the
    call) counts less than the example; a sunflower and a lotus written differently count
    differently; and a new kind of statement added to a sketch counts."""
    cut = EXAMPLE.index("// The stamen column") if "// The stamen column" in EXAMPLE else \
        EXAMPLE.index("function stamenColumn")
    poorer = EXAMPLE[:cut].replace("  stamenColumn(cx, cy);\n", "")
    assert count_tokens(poorer)[0] < count_tokens(EXAMPLE)[0] - 40
    assert length_term(poorer)["raw"] < length_term(EXAMPLE)["raw"]
    richer = EXAMPLE.replace("  noLoop();", "  // a second, cooler glaze over the leaves\n"
                             "  brush.fillBleed(0.35);\n  brush.fillTexture(0.7, 0.2);\n"
                             "  brush.fill(LEAF_DARK, 60);\n"
                             "  for (let k = 0; k < 3; k++) {\n"
                             "    brush.circle(cx + 60 * cos(k * 2.1), cy + 60 * sin(k * 2.1),"
                             " 18 + 4 * k, 0.5);\n  }\n  noLoop();", 1)
    assert count_tokens(richer)[0] > count_tokens(EXAMPLE)[0]
    assert length_term(richer)["raw"] > length_term(EXAMPLE)["raw"]


def test_the_hand_made_examples_sit_on_the_ramp():
    for name in ("peach_hibiscus", "sunflower", "lotus", "tulips", "red_poppies"):
        raw = length_term(load_example(name))["raw"]
        assert 0.1 < raw < 0.4, (name, raw)
