#!/usr/bin/env bash
# How fold, compact and check grow on one long thread of an agent that mints the same ids in
# every run (txt-1, call_weather_1, ...): copies of a recording, one after another, as one
# thread. Each run answers tool calls whose ids an earlier run used, so the official reducer
# places every result after the first run's assistant.
#
#   bench/one-thread.sh [COPIES...]      default: 1000 2000 4000 8000
#
# Prints seconds and MB/s per command and size. Linear: MB/s stays flat as the copies grow.
# With ONE_THREAD_USERS=1 every run's input also sends a new user message, so later results
# are placed before a growing tail of messages.
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=("$@")
[ ${#COPIES[@]} -gt 0 ] || COPIES=(1000 2000 4000 8000)
BIN=target/release/agui-lens
cargo build --release --bin agui-lens >&2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SRC=fixtures/recordings/copilotkit-full.jsonl
printf '| copies | MB | command | s | MB/s |\n|---|---|---|---|---|\n'
for n in "${COPIES[@]}"; do
  python3 - "$SRC" "$n" "$TMP/s.jsonl" "${ONE_THREAD_USERS:-0}" <<'PY'
import json, sys
src, n, out, users = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
events = [json.loads(line) for line in open(src)]
with open(out, "w") as f:
    for i in range(n):
        for e in events:
            e = dict(e)
            if e["type"] in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR") and "runId" in e:
                e["runId"] = f"{e['runId']}-{i}"
            if e["type"] == "RUN_STARTED" and users:
                e["input"] = {"threadId": e["threadId"], "runId": e["runId"], "state": {},
                              "tools": [], "context": [], "forwardedProps": {},
                              "messages": [{"id": f"user-{i}", "role": "user", "content": f"turn {i}"}]}
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
PY
  bytes=$(stat -c %s "$TMP/s.jsonl")
  for cmd in fold compact check; do
    case $cmd in
      fold) args=(fold "$TMP/s.jsonl") ;;
      compact) args=(compact "$TMP/s.jsonl" -o "$TMP/out.jsonl") ;;
      check) args=(check "$TMP/s.jsonl" --format json) ;;
    esac
    start=$(date +%s.%N)
    "$BIN" "${args[@]}" >/dev/null 2>&1 || [ "$cmd" = check ]
    end=$(date +%s.%N)
    awk -v n="$n" -v b="$bytes" -v c="$cmd" -v s="$start" -v e="$end" \
      'BEGIN { t = e - s; printf "| %d | %.1f | %s | %.2f | %.1f |\n", n, b / 1e6, c, t, b / 1e6 / t }'
  done
done
