"""A Sphinx extension for the book: each page loads each script once.

Sphinx 7.4 lists a script that an extension adds *after* the HTML builder started (as
sphinx-thebe and sphinx-togglebutton do, at ``builder-inited`` / ``env-before-read-docs``)
twice: once as added (``filename=None``) and again when the builder re-reads its registry
before writing (``filename=''``); the two compare unequal, so both land in the page. For
sphinx-thebe's inline ``const THEBE_JS_URL = ...`` the second copy is a JavaScript error on
every page: ``Identifier 'THEBE_JS_URL' has already been declared``. This extension drops the
repeats from each page's script list. Enabled in ``_config.yml`` (``sphinx.extra_extensions``).
"""

from __future__ import annotations

from typing import Any


def _key(script: Any) -> tuple:
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), getattr(script, "priority", 500),
            tuple(sorted((k, str(v)) for k, v in attributes.items())))


def unique_scripts(scripts: list[Any]) -> list[Any]:
    """``scripts`` with every repeat of an earlier entry (same file or inline body, priority
    and attributes) left out, in their order."""
    seen: set[tuple] = set()
    kept = []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _dedupe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = unique_scripts(scripts)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _dedupe, priority=900)  # after others add theirs
    return {"parallel_read_safe": True, "parallel_write_safe": True}
