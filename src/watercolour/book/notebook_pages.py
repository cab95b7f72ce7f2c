"""Which of the book's pages are notebooks, and their links to each other once they are
``.ipynb``: a chapter lives in git as a MyST text notebook (``.md``) and becomes an ``.ipynb``
when it is executed (:mod:`watercolour.book.pipeline`) or exported for Colab
(:mod:`watercolour.book.colab`), so a link to a sibling chapter's ``.md`` must follow it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path


def is_notebook_page(path: Path) -> bool:
    """A MyST text notebook (has a ``{code-cell}``), as opposed to a prose page."""
    return path.suffix == ".md" and "```{code-cell}" in path.read_text(encoding="utf-8")


def relink(text: str, stems: Iterable[str]) -> str:
    """``text`` with each Markdown link to one of the chapters ``stems`` (``NAME.md``,
    ``NAME.md#anchor``) pointing at its notebook, ``NAME.ipynb``."""
    for stem in stems:
        text = re.sub(rf"(\]\([^)\s]*?\b{re.escape(stem)})\.md(?=[#)])", r"\1.ipynb", text)
    return text
