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
# The training program end to end on the placeholder recipe (a tiny random Qwen3 built here,
# no download; it does not learn yet: the tiny painter's warm start is its own issue), then the
# analysis of the curve it wrote.
rm -rf runs/main/tiny-cpu
# the tiny painter: its warm start is built the first time (~10 min, cached), then GRPO steps
watercolour train --config tiny-cpu --max-steps 3 --n-episodes 3 --pool runs/main/pool --out runs/main/tiny-cpu
watercolour analyse runs/main/tiny-cpu/metrics.csv --rollouts runs/main/tiny-cpu/rollouts
watercolour book run   # every chapter once (papermill), then the HTML from those notebooks
watercolour book check # every page in headless Chromium: figures, no error outputs, no JS errors
echo "main: gallery runs/main/gallery/index.html, pool runs/main/pool, training runs/main/tiny-cpu, book _build/html/index.html"
