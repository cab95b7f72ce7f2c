"""Where a reader opens a chapter on Colab, and where its install cell installs from.

The repository's URL is declared once, in ``pyproject.toml`` (``[project.urls] Repository``).
From it:

- :func:`package_source`: what a chapter's ``package`` parameter holds, the package's source
  without extras (``git+https://github.com/OWNER/NAME``); each chapter's install cell adds the
  extras it imports (:mod:`watercolour.reader.install`);
- :func:`colab_url`: a chapter's Colab badge. Colab opens ``.ipynb`` files from a GitHub
  repository, so the workflow ``.github/workflows/book.yml`` publishes every chapter as a
  notebook without outputs (:func:`export_notebooks`) on the :data:`NOTEBOOKS_BRANCH` branch,
  under :data:`NOTEBOOKS_FOLDER`, and the badge names that file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from watercolour.book.notebook_pages import is_notebook_page, relink

COLAB = "https://colab.research.google.com/"
"""The badge target a chapter's source carries; the built book and the exported notebooks
replace it with the chapter's own Colab URL."""

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
"""Colab's own badge, for notebooks read outside the book (the book ships a copy)."""

NOTEBOOKS_BRANCH = "notebooks"
"""The branch the workflow publishes the chapters' notebooks on."""

NOTEBOOKS_FOLDER = "notebooks"
"""Their folder on that branch: ``notebooks/01_the_medium.ipynb``."""


def repository_url(root: str | os.PathLike[str]) -> str | None:
    """The ``Repository`` URL in ``root/pyproject.toml``; ``None`` when none is declared."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None
    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return None
    urls = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    url = urls.get("Repository")
    return str(url).rstrip("/") if url else None


def package_source(repository: str) -> str:
    """A chapter's ``package``: the package from the repository, without extras."""
    return f"git+{repository}"


def install_requirement(repository: str, extra: str = "book") -> str:
    """The pip requirement for the package with one ``extra``, from the repository."""
    from watercolour.reader.install import requirement

    return requirement(package_source(repository), [extra] if extra else [])


def _owner_name(repository: str) -> tuple[str, str]:
    found = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?$", repository)
    if found is None:
        raise ValueError(f"not a GitHub repository URL: {repository}")
    return found.group(1), found.group(2)


def published_path(chapter: str) -> str:
    """Where a chapter's notebook lies on :data:`NOTEBOOKS_BRANCH` (``chapter``: its stem or
    its path in the repository, ``notebooks/01_the_medium.md``)."""
    return f"{NOTEBOOKS_FOLDER}/{Path(chapter).stem}.ipynb"


def colab_url(repository: str, chapter: str) -> str:
    """The Colab URL of a chapter's published notebook, for a GitHub repository URL."""
    owner, name = _owner_name(repository)
    return f"{COLAB}github/{owner}/{name}/blob/{NOTEBOOKS_BRANCH}/{published_path(chapter)}"


def point_badge(text: str, url: str) -> str:
    """A Markdown cell's Colab badge (a link to :data:`COLAB`) -> ``url``."""
    return text.replace(f"]({COLAB})", f"]({url})")


def export_notebooks(root: str | os.PathLike[str], out: str | os.PathLike[str],
                     repository: str | None = None) -> list[Path]:
    """Every chapter of the book at ``root`` as an ``.ipynb`` without outputs, under
    ``out/notebooks/`` (the layout of :data:`NOTEBOOKS_BRANCH`), ready for Colab: its badge
    names itself (Colab's badge image, not the book's relative copy), and its ``package``
    parameter defaults to the repository (:func:`package_source`), so *Run all* installs what
    the chapter needs. Returns the files written."""
    import nbformat

    from watercolour import notebooks

    base = Path(root)
    repository = repository or repository_url(base)
    if not repository:
        raise ValueError(f"{base / 'pyproject.toml'} declares no [project.urls] Repository")
    folder = Path(out) / NOTEBOOKS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    chapters = notebooks.list_chapters(base)
    stems = {c.path.stem for c in chapters if is_notebook_page(c.path)}
    for chapter in chapters:
        if not is_notebook_page(chapter.path):
            continue
        nb = notebooks.read_notebook(chapter.path)
        url = colab_url(repository, chapter.path.name)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                text = relink(point_badge(cell.source, url), stems)
                cell.source = re.sub(r"\]\((?:\.\./)*book/images/colab-badge\.svg\)",
                                     f"]({BADGE_IMAGE})", text)
            elif cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
                if "parameters" in cell.metadata.get("tags", []):
                    cell.source = re.sub(r'^package = ""',
                                         f"package = {json.dumps(package_source(repository))}",
                                         cell.source, flags=re.M)
        nb.metadata.pop("jupytext", None)
        nb.metadata["colab"] = {"provenance": []}
        target = folder / f"{chapter.path.stem}.ipynb"
        nbformat.write(nb, str(target))
        written.append(target)
    return written
