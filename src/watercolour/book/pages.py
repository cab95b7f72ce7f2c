"""Open a built book's pages in headless Chromium and report what a reader would meet: the
figures that show, widgets that render, error outputs of cells, JavaScript errors and requests
that left the book; and read each page's HTML for what shows the build machine rather than the
reader's world (:func:`read_page`): machine paths, Python warnings, tracebacks, raw progress
bars and code lines wider than the column.

Used by the tests (``tests/test_book_pipeline.py``, ``tests/test_book_pages.py``) and by
``watercolour book check``. Needs Playwright and a Chromium (the renderer's: Debian's, else
Playwright's).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

ERROR_OUTPUT = ".cell_output .traceback, .cell_output .output.error, .output.traceback"
"""Where myst-nb puts a cell's error (a traceback) in the page."""

_FIGURES_JS = """() => Array.from(document.querySelectorAll('main img, article img'))
  .filter(i => i.complete && i.naturalWidth > 0 && !i.closest('.navbar-brand')).length"""
_BROKEN_JS = """() => Array.from(document.querySelectorAll('main img, article img'))
  .filter(i => i.complete && i.naturalWidth === 0).map(i => i.getAttribute('src'))"""


MAX_CODE_LINE = 80
"""The widest code line a page may show, in characters: the column's width."""

MACHINE_ROOTS = ("home", "root", "tmp", "work", "workspace", "usr", "opt", "var", "mnt", "srv",
                 "private", "Users", "content", "scratch", "data", "nix", "build", "builds")
"""Top folders of an absolute path that names the build machine (a reader's run shows paths
relative to the book or the repository)."""

MACHINE_PATH = re.compile(
    r"(?<![\w.:/~-])/(?:" + "|".join(MACHINE_ROOTS) + r")/[^\s\"'<>`]+"
    # from the start of a word only: linear on a long word (a picture's base64)
    r"|(?<![^\s\"'<>`(])[^\s\"'<>`(]*\b(?:site|dist)-packages/[^\s\"'<>`]*"
    r"|(?<![\w])[A-Za-z]:\\[^\s\"'<>`]+")
"""An absolute path of the build machine: under one of :data:`MACHINE_ROOTS`, in an installed
package (``site-packages``), or on a Windows drive."""

PYTHON_WARNING = re.compile(r"\b[A-Z]\w*Warning: |^\s*warnings\.warn\(|^WARNING[:| ]"
                            r"|\] WARNING \| ", re.M)
"""A Python warning (``UserWarning: ...``) or a logger's warning line in a cell's output."""

TRACEBACK = re.compile(r"Traceback \(most recent call last\)")

PROGRESS_BAR = re.compile(r"\d{1,3}%\|[^|\n]{0,120}\|")
"""A tqdm bar drawn in text (``Loading weights: 100%|#####| 38/38``)."""

PROGRESS_MODELS = ("FloatProgressModel", "IntProgressModel")
"""Widget models of a progress bar (tqdm's notebook bar is an ``HBox`` holding one)."""


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
    machine_paths: list[str] = field(default_factory=list)
    """Absolute paths of the build machine the page shows (:data:`MACHINE_PATH`)."""
    warnings: list[str] = field(default_factory=list)
    """Output lines that are Python (or logger) warnings."""
    tracebacks: list[str] = field(default_factory=list)
    """Output lines that start a Python traceback."""
    progress_bars: list[str] = field(default_factory=list)
    """Raw progress-bar outputs: tqdm bars in text, ``<progress>`` elements, bar widgets."""
    long_code_lines: list[str] = field(default_factory=list)
    """Code lines wider than :data:`MAX_CODE_LINE` characters (cells and code blocks)."""

    @property
    def ok(self) -> bool:
        return not (self.broken_images or self.error_outputs or self.js_errors
                    or self.outside_requests or self.offences())

    def offences(self) -> list[str]:
        """What the page shows of the build machine, one line per kind, naming the first."""
        kinds = (("machine path", "s", self.machine_paths),
                 ("Python warning", "s", self.warnings), ("traceback", "s", self.tracebacks),
                 ("raw progress bar", "s", self.progress_bars),
                 ("code line", f"s over {MAX_CODE_LINE} characters", self.long_code_lines))
        return [f"{len(found)} {name}{plural if len(found) > 1 else plural[1:]}, "
                f"e.g. {found[0]!r}" for name, plural, found in kinds if found]

    def problems(self) -> list[str]:
        """Every problem of the page, one line each (empty when it is ok)."""
        return (self.js_errors + [f"broken image {b}" for b in self.broken_images]
                + ([f"{self.error_outputs} error outputs"] if self.error_outputs else [])
                + [f"outside request {u}" for u in self.outside_requests] + self.offences())


