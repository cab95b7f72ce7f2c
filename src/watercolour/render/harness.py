"""The HTML page a sketch runs in."""

from __future__ import annotations

from functools import cache
from importlib import resources

from watercolour.render.vendor import libraries

LIB_PATH = "/__wc/lib/"
SKETCH_PATH = "/__wc/sketch.js"
BINDING = "__wcNotify"


@cache
def _harness_template() -> str:
    return resources.files("watercolour.render").joinpath("harness.js").read_text(encoding="utf-8")


def harness_script(seed: int, nonce: str) -> str:
    """The pre-library script for one render, with its seed and secret nonce filled in."""
    return (
        _harness_template()
        .replace("__WC_SEED__", str(int(seed) & 0xFFFFFFFF))
        .replace("__WC_NONCE__", nonce)
        .replace("__WC_BINDING__", BINDING)
    )


def page_html(seed: int, nonce: str) -> str:
    """The document: harness, libraries (served from memory), add-on hook, then the sketch."""
    libs = "".join(f'<script src="{LIB_PATH}{lib.name}"></script>' for lib in libraries())
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<style>html,body{margin:0;padding:0;background:#fff;overflow:hidden}"
        "canvas{display:block}.loading-indicator{display:none!important}</style>"
        f"<script>{harness_script(seed, nonce)}</script>"
        f"{libs}"
        "<script>window.__wcInstallAddon&&window.__wcInstallAddon()</script>"
        f'<script src="{SKETCH_PATH}"></script>'
        "</head><body></body></html>"
    )
