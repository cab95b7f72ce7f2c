#!/usr/bin/env bash
# Start the HPSv3 scoring service in its own virtual environment.
#
#   bash start.sh                          # HPSv3 on the GPU, http://127.0.0.1:8765
#   HOST=0.0.0.0 PORT=9000 bash start.sh --device cuda:1
#   HPS_SCORER=stand-in bash start.sh      # no weights, no GPU: the stand-in formula
#
# The environment is created once at $HPS_VENV (default ~/.venvs/watercolour-hps) from
# requirements.txt. Stop the service with Ctrl-C (or kill its pid). Point the reward at it
# with WATERCOLOUR_HPS_URL=http://127.0.0.1:8765.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SCORER="${HPS_SCORER:-hpsv3}"
if [ "$SCORER" = "stand-in" ]; then
  PY="${PYTHON:-python3}"
else
  VENV="${HPS_VENV:-$HOME/.venvs/watercolour-hps}"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV (hpsv3 and its own transformers)" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --upgrade pip >&2
    "$VENV/bin/pip" install -r "$HERE/requirements.txt" >&2
  fi
  PY="$VENV/bin/python"
fi
exec "$PY" "$HERE/app.py" --scorer "$SCORER" --host "${HOST:-127.0.0.1}" \
  --port "${PORT:-8765}" "$@"
