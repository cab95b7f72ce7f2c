"""Regenerate the book's offline widget JavaScript from npm (``book/_widgets/package.json`` + lock).

Usage: ``python scripts/vendor_widgets.py`` (needs ``npm``). Installs the pinned packages into a
temporary folder (so no ``node_modules`` lands in the book) and copies into ``book/_widgets/``:

- ``embed-amd.js`` from ``@jupyter-widgets/html-manager`` (1.0.15 shipped with ipywidgets 8.1.9,
  widget protocol 2);
- the FontAwesome fonts it references (woff2 only: every browser the book targets takes woff2
  before the eot/woff/ttf/svg fallbacks). Its modules look for them beside their AMD module
  URLs, ``@jupyter-widgets/`` and ``@jupyter-widgets/html-manager/dist/`` under RequireJS's
  base URL, which ``require-config.js`` (hand-written, kept) sets to ``_static/``;
- ``require.js`` from ``requirejs``, which ``embed-amd.js`` needs;
- ``manifest.json`` with versions, licences and SHA-256 checksums.

``_config.yml`` lists ``book/_widgets`` in ``html_static_path`` and points
``nb_ipywidgets_js`` at these files, so the built book loads no widget script from a CDN.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "book" / "_widgets"
FONT_SUFFIXES = (".woff2",)
FONT_DIRS = ("@jupyter-widgets", "@jupyter-widgets/html-manager/dist")
"""Where, relative to RequireJS's base URL, the bundled modules request their fonts."""
KEEP = {"package.json", "package-lock.json", "require-config.js"}

# (package, file inside the package, vendored name)
FILES = [
    ("@jupyter-widgets/html-manager", "dist/embed-amd.js", "embed-amd.js"),
    ("@jupyter-widgets/html-manager", "dist/embed.js.LICENSE.txt", "embed-amd.THIRD-PARTY.txt"),
    ("requirejs", "require.js", "require.js"),
]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    if shutil.which("npm") is None:
        print("vendor_widgets: npm is not on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="watercolour-widgets-") as tmp:
        work = Path(tmp)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(WIDGETS / name, work / name)
        subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=work, check=True
        )
        modules = work / "node_modules"

        # Drop what an earlier run vendored; keep the pins and the hand-written config.
        for old in WIDGETS.iterdir():
            if old.is_dir() and old.name.startswith("@"):
                shutil.rmtree(old)
            elif old.is_file() and old.name not in KEEP:
                old.unlink()

        manifest: dict[str, dict[str, str]] = {}

        def vendor(package: str, inner: str, name: str) -> None:
            pkg_dir = modules / package
            meta = json.loads((pkg_dir / "package.json").read_text())
            (WIDGETS / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pkg_dir / inner, WIDGETS / name)
            digest = _sha256(WIDGETS / name)
            manifest[name] = {
                "package": package,
                "version": meta["version"],
                "license": str(meta.get("license", "")),
                "source": inner,
                "sha256": digest,
            }
            print(f"{name}: {package}@{meta['version']} sha256={digest[:16]}…")

        for package, inner, name in FILES:
            vendor(package, inner, name)

        # The FontAwesome fonts embed-amd.js refers to by hashed name.
        dist = modules / "@jupyter-widgets" / "html-manager" / "dist"
        embed = (dist / "embed-amd.js").read_text(encoding="utf-8")
        fonts = [f for f in sorted(dist.iterdir())
                 if f.suffix in FONT_SUFFIXES and re.search(re.escape(f.name), embed)]
        for folder in FONT_DIRS:
            for font in fonts:
                vendor("@jupyter-widgets/html-manager", f"dist/{font.name}",
                       f"{folder}/{font.name}")

    (WIDGETS / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
