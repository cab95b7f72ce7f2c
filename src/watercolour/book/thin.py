"""How thin the chapters are: code lines against prose lines, the visible code cells longer
than :data:`MAX_VISIBLE_CELL` lines, and the visible code lines wider than the page's column
(:data:`watercolour.book.pages.MAX_CODE_LINE`; the book's target: code <= prose, none over).

    python -m watercolour.book.thin            # a table per chapter and the totals
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from watercolour.book.pages import MAX_CODE_LINE

MAX_VISIBLE_CELL = 15
HIDDEN_TAGS = ("remove-cell", "remove-input")
"""Tags that take a cell's code off the page (``hide-input`` only folds it: still visible)."""


@dataclass
class ChapterLines:
    """Non-blank lines of one MyST text notebook (front matter and cell options not counted)."""

    name: str
    code: int = 0
    prose: int = 0
    long_cells: list[int] = field(default_factory=list)
    """The line counts of visible code cells over :data:`MAX_VISIBLE_CELL`."""
    wide_lines: list[str] = field(default_factory=list)
    """Visible code lines over :data:`~watercolour.book.pages.MAX_CODE_LINE` characters."""


def count_lines(path: str | Path) -> ChapterLines:
    """Count a chapter's code and prose lines."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        start = lines.index("---", 1) + 1
    counted = ChapterLines(path.stem)
    cell: list[str] | None = None
    for line in lines[start:]:
        if cell is None:
            if line.startswith("```{code-cell}"):
                cell = []
            elif line.strip():
                counted.prose += 1
            continue
        if line.startswith("```"):
            body = [c for c in cell if c.strip() and not c.startswith(":")]
            tags = " ".join(c for c in cell if c.startswith(":tags:"))
            counted.code += len(body)
            if not any(t in tags for t in HIDDEN_TAGS):
                if len(body) > MAX_VISIBLE_CELL:
                    counted.long_cells.append(len(body))
                counted.wide_lines += [c for c in body if len(c.rstrip()) > MAX_CODE_LINE]
            cell = None
        else:
            cell.append(line)
    return counted


def count_book(folder: str | Path = "notebooks") -> list[ChapterLines]:
    """Every chapter under ``folder`` (``*.md``), in file order."""
    return [count_lines(p) for p in sorted(Path(folder).glob("*.md"))]


def main(argv: list[str] | None = None) -> int:
    folder = (argv if argv is not None else sys.argv[1:]) or ["notebooks"]
    chapters = count_book(folder[0])
    for c in chapters:
        print(f"{c.name:32} code {c.code:4}  prose {c.prose:4}  long cells {c.long_cells}  "
              f"wide lines {len(c.wide_lines)}")
    code, prose = sum(c.code for c in chapters), sum(c.prose for c in chapters)
    print(f"{'total':32} code {code:4}  prose {prose:4}  "
          f"long cells {sum(len(c.long_cells) for c in chapters)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
