"""The system prompt: what the policy is told before it paints.

It follows the published recipe: the 10 allowed p5.brush methods with their argument shapes and
nothing more (a long API reference made models invent methods; a strict list without
documentation worked better), a minimal skeleton, a request for 15–30 filled shapes, the one
sentence that made colours richer (paint each petal two or three times), and a request for one
fenced JavaScript block. The subject is a parameter.

>>> system_prompt("a peach hibiscus").startswith("You paint with code. Paint a peach hibiscus")
True
"""

from __future__ import annotations

from watercolour.gates.methods import ALLOWLIST

DEFAULT_SUBJECT = "a peach hibiscus"

ALLOWED_METHODS: tuple[str, ...] = ALLOWLIST
"""The 10 methods the prompt allows (the same tuple the gate enforces in allowlist mode)."""

SIGNATURES: dict[str, str] = {
    "scaleBrushes": "brush.scaleBrushes(scale)",
    "noStroke": "brush.noStroke()",
    "fill": "brush.fill(color, opacity)",
    "noFill": "brush.noFill()",
    "fillBleed": "brush.fillBleed(strength)",
    "fillTexture": "brush.fillTexture(texture, border)",
    "beginShape": "brush.beginShape(curvature)",
    "vertex": "brush.vertex(x, y)",
    "endShape": "brush.endShape(CLOSE)",
    "circle": "brush.circle(x, y, radius)",
}
"""Each allowed method with its argument shape, as the prompt lists it."""

PETAL_SENTENCE = ("Paint each petal two or three times: first a large stroke, then a smaller, "
                  "more opaque one inside it.")
"""The sentence that made the original's colours much richer."""

SKELETON = """\
function setup() {
  createCanvas(512, 512, WEBGL); // (0, 0) is the centre of the canvas
  background('#f6f0e4');         // pale paper
  noLoop();
}

function draw() {
  // paint here
}"""

_TEMPLATE = """\
You paint with code. Paint {subject} in watercolour: write a p5.js sketch that paints with the \
p5.brush library, which is already loaded as `brush`.

Use only these 10 brush methods:
{methods}

Do not draw with p5's own shapes, lines, text or images; p5 helpers such as random, color, \
push, pop, translate and rotate are fine.

Start from this skeleton:
```javascript
{skeleton}
```

Paint 15–30 filled shapes. {petal}

Reply with the complete sketch in one fenced JavaScript code block (```javascript ... ```)."""


def system_prompt(subject: str = DEFAULT_SUBJECT) -> str:
    """The system prompt for painting ``subject``."""
    subject = subject.strip()
    if not subject:
        raise ValueError("the subject must not be empty")
    methods = "\n".join(f"- {SIGNATURES[name]}" for name in ALLOWED_METHODS)
    return _TEMPLATE.format(subject=subject, methods=methods, skeleton=SKELETON,
                            petal=PETAL_SENTENCE)


def user_prompt(subject: str = DEFAULT_SUBJECT) -> str:
    """The user turn that goes with :func:`system_prompt`."""
    return f"Paint {subject.strip()} in watercolour."


def messages(subject: str = DEFAULT_SUBJECT) -> list[dict[str, str]]:
    """The chat messages of one painting request."""
    return [{"role": "system", "content": system_prompt(subject)},
            {"role": "user", "content": user_prompt(subject)}]
