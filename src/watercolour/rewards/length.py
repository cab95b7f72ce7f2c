"""The length term: a ramp that gently encourages longer programs, counting only the code that
paints.

    0 below 150 tokens, rising linearly to 1 at FULL_TOKENS, 1 up to 6,000, 0 above 6,000.

**What is counted** (:func:`painting_code`): the sketch the gate would take from the reply
(:func:`watercolour.gates.extract_sketch`; the whole reply when it holds none), read with the
JavaScript parser the gates use (tree-sitter), reduced to the distinct code it runs, and
written out minified:

1. **comments** are dropped;
2. **string literals** keep their quotes but lose their contents, except short colour strings
   (``'#rrggbb'``, ``'rgba(...)'``, ``'white'``: :data:`COLOUR`); a template literal keeps its
   ``${...}`` code only;
3. **dead code** is dropped: top-level functions and variables nothing live reads (the live
   code starts from p5's callbacks, :data:`ENTRY_POINTS`, and every other top-level statement),
   local variables nothing reads, assignments to such variables, the branch of an ``if`` whose
   condition is a literal (``if (false)``, ``while (0)``), and statements after a ``return``,
   ``throw``, ``break`` or ``continue`` in the same block;
4. **repetition** is counted once: each statement (a compound statement's header apart from
   its body) is a *unit*, and a unit whose **shape** (its tokens with every number, and every
   negated number, read as one placeholder and every string as another) was already counted
   anywhere in the sketch counts nothing; inside a unit, a list (array elements, call
   arguments, object entries) and a chain of one operator (``a + b + c``) count at most
   :data:`LIST_REPEATS` items of each shape.

Code nested too deeply to walk (thousands of brackets) counts nothing.

So a loop and its unrolled form count alike (the unrolled copies are one shape), a second copy
of ``draw()``'s body, a long string, a function nothing calls or a 10,000-number array that
is only read for its length earn nothing, while code that does something new (another
kind of statement, another helper, a new layer built differently) still does. What the
count cannot see (a live statement that paints nothing visible) is left to the judges, which
see the picture.

Tokens of that text are counted by the policy's tokenizer when one is given (anything with
``encode`` or a callable returning token ids), else estimated as characters / 4 (rounded
up). The ramp reaches 1 at :data:`FULL_TOKENS` (lower than the 3,000 of the raw count this
replaced, since repetition, strings and spaces no longer count: the hand-made examples reach
0.25-0.35).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from tree_sitter import Node

from watercolour.javascript import parse

FLOOR_TOKENS = 150
"""Below this many tokens the term is 0."""
FULL_TOKENS = 1200
"""The ramp reaches 1 here."""
CEILING_TOKENS = 6000
"""Above this many tokens the term is 0 again (a runaway reply earns nothing)."""
CHARS_PER_TOKEN = 4

COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}|(?:rgb|hsl)a?\([^()`]{0,40}\)|[A-Za-z]{3,20}")
"""String contents kept as written (short colour strings); any other string counts as ``''``."""
ENTRY_POINTS = frozenset({
    "setup", "draw", "preload", "windowResized", "mousePressed", "mouseReleased",
    "mouseClicked", "mouseMoved", "mouseDragged", "keyPressed", "keyReleased", "keyTyped",
    "touchStarted", "touchMoved", "touchEnded", "doubleClicked", "mouseWheel",
})
"""Functions p5 calls itself: live even though the sketch never calls them."""
STATEMENTS = frozenset({
    "expression_statement", "lexical_declaration", "variable_declaration",
    "function_declaration", "generator_function_declaration", "class_declaration",
    "if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement",
    "try_statement", "with_statement", "break_statement", "continue_statement",
    "return_statement", "throw_statement", "empty_statement", "labeled_statement",
    "switch_statement", "statement_block", "debugger_statement",
})
LISTS = frozenset({"array", "arguments", "object", "sequence_expression"})
"""Nodes whose items of one shape count at most :data:`LIST_REPEATS` times."""
LIST_REPEATS = 4
"""Items of one shape a list or an operator chain counts (``createCanvas(512, 512, WEBGL)``
keeps its arguments; a 10,000-number array counts four)."""
JUMPS = frozenset({"return_statement", "throw_statement", "break_statement",
                   "continue_statement"})
FALSY = frozenset({"false", "0", "null", "undefined", "''", '""'})
TRUTHY = frozenset({"true", "1"})
_NUMBER, _STRING = "0", "''"
_SPACE = re.compile(r"\s+")


def _text(node: Node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _is_statement(node: Node) -> bool:
    return node.type in STATEMENTS


# ---------------------------------------------------------------- what is live


def _reads(node: Node, out: set[str]) -> set[str]:
    """Identifiers ``node`` reads (a declared name, a function's own name and the plain
    target of ``=`` are not reads)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "shorthand_property_identifier"):
            parent = n.parent
            declared = parent is not None and (
                (parent.type == "variable_declarator" and parent.child_by_field_name("name") == n)
                or (parent.type in ("function_declaration", "generator_function_declaration",
                                    "class_declaration")
                    and parent.child_by_field_name("name") == n)
                or (parent.type == "assignment_expression"
                    and parent.child_by_field_name("left") == n))
            if not declared:
                out.add(_text(n))
        stack.extend(n.children)
    return out


