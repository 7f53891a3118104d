#!/usr/bin/env bash
# Creates the Python environment the pydantic-ai peer runs in, once, and prints its python.
#
#   crates/agui-lens/tests/peers/pydantic-ai/setup.sh [VENV]     (default: target/peers/pydantic-ai-venv)
#
# The packages are pinned to what ../shared/peers/pydantic-ai/serve.sh installs. Only PyPI is
# contacted, and only when the environment is missing or incomplete; a second run is instant.
# The environment lives under target/, so `cargo clean` removes it and git never sees it.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../../../.." && pwd)"
VENV="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/peers/pydantic-ai-venv}"
PYTHON="${PYTHON:-python3}"
ready() { "$VENV/bin/python" -c 'import pydantic_ai.ui.ag_ui, uvicorn, starlette' 2>/dev/null; }
if ! ready; then
  mkdir -p "$(dirname "$VENV")"
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q \
    'pydantic-ai-slim[ag-ui]==2.68.0' 'ag-ui-protocol==1.0.0' 'starlette==1.10.0' 'uvicorn==0.54.0' >&2
  ready || { echo "setup.sh: $VENV was installed but cannot import the peer's packages" >&2; exit 1; }
fi
echo "$VENV/bin/python"
