"""Regenerate the vendored browser libraries from npm (``js/package.json`` + lock file).

Usage: ``python scripts/vendor_js.py`` (needs ``npm``). Copies the pinned bundles and their
licences into ``src/watercolour/render/vendor/`` and rewrites ``manifest.json`` with versions
and SHA-256 checksums, which the renderer verifies when it loads them, and p5.brush's method
count, which the tests pin (review it in the diff when the version changes).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "js"
VENDOR = ROOT / "src" / "watercolour" / "render" / "vendor"

# (package, file inside the package, vendored name, licence file inside the package)
FILES = [
    ("p5", "lib/p5.min.js", "p5.min.js", "license.txt"),
    ("p5.brush", "dist/p5.brush.js", "p5.brush.js", "LICENSE.md"),
]


def main() -> int:
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=JS, check=True)
    VENDOR.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict[str, str | int]] = {}
    for package, inner, name, licence in FILES:
        pkg_dir = JS / "node_modules" / package
        version = json.loads((pkg_dir / "package.json").read_text())["version"]
        shutil.copyfile(pkg_dir / inner, VENDOR / name)
        shutil.copyfile(pkg_dir / licence, VENDOR / f"{package}.LICENSE.txt")
        digest = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
        manifest[name] = {"package": package, "version": version, "source": inner, "sha256": digest}
        if package == "p5.brush":
            manifest[name]["methods"] = _method_count((VENDOR / name).read_text(encoding="utf-8"))
        print(f"{name}: {package}@{version} sha256={digest}")
    (VENDOR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


def _method_count(code: str) -> int:
    """The bundle's methods, counted the way :func:`watercolour.render.brush.brush_methods`
    counts them."""
    sys.path.insert(0, str(ROOT / "src"))
    from watercolour.render.brush import methods_in

    return len(methods_in(code))


if __name__ == "__main__":
    sys.exit(main())
