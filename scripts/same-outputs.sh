#!/usr/bin/env bash
# Runs two agui-lens binaries over every fixture and says whether they answer the same:
# `check` (human and JSON), `fold` and `compact` at both levels, stdout, stderr and exit
# status, byte for byte. For refactors that must not change behaviour:
#
#   scripts/same-outputs.sh OLD_BINARY NEW_BINARY
#
# Exits 0 when every output is the same, 1 listing the first differences otherwise.
set -uo pipefail
old=$1
new=$2
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=0
differ=0
while IFS= read -r fixture; do
    for command in "check --color never" "check --format json" "fold" "compact" "compact --level snapshot"; do
        runs=$((runs + 1))
        # shellcheck disable=SC2086
        "$old" $command "$fixture" >"$work/old.out" 2>"$work/old.err"
        echo "exit $?" >>"$work/old.out"
        # shellcheck disable=SC2086
        "$new" $command "$fixture" >"$work/new.out" 2>"$work/new.err"
        echo "exit $?" >>"$work/new.out"
        if ! cmp -s "$work/old.out" "$work/new.out" || ! cmp -s "$work/old.err" "$work/new.err"; then
            differ=$((differ + 1))
            if [ "$differ" -le 10 ]; then
                echo "differs: $command $fixture"
                diff "$work/old.out" "$work/new.out" | head -5
                diff "$work/old.err" "$work/new.err" | head -5
            fi
        fi
    done
done < <(find fixtures -type f \( -name '*.jsonl' -o -name '*.sse' -o -name '*.json' \) \
    -not -path 'fixtures/fold-cases/*' -not -path 'fixtures/patch-cases/*' \
    -not -path 'fixtures/schema-cases/*' -not -path 'fixtures/verify-cases/*' | sort)
echo "$runs runs, $differ differing"
[ "$differ" -eq 0 ]
