"""The system prompt: what the policy is told before it paints.

It follows the published recipe: the 10 allowed p5.brush methods
(:data:`watercolour.render.brush.ALLOWLIST` and its signatures) with their argument shapes and
nothing more (a long API reference made models invent methods; a strict list without
documentation worked better), a minimal skeleton, a request for 15–30 filled shapes, the one
sentence that made colours richer (paint each petal two or three times), and a request for one
fenced JavaScript block. The subject and the canvas size are parameters. Every prompt
of the project is built here: the pool's painters use :func:`system_prompt_template` with
:data:`ANY_SUBJECT`.

>>> system_prompt("a peach hibiscus").startswith("You paint with code. Paint a peach hibiscus")
True
"""

from __future__ import annotations

from watercolour.render.brush import ALLOWLIST, SIGNATURES

DEFAULT_SUBJECT = "a peach hibiscus"
CANVAS_SIZE = 512
"""The canvas the prompt asks for (the painters of the pool ask for the request's size)."""

ANY_SUBJECT = "the subject the user asks for"
"""The subject phrase of a prompt shared by many requests (the pool's painters): the user turn
names the subject."""

PETAL_SENTENCE = ("Paint each petal two or three times: first a large stroke, then a smaller, "
                  "more opaque one inside it.")
"""The sentence that made the original's colours much richer."""

_SKELETON = """\
function setup() {{
  createCanvas({size}, {size}, WEBGL); // (0, 0) is the centre of the canvas
  background('#f6f0e4');         // pale paper
  noLoop();
}}

function draw() {{
  // paint here
}}"""


def skeleton(size: int = CANVAS_SIZE) -> str:
    """The minimal sketch the prompt starts from, for a ``size`` x ``size`` canvas."""
    return _SKELETON.format(size=size)


SKELETON = skeleton()
"""The skeleton for the default canvas."""

_TEMPLATE = """\
You paint with code. Paint {subject} in watercolour: write a p5.js sketch that paints with the \
p5.brush library, which is already loaded as `brush`.

Use only these {n_methods} brush methods:
{methods}

Do not draw with p5's own shapes, lines, text or images; p5 helpers such as random, color, \
push, pop, translate and rotate are fine.

Start from this skeleton:
```javascript
{skeleton}
```

Paint 15–30 filled shapes. {petal}

Reply with the complete sketch in one fenced JavaScript code block (```javascript ... ```)."""


def system_prompt_template(subject: str = DEFAULT_SUBJECT) -> str:
    """The system prompt for ``subject`` with the canvas size left as a ``{size}`` field
    (``str.format``; every other brace is doubled): ``template.format(size=256)``."""
    subject = subject.strip()
    if not subject:
        raise ValueError("the subject must not be empty")
    methods = "\n".join(f"- {SIGNATURES[name]}" for name in ALLOWLIST)
    escape = str.maketrans({"{": "{{", "}": "}}"})
    return _TEMPLATE.format(subject=subject.translate(escape), n_methods=len(ALLOWLIST),
                            methods=methods.translate(escape), skeleton=_SKELETON,
                            petal=PETAL_SENTENCE)


def system_prompt(subject: str = DEFAULT_SUBJECT, size: int = CANVAS_SIZE) -> str:
    """The system prompt for painting ``subject`` on a ``size`` x ``size`` canvas."""
    return system_prompt_template(subject).format(size=size)


def user_prompt(subject: str = DEFAULT_SUBJECT) -> str:
    """The user turn that goes with :func:`system_prompt`."""
    return f"Paint {subject.strip()} in watercolour."


def messages(subject: str = DEFAULT_SUBJECT) -> list[dict[str, str]]:
    """The chat messages of one painting request."""
    return [{"role": "system", "content": system_prompt(subject)},
            {"role": "user", "content": user_prompt(subject)}]
