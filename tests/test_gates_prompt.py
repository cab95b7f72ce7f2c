"""The system prompt names exactly the 10 allowed methods, all real; a sketch that uses only
them is admitted."""

from __future__ import annotations

import re

import pytest

from watercolour.gates import ALLOWLIST, brush_methods, check, extract_sketch, take_inventory
from watercolour.prompt import (
    ANY_SUBJECT,
    DEFAULT_SUBJECT,
    PETAL_SENTENCE,
    SKELETON,
    messages,
    system_prompt,
    system_prompt_template,
    user_prompt,
)

PROMPT = system_prompt()
NAMED = re.findall(r"brush\.(\w+)\(", PROMPT)


def test_prompt_names_exactly_the_ten_allowed_methods_and_all_exist():
    assert list(ALLOWLIST) == NAMED and len(NAMED) == 10
    assert set(NAMED) <= brush_methods()


def test_prompt_contents():
    assert DEFAULT_SUBJECT == "a peach hibiscus" and "a peach hibiscus" in PROMPT
    assert "createCanvas(512, 512, WEBGL)" in PROMPT and "noLoop()" in PROMPT
    assert "background(" in SKELETON  # pale paper
    assert "15–30 filled shapes" in PROMPT
    assert PETAL_SENTENCE in PROMPT and "two or three times" in PETAL_SENTENCE
    assert "one fenced JavaScript code block" in PROMPT
    assert "brush.fill(color, opacity)" in PROMPT and "brush.circle(x, y, radius)" in PROMPT


def test_the_canvas_size_is_a_parameter_and_the_template_formats_only_it():
    assert "createCanvas(256, 256, WEBGL)" in system_prompt(size=256)
    template = system_prompt_template(ANY_SUBJECT)
    assert template.format(size=512) == system_prompt(ANY_SUBJECT)
    assert system_prompt_template("a {curly} rose").format(size=8).count("a {curly} rose") == 1


def test_subject_is_a_parameter():
    prompt = system_prompt("a pelican riding a bicycle")
    assert "Paint a pelican riding a bicycle in watercolour" in prompt
    assert "hibiscus" not in prompt
    assert user_prompt("a lotus") == "Paint a lotus in watercolour."
    assert [m["role"] for m in messages()] == ["system", "user"]
    with pytest.raises(ValueError):
        system_prompt("  ")


def test_the_prompt_itself_is_no_sketch_and_its_skeleton_parses():
    assert extract_sketch(PROMPT).code is not None  # its skeleton block is a sketch...
    inv = take_inventory(SKELETON)
    assert inv.parse_ok and inv.has_setup and inv.webgl is True
    assert not inv.painting_calls  # ...that paints nothing yet


PROMPT_ONLY_SKETCH = SKELETON.replace("  // paint here", """\
  brush.scaleBrushes(1.5);
  brush.noStroke();
  for (let i = 0; i < 5; i++) {
    const a = i * TWO_PI / 5;
    brush.fillBleed(0.3);
    brush.fillTexture(0.5, 0.4);
    brush.fill('#f4b891', 150);
    brush.circle(110 * cos(a), 110 * sin(a), 70);
    brush.fill('#ee9a72', 180);
    brush.circle(90 * cos(a), 90 * sin(a), 35);
  }
  brush.fill('#8fb26b', 140);
  brush.beginShape(0.5);
  brush.vertex(-200, 150);
  brush.vertex(-60, 120);
  brush.vertex(-20, 220);
  brush.endShape(CLOSE);
  brush.noFill();""")


@pytest.mark.browser
def test_a_sketch_using_only_the_prompts_methods_is_admitted(renderer):
    reply = f"Here it is:\n\n```javascript\n{PROMPT_ONLY_SKETCH}\n```\n"
    verdict = check(reply, renderer, mode="allowlist", deadline_s=90)
    assert verdict.passed, verdict.reasons
    assert set(verdict.methods_used) == set(ALLOWLIST)
    assert verdict.n_shapes == 11
