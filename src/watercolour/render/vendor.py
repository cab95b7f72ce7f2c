"""The vendored browser libraries (p5.js and p5.brush), checked against their manifest."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

LIBRARY_ORDER = ("p5.min.js", "p5.brush.js")


@dataclass(frozen=True)
class VendoredLibrary:
    """One JavaScript bundle shipped inside the package."""

    name: str
    package: str
    version: str
    sha256: str
    source: str

    @property
    def code(self) -> str:
        return _read_text(self.name)


def _vendor_dir() -> resources.abc.Traversable:
    return resources.files("watercolour.render").joinpath("vendor")


@cache
def _read_text(name: str) -> str:
    return _vendor_dir().joinpath(name).read_text(encoding="utf-8")


@cache
def manifest() -> dict[str, dict]:
    """``manifest.json``: per bundle its package, version, source, SHA-256 (and, for p5.brush,
    its method count)."""
    return json.loads(_vendor_dir().joinpath("manifest.json").read_text())


@cache
def libraries() -> tuple[VendoredLibrary, ...]:
    """The libraries in load order, each verified against its SHA-256 in ``manifest.json``."""
    libs = []
    for name in LIBRARY_ORDER:
        entry = manifest()[name]
        data = _vendor_dir().joinpath(name).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            raise RuntimeError(
                f"vendored {name} does not match its checksum ({digest} != {entry['sha256']}); "
                "regenerate it with scripts/vendor_js.py"
            )
        libs.append(VendoredLibrary(name=name, package=entry["package"],
                                    version=entry["version"], sha256=entry["sha256"],
                                    source=entry["source"]))
    return tuple(libs)


def versions() -> dict[str, str]:
    """``{"p5": "2.3.4", "p5.brush": "2.2.2"}``."""
    return {lib.package: lib.version for lib in libraries()}
