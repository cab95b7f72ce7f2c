"""From a model's raw reply to the sketch it contains.

Rules, in order:

1. Reasoning is not the answer: ``<think>…</think>`` blocks are removed, an unclosed ``<think>``
   hides everything after it, and a lone ``</think>`` (chat templates that open the block in the
   prompt) hides everything before it.
2. Fenced code blocks (```` ``` ```` or ``~~~``) tagged ``js``, ``javascript``, ``p5``/``p5js``
   or untagged are candidates; blocks tagged with another language (html, python, …) are not.
   The **last complete** (closed) block that defines ``setup`` or ``draw`` wins, else the last
   complete block; a block whose closing fence never came is used only when there is no
   complete one, and is flagged ``unclosed`` (the reply was probably cut off).
3. Without fences, the reply is taken as bare code when, parsed as JavaScript, it defines
   ``setup`` or ``draw`` or calls ``createCanvas``; prose lines before the first line that
   starts code are dropped.
4. Otherwise there is no sketch: a refusal or an explanation is not code, even when it
   mentions ``setup()`` or "draw".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from watercolour.javascript import parse, text

JS_TAGS = frozenset({"", "js", "javascript", "p5", "p5js", "p5.js", "jsx", "mjs", "ecmascript"})
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_CODE_START = re.compile(
    r"^\s*(//|/\*|function\b|async\s+function\b|const\b|let\b|var\b|class\b|['\"]use strict|"
    r"[A-Za-z_$][\w$]*(\.[\w$]+)*\s*(=|\())"
)

Kind = Literal["fenced", "unclosed_fence", "bare", "none"]


@dataclass
class Extraction:
    """What was taken from the reply, and how."""

    code: str | None
    """The sketch, or None when the reply holds none."""
    kind: Kind
    """``fenced`` (a closed block), ``unclosed_fence`` (a block cut off), ``bare``, ``none``."""
    n_blocks: int = 0
    """Fenced JavaScript (or untagged) blocks found."""
    reason: str = ""
    """Why there is no sketch (empty when there is one)."""

    @property
    def found(self) -> bool:
        return self.code is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Block:
    info: str
    code: str
    closed: bool


def strip_reasoning(reply: str) -> str:
    """The reply without its ``<think>`` reasoning."""
    out = re.sub(r"<think>.*?</think>", "", reply, flags=re.DOTALL | re.IGNORECASE)
    opened = re.search(r"<think>", out, flags=re.IGNORECASE)
    if opened:
        out = out[: opened.start()]
    closing = list(re.finditer(r"</think>", out, flags=re.IGNORECASE))
    if closing:
        out = out[closing[-1].end():]
    return out


def fenced_blocks(reply: str) -> list[_Block]:
    """Every fenced block, in order (CommonMark-style fences: the closing fence uses the same
    character, at least as many times, and carries no info string)."""
    blocks: list[_Block] = []
    lines = reply.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                break
            body.append(lines[j])
            j += 1
        blocks.append(_Block(info=info.split()[0].lower() if info else "", code="\n".join(body),
                             closed=closed))
        i = j + 1
    return blocks


def looks_like_sketch(code: str) -> bool:
    """Parsed as JavaScript, does the text define setup/draw or call createCanvas?"""
    tree = parse(code)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_declaration", "variable_declarator"):
            named = text(node.child_by_field_name("name"))
        elif node.type == "assignment_expression":
            named = text(node.child_by_field_name("left")).split(".")[-1]
        elif node.type == "call_expression":
            named = text(node.child_by_field_name("function"))
        else:
            named = ""
        if named in ("setup", "draw") or (named == "createCanvas"
                                          and node.type == "call_expression"):
            return True
        stack.extend(node.named_children)
    return False


def _has_code(code: str) -> bool:
    """Anything besides whitespace and comments?"""
    root = parse(code).root_node
    return any(child.type != "comment" for child in root.named_children) or root.has_error


def extract_sketch(reply: str) -> Extraction:
    """The sketch in a model's reply (see the module docstring for the rules)."""
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str, got {type(reply).__name__}")
    answer = strip_reasoning(reply)
    blocks = [b for b in fenced_blocks(answer) if b.info in JS_TAGS]
    if blocks:
        closed = [b for b in blocks if b.closed]
        pool = closed or blocks[-1:]
        sketches = [b for b in pool if looks_like_sketch(b.code)]
        chosen = (sketches or pool)[-1]
        kind: Kind = "fenced" if chosen.closed else "unclosed_fence"
        if not chosen.code.strip() or not _has_code(chosen.code):
            return Extraction(None, "none", len(blocks), "the code block is empty")
        return Extraction(chosen.code.strip("\n") + "\n", kind, len(blocks))
    if not answer.strip():
        why = "the reply is empty" if not reply.strip() else "the reply is only reasoning"
        return Extraction(None, "none", 0, why)
    other = [b for b in fenced_blocks(answer)]
    if other:
        tags = ", ".join(sorted({b.info for b in other}))
        return Extraction(None, "none", 0, f"the reply's code blocks are not JavaScript ({tags})")
    bare = _trim_prose(answer)
    if bare is not None and looks_like_sketch(bare):
        return Extraction(bare, "bare", 0)
    return Extraction(None, "none", 0, "the reply is prose, not a sketch")


def _trim_prose(answer: str) -> str | None:
    """Drop prose lines before the first line that starts code (and prose after the last line
    that ends one, when that makes the code parse)."""
    lines = answer.strip("\n").splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return None
    code = "\n".join(lines[start:]).strip("\n") + "\n"
    if parse(code).root_node.has_error:
        # prose after the code: cut after the last line that can end a statement
        ends = [i for i, line in enumerate(lines) if line.rstrip().endswith(("}", ";", ")"))]
        if ends and ends[-1] >= start:
            trimmed = "\n".join(lines[start: ends[-1] + 1]) + "\n"
            if not parse(trimmed).root_node.has_error:
                return trimmed
    return code
