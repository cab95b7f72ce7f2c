#!/usr/bin/env bash
# Install what the tests need, lint, and run the whole test suite (real browsers, no mocks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh book,dev,train
export PATH="$PWD/.venv/bin:$PATH"
ruff check src tests benchmarks scripts
python -m pytest "$@"
