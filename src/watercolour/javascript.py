"""The JavaScript parser (tree-sitter with its JavaScript grammar), loaded once."""

from __future__ import annotations

from functools import cache

import tree_sitter
import tree_sitter_javascript


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))


def parse(code: str) -> tree_sitter.Tree:
    """Parse JavaScript; tree-sitter never raises: broken input yields ERROR / MISSING nodes."""
    return _parser().parse(code.encode("utf-8"))


def text(node: tree_sitter.Node | None) -> str:
    return "" if node is None else node.text.decode("utf-8", errors="replace")
