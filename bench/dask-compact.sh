#!/usr/bin/env bash
# Throughput of agui_lens.distributed.compact_tree on a local Dask cluster against
# `agui-lens compact` over the same tree, both release builds.
#
#   bench/dask-compact.sh            # 200 files, ~100 MB
#   BENCH_FILES=50 bench/dask-compact.sh
#   BENCH_WORKERS=2 bench/dask-compact.sh   # worker processes of the cluster (default 2)
#
# Builds the CLI and the generator (cargo build --release) and the wheel (maturin build
# --release) into a venv of its own (target/bench-dask-venv, pinned as python/run-tests.sh
# pins), writes the tree once under bench/data/dask-tree-<files>/ (gitignored; the generator
# is deterministic: mixed profile, seeds 1..N, sizes 250KB..750KB in turn, ~500KB each), then
# compacts it three ways, each into a fresh mirror: the CLI (`agui-lens compact TREE -o DIR/`,
# its threads on every core), compact_tree on a LocalCluster of BENCH_WORKERS worker
# processes with one thread each (the cluster's start is timed apart, not in the rate), and
# compact_tree with no client (this process, one file after another). Prints a markdown table
# and writes it to bench/results-dask-compact.md. MB are 10^6 bytes of the stored tree.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
FILES=${BENCH_FILES:-200}
WORKERS=${BENCH_WORKERS:-2}
VENV="$TARGET/bench-dask-venv"

cargo build -q --release --bin agui-lens --example generate >&2
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check 'maturin==1.16.0' \
  'dask[distributed]==2026.8.0' 'distributed==2026.8.0' 'fsspec==2026.9.0'
rm -rf "$TARGET/bench-wheels"
"$VENV/bin/maturin" build -q --release --manifest-path python/Cargo.toml \
  --out "$TARGET/bench-wheels" --interpreter "$VENV/bin/python" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps \
  "$TARGET/bench-wheels/"agui_lens-*.whl

TREE="$ROOT/bench/data/dask-tree-$FILES"
if [ ! -f "$TREE/.complete" ]; then
  rm -rf "$TREE"
  sizes=(250KB 500KB 750KB 500KB)
  for i in $(seq 1 "$FILES"); do
    dir="$TREE/part-$(( (i - 1) / 50 ))"
    mkdir -p "$dir"
    "$TARGET/release/examples/generate" --profile mixed --seed "$i" \
      --size "${sizes[$(( i % 4 ))]}" -o "$dir/history-$i.jsonl" 2>/dev/null
  done
  touch "$TREE/.complete"
fi

OUT="$(mktemp -d "${TMPDIR:-/tmp}/agui-lens-dask-bench.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

AGUI_LENS_BIN="$TARGET/release/agui-lens" TREE="$TREE" OUT="$OUT" WORKERS="$WORKERS" \
  COMMIT="$(git rev-parse --short HEAD)" "$VENV/bin/python" bench/dask-compact.py \
  | tee bench/results-dask-compact.md
