"""The length term: a ramp that gently encourages longer programs, and stops paying for
padding.

    0 below 150 tokens, rising linearly to 1 at 3,000, 1 up to 6,000, 0 above 6,000.

Only code counts: the sketch the gate would take from the reply
(:func:`watercolour.gates.extract_sketch`; the whole reply when it holds none), without its
JavaScript comments (``//`` to the end of the line, ``/* ... */``) and with runs of blank
space counted as one space (:func:`code_only`), so padding a sketch with comments, prose or
blank lines earns nothing. Tokens are counted by the policy's
tokenizer when one is given (anything with ``encode`` or a callable returning token ids),
else estimated as characters / 4 (rounded up).
"""

from __future__ import annotations

import math
import re
from typing import Any

FLOOR_TOKENS = 150
"""Below this many tokens the term is 0."""
FULL_TOKENS = 3000
"""The ramp reaches 1 here."""
CEILING_TOKENS = 6000
"""Above this many tokens the term is 0 again (a runaway reply earns nothing)."""
CHARS_PER_TOKEN = 4


_SPACE = re.compile(r"\s+")


def code_only(text: str) -> str:
    """``text`` without JavaScript comments, blank space collapsed. Quotes (``'``, ``"``,
    template literals) are respected, so a ``//`` inside a string stays; a ``/`` that starts a
    regular expression is read as division, which only matters for ``//`` or ``/*`` inside
    one (the sketches this project writes have none)."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote is not None:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
        elif c in "'\"`":
            quote = c
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return _SPACE.sub(" ", "".join(out)).strip()


def count_tokens(text: str, tokenizer: Any = None) -> tuple[int, str]:
    """The reply's length in tokens of code (its sketch through :func:`code_only`), and how
    it was counted (``tokenizer`` or ``chars/4``)."""
    from watercolour.gates import extract_sketch

    sketch = extract_sketch(text).code
    text = code_only(sketch if sketch is not None else text)
    if tokenizer is not None:
        encode = getattr(tokenizer, "encode", None)
        if encode is not None:
            try:
                ids = encode(text, add_special_tokens=False)
            except TypeError:  # e.g. a `tokenizers.Tokenizer`, or a plain callable
                ids = encode(text)
        else:
            ids = tokenizer(text)
        ids = getattr(ids, "ids", ids)  # tokenizers.Encoding
        if isinstance(ids, dict):  # a BatchEncoding-like mapping
            ids = ids["input_ids"]
        return len(ids), "tokenizer"
    return math.ceil(len(text) / CHARS_PER_TOKEN), "chars/4"


def length_score(n_tokens: int | float) -> float:
    """The ramp: 0 below :data:`FLOOR_TOKENS`, linear to 1 at :data:`FULL_TOKENS`, 1 up to
    :data:`CEILING_TOKENS` (inclusive), 0 above."""
    if n_tokens < FLOOR_TOKENS or n_tokens > CEILING_TOKENS:
        return 0.0
    if n_tokens >= FULL_TOKENS:
        return 1.0
    return (n_tokens - FLOOR_TOKENS) / (FULL_TOKENS - FLOOR_TOKENS)


def length_term(text: str, tokenizer: Any = None) -> dict[str, Any]:
    """The term for one reply: ``raw`` score, ``tokens`` and ``counted_by``."""
    n, how = count_tokens(text, tokenizer)
    return {"raw": length_score(n), "tokens": n, "counted_by": how}
