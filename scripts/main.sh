#!/usr/bin/env bash
# The main job on the embedded defaults: render the example sketches into a gallery, then
# run the book as a pipeline (each chapter executed once, the HTML built from those notebooks).
# Outputs land in runs/main/, runs/book/ and _build/html/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh book,dev,train
export PATH="$PWD/.venv/bin:$PATH"
watercolour gallery --out runs/main/gallery
# The starter pool (procedural painter, offline critic, synthetic tiers); resumes if present.
watercolour pool build --out runs/main/pool --size "${WATERCOLOUR_POOL_SIZE:-96}"
watercolour pool info runs/main/pool
watercolour book run   # every chapter once (papermill), then the HTML from those notebooks
watercolour book check # every page in headless Chromium: figures, no error outputs, no JS errors
echo "main: gallery runs/main/gallery/index.html, pool runs/main/pool, book _build/html/index.html"