def _declared_name(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    return _text(name) if name is not None and name.type == "identifier" else None


def live_names(root: Node) -> set[str]:
    """The names the live code reads: p5's callbacks and every top-level statement that is
    not a declaration are live; a top-level function or variable is live once live code
    reads it (to a fixed point)."""
    named: dict[str, list[Node]] = {}
    always: list[Node] = []
    for stmt in root.named_children:
        if stmt.type in ("function_declaration", "generator_function_declaration",
                         "class_declaration"):
            name = _declared_name(stmt)
            if name is None or name in ENTRY_POINTS:
                always.append(stmt)
            else:
                named.setdefault(name, []).append(stmt)
        elif stmt.type in ("lexical_declaration", "variable_declaration"):
            for decl in stmt.named_children:
                name = _declared_name(decl) if decl.type == "variable_declarator" else None
                if name is None:
                    always.append(decl)
                else:
                    named.setdefault(name, []).append(decl)
        elif stmt.type != "comment":
            always.append(stmt)
    reads: set[str] = set(ENTRY_POINTS)
    for node in always:
        _reads(node, reads)
    done: set[str] = set()
    while True:
        todo = [n for n in named if n in reads and n not in done]
        if not todo:
            return reads
        for name in todo:
            done.add(name)
            for node in named[name]:
                _reads(node, reads)


# ---------------------------------------------------------------- units and shapes


class _Counter:
    def __init__(self, code: str) -> None:
        self.root = parse(code).root_node
        self.live = live_names(self.root)
        self.seen: set[tuple[str, ...]] = set()
        self.out: list[str] = []

    # ------------------------------------------------------------ statements
    def block(self, statements: list[Node]) -> None:
        for stmt in statements:
            if stmt.type == "comment":
                continue
            self.statement(stmt)
            if stmt.type in JUMPS:
                return  # what follows in this block never runs

    def statement(self, node: Node) -> None:
        if node.type == "statement_block":
            self.block(node.named_children)
            return
        if node.type in ("function_declaration", "generator_function_declaration",
                         "class_declaration"):
            name = _declared_name(node)
            if name is not None and name not in self.live:
                return
        if node.type in ("lexical_declaration", "variable_declaration"):
            declarators = [d for d in node.named_children if d.type == "variable_declarator"]
            if declarators and all(_declared_name(d) not in self.live for d in declarators
                                   if _declared_name(d) is not None) \
                    and all(_declared_name(d) is not None for d in declarators):
                return
        if node.type == "expression_statement" and node.named_children:
            expr = node.named_children[0]
            if expr.type == "assignment_expression":
                left = expr.child_by_field_name("left")
                if left is not None and left.type == "identifier" \
                        and _text(left) not in self.live:
                    return
        if node.type in ("if_statement", "while_statement", "for_statement", "do_statement"):
            decided = self._constant(node)
            if decided is not None:
                if node.type == "if_statement":
                    if decided:
                        self.statement(node.child_by_field_name("consequence"))
                    else:
                        alternative = node.child_by_field_name("alternative")
                        if alternative is not None:
                            self.block(alternative.named_children)
                    return
                if not decided and node.type != "do_statement":
                    return  # the body never runs
        pending: list[Node] = []
        tokens = list(self.tokens(node, pending, top=True))
        shape = tuple(s for s, _ in tokens)
        if shape not in self.seen:
            self.seen.add(shape)
            self.out.extend(t for _, t in tokens)
        for child in pending:
            if child.type in ("else_clause", "switch_body", "switch_case", "switch_default",
                              "class_body", "finally_clause", "catch_clause"):
                self._inner(child)
            else:
                self.statement(child)

    def _inner(self, node: Node) -> None:
        """The statements inside a clause (else, case, class body, catch, finally)."""
        pending: list[Node] = []
        for child in node.named_children:
            if _is_statement(child):
                self.statement(child)
            elif child.type in ("switch_case", "switch_default", "method_definition",
                                "field_definition"):
                tokens = list(self.tokens(child, pending, top=True))
                shape = tuple(s for s, _ in tokens)
                if shape not in self.seen:
                    self.seen.add(shape)
                    self.out.extend(t for _, t in tokens)
        for child in pending:
            self.statement(child) if _is_statement(child) else self._inner(child)

    def _constant(self, node: Node) -> bool | None:
        """True / False when the statement's condition is a literal, else None."""
        cond = node.child_by_field_name("condition")
        if cond is None:
            return None
        inner = cond
        while inner.type in ("parenthesized_expression", "expression_statement") \
                and inner.named_children:
            inner = inner.named_children[0]
        text = _SPACE.sub("", _text(inner))
        if text in FALSY:
            return False
        if text in TRUTHY and node.type == "if_statement":
            return True
        return None

    # ------------------------------------------------------------ tokens of one unit
    def tokens(self, node: Node, pending: list[Node], top: bool = False
               ) -> Iterator[tuple[str, str]]:
        """(shape, text) tokens of ``node``; nested statements and clauses go to
        ``pending`` (a placeholder stays)."""
        kind = node.type
        if kind == "comment":
            return
        if not top and (_is_statement(node) or kind in (
                "else_clause", "switch_body", "class_body", "finally_clause", "catch_clause")):
            pending.append(node)
            yield ("{}", "{}") if kind in ("statement_block", "switch_body", "class_body") \
                else ("<stmt>", "")
            return
        if kind == "number":
            yield _NUMBER, _text(node)
            return
        if kind == "unary_expression" and node.child_count == 2 \
                and node.children[0].type in ("-", "+") and node.children[1].type == "number":
            yield _NUMBER, _text(node)
            return
        if kind == "string":
            content = _text(node)[1:-1]
            yield _STRING, _text(node) if COLOUR.fullmatch(content) else _STRING
            return
        if kind == "template_string":
            yield "`", "`"
            for child in node.named_children:
                if child.type == "template_substitution":
                    yield from self.tokens(child, pending)
            yield "`", "`"
            return
        if kind == "variable_declarator":
            name = _declared_name(node)
            if name is not None and name not in self.live:
                return
        if node.child_count == 0:
            text = _text(node)
            yield text, text
            return
        if kind in LISTS:
            yield from self._list(node, pending)
            return
        if kind == "binary_expression":
            yield from self._chain(node, pending)
            return
        for child in node.children:
            yield from self.tokens(child, pending)

    def _list(self, node: Node, pending: list[Node]) -> Iterator[tuple[str, str]]:
        items = [c for c in node.named_children if c.type != "comment"]
        opening, closing = node.children[0], node.children[-1]
        yield _text(opening), _text(opening)
        seen: dict[tuple[str, ...], int] = {}
        first = True
        for item in items:
            tokens = list(self.tokens(item, pending))
            shape = tuple(s for s, _ in tokens)
            seen[shape] = seen.get(shape, 0) + 1
            if seen[shape] > LIST_REPEATS:
                continue
            if not first:
                yield ",", ","
            first = False
            yield from tokens
        yield _text(closing), _text(closing)

    def _chain(self, node: Node, pending: list[Node]) -> Iterator[tuple[str, str]]:
        op = node.child_by_field_name("operator")
        operator = _text(op) if op is not None else ""
        operands: list[Node] = []
        stack = [node]
        while stack:  # flatten a left- or right-nested chain of one operator
            n = stack.pop()
            o = n.child_by_field_name("operator") if n.type == "binary_expression" else None
            if o is not None and _text(o) == operator:
                stack.append(n.child_by_field_name("right"))
                stack.append(n.child_by_field_name("left"))
            else:
                operands.append(n)
        seen: dict[tuple[str, ...], int] = {}
        first = True
        for operand in operands:
            tokens = list(self.tokens(operand, pending))
            shape = tuple(s for s, _ in tokens)
            seen[shape] = seen.get(shape, 0) + 1
            if seen[shape] > LIST_REPEATS:
                continue
            if not first:
                yield operator, operator
            first = False
            yield from tokens


def painting_code(code: str) -> str:
    """The code the length term counts (see the module docstring), minified: one space only
    between two word characters."""
    counter = _Counter(code)
    try:
        counter.block(counter.root.named_children)
    except RecursionError:  # nested past Python's stack: unreadable code counts nothing
        return ""
    out: list[str] = []
    for token in counter.out:
        if not token:
            continue
        if out and (out[-1][-1:].isalnum() or out[-1][-1:] in "_$") \
                and (token[:1].isalnum() or token[:1] in "_$"):
            out.append(" ")
        out.append(token)
    return "".join(out)


# ---------------------------------------------------------------- the term


def code_only(text: str) -> str:
    """``text`` without JavaScript comments, blank space collapsed (the old count's text;
    kept for the comparison in ``benchmarks/reward_robustness.py``)."""
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
    """The reply's length in tokens of the code that paints (its sketch through
    :func:`painting_code`), and how it was counted (``tokenizer`` or ``chars/4``)."""
    from watercolour.gates import extract_sketch

    sketch = extract_sketch(text).code
    text = painting_code(sketch if sketch is not None else text)
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
