"""Open a built book's pages in headless Chromium and report what a reader would meet: the
figures that show, widgets that render, error outputs of cells, JavaScript errors and requests
that left the book.

Used by the tests (``tests/test_book_pages.py``) and by ``watercolour book check``. Needs
Playwright and a Chromium (the renderer's: Debian's, else Playwright's).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ERROR_OUTPUT = ".cell_output .traceback, .cell_output .output.error, .output.traceback"
"""Where myst-nb puts a cell's error (a traceback) in the page."""

_FIGURES_JS = """() => Array.from(document.querySelectorAll('main img, article img'))
  .filter(i => i.complete && i.naturalWidth > 0 && !i.closest('.navbar-brand')).length"""
_BROKEN_JS = """() => Array.from(document.querySelectorAll('main img, article img'))
  .filter(i => i.complete && i.naturalWidth === 0).map(i => i.getAttribute('src'))"""


@dataclass
class PageReport:
    """What one page showed in the browser."""

    page: str
    """The page's path under the HTML folder."""
    figures: int = 0
    """Images in the page's content that loaded (naturalWidth > 0)."""
    broken_images: list[str] = field(default_factory=list)
    widgets: int = 0
    """Widgets the page's embedded widget state rendered (``.jupyter-widgets`` views)."""
    error_outputs: int = 0
    """Cell outputs that are errors (tracebacks)."""
    js_errors: list[str] = field(default_factory=list)
    """Uncaught exceptions and ``console.error`` messages."""
    outside_requests: list[str] = field(default_factory=list)
    """Requests for anything but the book's own files (all blocked: the check runs offline)."""

    @property
    def ok(self) -> bool:
        return not (self.broken_images or self.error_outputs or self.js_errors
                    or self.outside_requests)


def check_pages(html_dir: str | os.PathLike[str], pages: list[str] | None = None,
                settle_ms: int = 800, chromium: str | None = None) -> list[PageReport]:
    """Open each page (default: every ``.html`` under ``html_dir`` but search and index pages)
    offline in headless Chromium and report on it."""
    from playwright.sync_api import sync_playwright

    from watercolour.render.browser import find_chromium

    root = Path(html_dir).resolve()
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"no built book in {root} (index.html missing)")
    names = pages if pages is not None else sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.html")
        if p.name not in {"search.html", "genindex.html"} and "_static" not in p.parts)
    reports = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium or find_chromium(),
                                    args=["--no-sandbox"])
        try:
            for name in names:
                reports.append(_check_page(browser, root, name, settle_ms))
        finally:
            browser.close()
    return reports


def _check_page(browser, root: Path, name: str, settle_ms: int) -> PageReport:
    report = PageReport(page=name)
    tab = browser.new_page()
    try:
        tab.on("pageerror", lambda err: report.js_errors.append(f"{err.name}: {err.message}"))
        tab.on("console", lambda msg: report.js_errors.append(f"console.error: {msg.text}")
               if msg.type == "error" else None)

        def _route(route) -> None:
            report.outside_requests.append(route.request.url)
            route.abort()

        tab.route("http*://**", _route)
        tab.goto((root / name).as_uri(), wait_until="load")
        tab.wait_for_timeout(settle_ms)
        report.figures = tab.evaluate(_FIGURES_JS)
        report.broken_images = tab.evaluate(_BROKEN_JS)
        report.error_outputs = tab.locator(ERROR_OUTPUT).count()
        report.widgets = tab.locator(".jupyter-widgets.widget-inline-hbox, .jupyter-widgets"
                                     ".widget-container, .jupyter-widgets.widget-box").count()
    finally:
        tab.close()
    # a blocked request also shows as a console error; keep it in one list only
    report.js_errors = [e for e in report.js_errors if "net::ERR_FAILED" not in e
                        or not report.outside_requests]
    return report
