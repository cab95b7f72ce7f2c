#!/usr/bin/env bash
# The main job on the embedded defaults: render the example sketches into a gallery, then
# build the book (which executes its chapters). Outputs land in runs/main/ and _build/html/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh book,dev,train
export PATH="$PWD/.venv/bin:$PATH"
watercolour gallery --out runs/main/gallery
watercolour book build
echo "main: gallery at runs/main/gallery/index.html, book at _build/html/index.html"
