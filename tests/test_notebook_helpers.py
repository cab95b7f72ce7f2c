"""The chapters' small helpers: Markdown tables and thumbnails."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from watercolour.notebooks import markdown_table, thumbnail


def test_markdown_table_escapes_and_cuts_cells():
    text = markdown_table(["a", "b"], [(1, "x|y\nz"), (2, "a long cell")], limit=6)
    assert text.splitlines() == ["| a | b |", "|---|---|", "| 1 | x\\|y z |", "| 2 | a lon… |"]
    with pytest.raises(ValueError, match="a row has 1 cells, the header 2"):
        markdown_table(["a", "b"], [(1,)])


def test_thumbnail_fits_the_box_and_keeps_the_aspect():
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((100, 400, 3), dtype=np.uint8)).save(buffer, format="PNG")
    small = Image.open(io.BytesIO(thumbnail(buffer.getvalue(), 80)))
    assert small.format == "PNG" and small.size == (80, 20)
    same = Image.open(io.BytesIO(thumbnail(buffer.getvalue(), 1000)))
    assert same.size == (400, 100)  # never enlarged
