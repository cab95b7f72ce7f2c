"""Where a reader opens a chapter on Colab, and what its install cell installs.

The repository's URL is declared once, in ``pyproject.toml`` (``[project.urls] Repository``).
The pipeline gives every chapter that declares a ``package`` parameter the pip requirement for
it (:func:`install_requirement`), so an executed notebook opened on Colab installs the package;
the built book's Colab badges point at the executed notebooks published with the HTML
(:func:`colab_url`: the book's ``gh-pages`` branch, where the HTML keeps each page's source
notebook under ``_sources/``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

COLAB = "https://colab.research.google.com/"
"""The badge target a chapter's source carries; the built book replaces it with the chapter's
own Colab URL."""

PAGES_BRANCH = "gh-pages"
"""The branch the built HTML (and so each page's executed notebook) is published on."""


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


def install_requirement(repository: str, extra: str = "book") -> str:
    """What a chapter's install cell gives pip: the package with ``extra``, from the repository."""
    return f"watercolour[{extra}] @ git+{repository}"


def colab_url(repository: str, page: str) -> str:
    """The Colab URL of a built page's notebook (``page``: ``notebooks/09_rollouts.ipynb``) for
    a GitHub repository URL."""
    found = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?$", repository)
    if found is None:
        raise ValueError(f"not a GitHub repository URL: {repository}")
    owner, name = found.groups()
    return f"{COLAB}github/{owner}/{name}/blob/{PAGES_BRANCH}/_sources/{page}"
