#!/usr/bin/env bash
# Builds the Python package (python/) into a fresh venv under target/ and runs its tests.
#
#   python/run-tests.sh [PYTEST ARGS...]
#
# The venv is made anew each run (target/python-venv), from PyPI, with pinned versions:
# maturin to build the wheel, pytest, and for the in-process agent test the pydantic-ai
# peer's packages (the versions crates/agui-lens/tests/peers/pydantic-ai/setup.sh pins) and
# httpx, which Starlette's TestClient needs; for agui_lens.distributed, Dask distributed and
# fsspec (its tests start a local cluster of two worker processes). The wheel is a debug build (no optimisation of
# our crates; dependencies are built at opt-level 2 as in every dev build): it shares
# target/debug's compiled dependencies with `cargo test`, so CI compiles little for it (the
# wheel is built for python/ alone, so python/Cargo.toml asks for the features the rest of the
# workspace enables; a dependency compiled again by the wheel's build shows as a `Compiling`
# line in `maturin build`'s output after `cargo test`, and `cargo tree -e features -i CRATE`
# says who enables what). The CLI the tests compare against is target/debug/agui-lens, built
# here if missing, and the histories of the distributed test come from the generator example,
# built here too.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
VENV="$TARGET/python-venv"
PYTHON="${PYTHON:-python3}"

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check \
  'maturin==1.16.0' 'pytest==9.0.3' 'httpx==0.28.1' \
  'pydantic-ai-slim[ag-ui]==2.68.0' 'ag-ui-protocol==1.0.0' 'starlette==1.10.0' \
  'dask[distributed]==2026.8.0' 'distributed==2026.8.0' 'fsspec==2026.9.0'

# The CLI and the generator as `cargo test` builds them (after it, nothing to do): a build of
# agui-lens alone would enable other features of its dependencies and compile them again.
cargo test -q --no-run --manifest-path "$ROOT/Cargo.toml"
rm -rf "$TARGET/wheels/agui_lens-"*
"$VENV/bin/maturin" build -q --manifest-path "$HERE/Cargo.toml" --out "$TARGET/wheels" \
  --interpreter "$VENV/bin/python"
"$VENV/bin/pip" install -q --disable-pip-version-check "$TARGET/wheels/"agui_lens-*.whl

cd "$HERE"
# `pytest`, not `python -m pytest`, which would put python/ first on sys.path and import the
# source folder agui_lens/ (which has no extension in it) instead of the installed wheel.
AGUI_LENS_BIN="$TARGET/debug/agui-lens" AGUI_LENS_GENERATE="$TARGET/debug/examples/generate" \
  "$VENV/bin/pytest" -q tests "$@"
