"""The chapters are thin: code lines at most prose lines across the book and in each chapter,
no visible code cell over 15 lines and no visible code line wider than the page's column
(``watercolour.book.thin``)."""

from __future__ import annotations

from pathlib import Path

from watercolour.book.pages import MAX_CODE_LINE
from watercolour.book.thin import MAX_VISIBLE_CELL, count_book, count_lines

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_every_chapter_has_no_more_code_than_prose_and_no_long_visible_cell():
    chapters = count_book(NOTEBOOKS)
    assert len(chapters) >= 8
    for c in chapters:
        assert c.code <= c.prose, f"{c.name}: {c.code} code lines, {c.prose} of prose"
        assert not c.long_cells, f"{c.name}: visible cells of {c.long_cells} lines"
        assert not c.wide_lines, f"{c.name}: code lines over the column: {c.wide_lines}"
    assert sum(c.code for c in chapters) <= sum(c.prose for c in chapters)


def test_the_count_sees_code_prose_tags_and_front_matter(tmp_path):
    long_cell = "\n".join(f"x{i} = {i}" for i in range(MAX_VISIBLE_CELL + 1))
    wide = "# " + "w" * (MAX_CODE_LINE - 1)  # one character over the column
    option = f":mystnb: {{figure: {{caption: '{'c' * MAX_CODE_LINE}'}}}}"  # options are not code
    page = tmp_path / "page.md"
    page.write_text("---\njupytext: {}\n---\n# Title\n\nOne line of prose.\n\n"
                    f"```{{code-cell}} ipython3\n:tags: [hide-input]\n{option}\n\n{long_cell}\n"
                    f"{wide}\n```\n\n"
                    f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{long_cell}\n{wide}\n"
                    "```\n")
    counted = count_lines(page)
    assert (counted.prose, counted.code) == (2, 2 * (MAX_VISIBLE_CELL + 2))
    assert counted.long_cells == [MAX_VISIBLE_CELL + 2]  # hide-input is still on the page
    assert counted.wide_lines == [wide]


def test_the_reward_chapter_reads_its_tables_from_the_rubric():
    from watercolour.book.chapters.rewards import robustness_table, rubric_table
    from watercolour.rewards.rubric import RUBRIC

    table = rubric_table()
    assert all(f"`{c.name}`" in table for c in RUBRIC)
    assert "`WATERCOLOUR_PIGMENT_WEIGHT`" in table
    assert "reward_robustness.py" in robustness_table(None)
    row = {"reward": 0.5}
    made = robustness_table({"before": None, "after": {
        "families": {"stripes": row}, "example": row, "love_median": 0.7}})
    assert "| stripes | - | 0.5 |" in made
