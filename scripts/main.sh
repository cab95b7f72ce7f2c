#!/usr/bin/env bash
# The main job on the embedded defaults: render the example sketches into a gallery, build the
# starter pool, train the tiny painter a few GRPO steps, then run the book as a pipeline (each
# chapter executed once, the HTML built from those notebooks). Outputs land in runs/main/,
# runs/book/ and _build/html/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh book,dev,train
export PATH="$PWD/.venv/bin:$PATH"
watercolour gallery --out runs/main/gallery
# The starter pool (procedural painter, offline critic, synthetic tiers); resumes if present.
watercolour pool build --out runs/main/pool --size "${WATERCOLOUR_POOL_SIZE:-96}"
watercolour pool info runs/main/pool
# The training program end to end on the tiny-cpu recipe: the tiny painter (a ~4M-parameter
# Qwen3 built here, no download) gets its SFT warm start the first time (~20-30 min, cached
# under ~/.cache/watercolour), then three GRPO steps; then the analysis of the curve it wrote.
rm -rf runs/main/tiny-cpu
watercolour train --config tiny-cpu --max-steps 3 --n-episodes 3 --pool runs/main/pool --out runs/main/tiny-cpu
watercolour analyse runs/main/tiny-cpu/metrics.csv --rollouts runs/main/tiny-cpu/rollouts
watercolour book run   # every chapter once (papermill), then the HTML from those notebooks
watercolour book check # every page in headless Chromium: figures, no error outputs, no JS errors
echo "main: gallery runs/main/gallery/index.html, pool runs/main/pool, training runs/main/tiny-cpu, book _build/html/index.html"
