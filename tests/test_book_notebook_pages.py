"""The book's notebook pages and their links once chapters are ``.ipynb``."""

from watercolour.book.notebook_pages import is_notebook_page, relink


def test_a_link_to_a_sibling_chapter_follows_it_to_its_notebook():
    text = ("See [the gates](03_gates.md), [its table](03_gates.md#table), "
            "[the intro](intro.md) and [a sketch](sketches/03_gates.md.txt).")
    assert relink(text, {"03_gates"}) == (
        "See [the gates](03_gates.ipynb), [its table](03_gates.ipynb#table), "
        "[the intro](intro.md) and [a sketch](sketches/03_gates.md.txt).")


def test_only_a_page_with_a_code_cell_is_a_notebook(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text("# A chapter\n\n```{code-cell} python\n1 + 1\n```\n", encoding="utf-8")
    prose = tmp_path / "intro.md"
    prose.write_text("# Intro\n\n```python\n1 + 1\n```\n", encoding="utf-8")
    script = tmp_path / "chapter.py"
    script.write_text("```{code-cell}", encoding="utf-8")
    assert is_notebook_page(chapter)
    assert not is_notebook_page(prose)
    assert not is_notebook_page(script)