def check_pages(html_dir: str | os.PathLike[str], pages: list[str] | None = None,
                settle_ms: int = 800, chromium: str | None = None) -> list[PageReport]:
    """Open each page (default: every ``.html`` under ``html_dir`` but search and index pages)
    offline in headless Chromium and report on it, with what its HTML shows of the build
    machine (:func:`read_page`)."""
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
    report = read_page((root / name).read_text(encoding="utf-8"), name)
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


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


class _PageText(HTMLParser):
    """The text of a page by where it shows: cell outputs, code (cells and code blocks, not
    outputs), everything else; the ``<progress>`` elements and widget views in outputs, and
    the page's widget state."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str], str]] = []  # tag, classes, script type
        self.outputs: list[str] = []
        self.code: list[str] = []
        self.other: list[str] = []
        self.text: list[str] = []
        self.progress = 0
        self.views: list[str] = []
        self.state: dict = {}

    def _inside(self, cls: str) -> bool:
        return any(cls in classes for _, classes, _ in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = set((found.get("class") or "").split())
        if tag == "progress" and self._inside("cell_output"):
            self.progress += 1
        if tag in _VOID:
            return
        self.stack.append((tag, classes, found.get("type") or ""))
        if tag == "pre":  # a new block: its text starts on a line of its own
            self._block().append("")

    def _block(self) -> list[str]:
        """Where the text of the ``<pre>`` being read goes: a cell's output, the book's code
        (a cell's input or a code block: Pygments' ``highlight`` containers), or neither (a
        page's own ``<pre>``, such as a gallery's sketches)."""
        if self._inside("cell_output"):
            return self.outputs
        code = any(c.startswith("highlight") for _, classes, _ in self.stack for c in classes)
        return self.code if code else self.other

    def handle_endtag(self, tag: str) -> None:
        for at in range(len(self.stack) - 1, -1, -1):
            if self.stack[at][0] == tag:
                del self.stack[at:]
                return

    def handle_data(self, data: str) -> None:
        script = next((kind for tag, _, kind in reversed(self.stack)
                       if tag in ("script", "style")), None)
        if script is not None:
            if script.endswith("widget-view+json") and self._inside("cell_output"):
                self.views.append(_json(data).get("model_id", ""))
            elif script.endswith("widget-state+json"):
                self.state = _json(data).get("state", {})
            return
        if any(tag == "pre" for tag, _, _ in self.stack):
            self._block()[-1] += data
        elif self._inside("cell_output"):
            self.outputs.append(data)
        self.text.append(data)

    def widget_texts(self) -> list[str]:
        """The text the page's widgets show (labels, values, descriptions), pictures left
        out (``data:`` URIs)."""
        return [re.sub(r"data:[^\s\"'<>]+", "", value)
                for model in self.state.values() if isinstance(model, dict)
                for key in ("value", "description", "placeholder", "tooltip")
                if isinstance(value := model.get("state", {}).get(key), str)]

    def shows_progress(self, model_id: str, depth: int = 0) -> bool:
        """A widget that is, or holds, a progress bar (tqdm's notebook bar)."""
        model = self.state.get(model_id, {})
        if model.get("model_name") in PROGRESS_MODELS or depth > 8:
            return model.get("model_name") in PROGRESS_MODELS
        children = model.get("state", {}).get("children", [])
        return any(self.shows_progress(str(c).removeprefix("IPY_MODEL_"), depth + 1)
                   for c in children)


def read_page(html: str, page: str = "") -> PageReport:
    """What a page's HTML shows of the build machine rather than the reader's world: machine
    paths (anywhere in its text), Python warnings, tracebacks and raw progress bars (in cell
    outputs), code lines over :data:`MAX_CODE_LINE` characters (code cells and code blocks).
    Fast: no browser."""
    parsed = _PageText()
    parsed.feed(html)
    parsed.close()
    report = PageReport(page=page)
    shown = parsed.text + parsed.widget_texts()  # a widget's text shows once it renders
    report.machine_paths = _unique(m.group(0) for t in shown for m in MACHINE_PATH.finditer(t))
    lines = [line for block in parsed.outputs for line in block.splitlines()]
    report.warnings = _unique(line.strip() for line in lines if PYTHON_WARNING.search(line))
    report.tracebacks = _unique(line.strip() for line in lines if TRACEBACK.search(line))
    report.progress_bars = _unique(line.strip() for line in lines if PROGRESS_BAR.search(line))
    report.progress_bars += ["<progress> element"] * parsed.progress + [
        f"progress-bar widget {v}" for v in parsed.views if parsed.shows_progress(v)]
    report.long_code_lines = [line for block in parsed.code for line in block.splitlines()
                              if len(line.rstrip()) > MAX_CODE_LINE]
    return report


def _unique(items) -> list[str]:
    return list(dict.fromkeys(items))


def _json(text: str) -> dict:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
