#!/usr/bin/env bash
# The main job on the embedded defaults: render the example sketches into a gallery, then
# build the book (which executes its chapters). Outputs land in runs/main/ and _build/html/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh book,dev,train
export PATH="$PWD/.venv/bin:$PATH"
watercolour gallery --out runs/main/gallery
# The starter pool (procedural painter, offline critic, synthetic tiers); resumes if present.
watercolour pool build --out runs/main/pool --size "${WATERCOLOUR_POOL_SIZE:-96}"
watercolour pool info runs/main/pool
watercolour book build
echo "main: gallery runs/main/gallery/index.html, pool runs/main/pool, book _build/html/index.html"
